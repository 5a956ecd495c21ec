"""Check your exercises before you hand them in: the course's visible checks, on your own machine.

    python check.py                 # every exercise
    python check.py attention       # one exercise (or several)
    python check.py --watch         # check an exercise again each time you save its file

Each check calls your functions on the inputs kept in check_data/ and compares what they
return with the answers kept there, or tests the property the check is about (check_properties.py,
the grader's own code for it), and says what is wrong. Your code runs in a separate
Python process (check_child.py), so a function that never returns is stopped after a time limit. What differs
and the known mistakes are told by check_answers.py, beside this file. When your
answer is one a known mistake gives, the hint names the mistake. Hidden checks and the values
of your hand computation are graded after you hand in; a check here passing is no promise of
full marks there. Needs numpy (and torch, matplotlib where an exercise uses them); nothing else.
"""

from __future__ import annotations

import json
import os
import sys
import tempfile
import threading
import time
from pathlib import Path

# numpy is imported only once a child has started (comparisons_ahead()): a child that imports torch,
# the longest to start, does not wait the tenth of a second numpy takes here first.
HERE = Path(__file__).resolve().parent
if not __package__:          # run as check.py: its modules lie beside it (put on the path even under -I)
    sys.path.insert(0, str(HERE))
DATA = HERE / "check_data"
FORMAT = 2                    # of check_data/*.json; a checker reads only the format it was written for
EVENT = "@@check "            # the child's lines to the checker start with this; your prints go to stderr


# ---------------------------------------------------------------- the data of one exercise, your file

def load_spec(stem: str) -> dict:
    """check_data/<stem>.json: the checks (their arrays are in check_data/<stem>.npz)."""
    spec = json.loads((DATA / f"{stem}.json").read_text(encoding="utf-8"))
    if spec.get("format") != FORMAT:
        raise SystemExit(f"check_data/{stem}.json has format {spec.get('format')}; this check.py reads "
                         f"format {FORMAT}: use the check.py that came with it")
    return spec


def load_arrays(stem: str) -> ArraysOnDemand:
    """check_data/<stem>.npz, each array read when first asked for."""
    return ArraysOnDemand(DATA / f"{stem}.npz")


class ArraysOnDemand(dict):
    """An .npz file's arrays by name, each read (without pickle) the first time it is asked for: a
    check uses a few of the hundreds kept for its exercise (the known mistakes' answers only when
    yours is wrong), and reading them all took about 20 ms in the child and again here."""

    def __init__(self, path: Path):
        super().__init__()
        self.path, self.archive = path, None

    def __missing__(self, key: str):
        if self.archive is None:
            import numpy as np

            self.archive = np.load(self.path, allow_pickle=False)
        self[key] = self.archive[key]
        return self[key]

    def close(self) -> None:
        if self.archive is not None:
            self.archive.close()


def read_npz(path: Path) -> dict:
    """An .npz file's arrays by name, read without pickle."""
    import numpy as np

    with np.load(path, allow_pickle=False) as arrays:
        return {key: arrays[key] for key in arrays.files}


def comparisons():
    """check_answers and check_properties (the comparisons with answers, the properties tested with code)."""
    if __package__:
        from . import check_answers, check_properties
    else:
        import check_answers
        import check_properties
    return check_answers, check_properties


def causes_module():
    """check_causes: the failed checks grouped by cause, as the grader's pages group them."""
    if __package__:
        from . import check_causes
    else:
        import check_causes
    return check_causes


def comparisons_ahead() -> None:
    """comparisons() (and numpy) imported beside a running child; an error is met again when judging,
    and said then."""
    try:
        comparisons()
    except Exception:  # noqa: BLE001, S110
        pass


def source_of(path: Path) -> str:
    """A .py file's text, or a notebook's code cells (IPython's % and ! lines left out)."""
    text = path.read_text(encoding="utf-8-sig")
    if path.suffix != ".ipynb":
        return text
    cells = []
    for cell in json.loads(text).get("cells", []):
        meta = cell.get("metadata", {}).get("nbgrader", {})
        if cell.get("cell_type") != "code" or (meta.get("grade") and not meta.get("solution")):
            continue                 # a test cell runs this checker; it is not your code
        source = "".join(cell.get("source", []))
        if source.lstrip().startswith("%%"):
            continue
        cells.append("\n".join("pass" if line.lstrip().startswith(("%", "!")) else line
                               for line in source.splitlines()))
    return "\n\n".join(cells) + "\n"


# ---------------------------------------------------------------- the checker: runs the child, compares


def run_child(path: Path, spec: dict, todo: list[str], out_dir: Path, yielding: bool = False,
              meanwhile=None) -> dict[str, dict]:
    """Each check's last event from the child. A check that does not finish in time is an error;
    the child is stopped, and a new one runs the checks after it. `yielding`: the child runs at a
    lower priority, leaving the cores to one that takes longer to start (where the system has nice).
    `meanwhile`: called in a thread of its own once the first child has started."""
    import queue               # here, not above: the child imports this module too, and needs neither
    import subprocess

    events: dict[str, dict] = {}
    limits = spec["limits"]
    hung: dict[str, str] = {}        # a function that hung: why the checks that call it are not run
    while todo:
        for check_id in todo:
            said = not_run_for_a_hang(spec, check_id, hung)
            if said is not None:
                events[check_id] = {"status": "error", "message": said}
        todo = [c for c in todo if c not in events]
        if not todo:
            break
        proc = subprocess.Popen([sys.executable, str(HERE / "check_child.py"), *(["--nice"] if yielding else []),
                                 str(out_dir), str(path), *todo], stdout=subprocess.PIPE, text=True,
                                cwd=str(path.parent))
        lines: queue.Queue = queue.Queue()
        threading.Thread(target=forward_lines, args=(proc.stdout, lines), daemon=True).start()
        if meanwhile is not None:
            threading.Thread(target=meanwhile, daemon=True).start()
            meanwhile = None
        running, limit = None, limits["import_timeout"]        # None: your file is being imported
        deadline = time.monotonic() + limit
        while True:
            try:
                line = lines.get(timeout=max(0.0, deadline - time.monotonic()))
            except queue.Empty:
                proc.kill()
                stuck = [running] if running else todo
                what = f"{calls_of(spec, running)[0]['name']} did not return" if running else f"importing {path.name} did not end"
                events.update({c: {"status": "error", "message": f"{what} within {limit:g} s (an endless loop?)"}
                               for c in stuck})
                if running:
                    remember_hang(calls_of(spec, running), limit, hung)
                break
            if line is None:
                proc.wait(timeout=5)
                for check_id in todo:
                    events.setdefault(check_id, {"status": "error", "message": f"your code stopped Python "
                                                 f"(exit code {proc.returncode}) before this check finished"})
                break
            if not line.startswith(EVENT):
                continue
            event = json.loads(line[len(EVENT):])
            if "check" not in event:                          # the import failed: every check says so
                events.update({c: event for c in todo})
            elif event["status"] == "started":
                running, limit = event["check"], limits["call_timeout"] * max(1, len(calls_of(spec, event["check"])))
                deadline = time.monotonic() + limit
            else:
                events[event["check"]] = event
            if all(c in events for c in todo):        # every answer is in: not waiting for its exit
                break                                 # (a process with numpy takes 10-20 ms to end)
        proc.kill()                                   # a child that outlived its last answer: gone too
        proc.wait()
        todo = [c for c in todo if c not in events]
    return events


def remember_hang(calls: list, limit: float, hung: dict[str, str]) -> None:
    """After a check's call did not return: its function is not called by the checks after it, as
    the grader does not call again a function that hung (each would wait out its own time limit,
    to say nothing more). Only where the check calls one function (then it is the one that hung)."""
    if len({c["name"] for c in calls}) == 1:
        name = calls[0]["name"]
        hung.setdefault(name, f"not run: {name} did not return within {limit:g} s in an earlier check")


def not_run_for_a_hang(spec: dict, check_id: str, hung: dict[str, str]) -> str | None:
    """Why a check is not run: it calls a function that hung (remember_hang); else None."""
    return next((hung[c["name"]] for c in calls_of(spec, check_id) if c["name"] in hung), None)


def forward_lines(stream, lines: queue.Queue) -> None:
    """The child's lines into `lines`, then None when it closes its output."""
    for line in stream:
        lines.put(line)
    lines.put(None)


def calls_of(spec: dict, check_id: str) -> list:
    return next(c["calls"] for c in spec["checks"] if c["id"] == check_id)


def judge(check: dict, event: dict, arrays: dict, out_dir: Path):
    """The check's Outcome (check_answers.Outcome) from the child's event and its saved answer."""
    answers, properties = comparisons()
    Outcome, decode = answers.Outcome, answers.decode
    if event["status"] != "answered":
        hint = answers.error_hint(check, event) if event.get("raised") else ""
        return Outcome(check, event["status"], event.get("message", ""), hint)
    parts = read_npz(out_dir / f"{event['file']}.npz")
    answer = decode(json.loads((out_dir / f"{event['file']}.json").read_text(encoding="utf-8")), parts)
    if check["kind"] == "hand":
        return answers.judge_hand(check, *answer)
    if check["kind"] == "property":               # tested with the grader's own code, check_properties.py
        problems = properties.PROPERTIES[check["property"]](answer, decode(check["params"], arrays))
        return Outcome(check, "failed", "; ".join(problems)) if problems else Outcome(check, "passed")
    problems = answers.compare(check, answer, decode(check["expected"], arrays), arrays)
    if not problems:
        return Outcome(check, "passed")
    return Outcome(check, "failed", "; ".join(problems), answers.hint_for(check, answer, arrays))


# ---------------------------------------------------------------- one exercise, all of them, watching

def your_file(stem: str, folder: Path) -> Path | None:
    """attention.py or attention.ipynb, whichever you saved last."""
    forms = [p for p in (folder / f"{stem}.py", folder / f"{stem}.ipynb") if p.is_file()]
    return max(forms, key=lambda p: p.stat().st_mtime) if forms else None


def start_cost(path: Path | None) -> int:
    """How long a child takes to import what `path` imports: 2 for torch, 1 for matplotlib, else 0."""
    try:
        source = source_of(path) if path is not None else ""
    except (OSError, ValueError):
        return 0
    # module-level imports only (a demo's import inside a function does not run when checked)
    imported = " ".join(line for line in source.splitlines() if line.startswith(("import ", "from ")))
    return 2 if "torch" in imported else 1 if "matplotlib" in imported else 0


def check_exercise(stem: str, folder: Path, path: Path | None = None, only: list[str] | None = None,
                   yielding: bool = False) -> tuple[list, dict]:
    """The Outcomes of an exercise's checks, and its spec. `path`: this file rather than the one saved
    last; `only`: these checks (ids or their prefixes); `yielding`: see run_child."""
    spec = load_spec(stem)
    if only is not None:
        def chosen(check):
            return any(check["id"] == x or check["id"].startswith(x + ".") for x in only)
        spec["checks"] = [c for c in spec["checks"] if chosen(c)]
        spec["hidden"] = 0
    path = path if path is not None else your_file(stem, folder)
    if path is None or not path.is_file():
        return every_check_fails(spec, f"no {(path or folder / stem).name} in {folder}"), spec
    try:
        compile(source_of(path), str(path), "exec")
    except SyntaxError as err:
        return every_check_fails(spec, f"{path.name} has a syntax error at line {err.lineno} ({err.msg}): "
                                       f"{(err.text or '').strip()}"), spec
    except (ValueError, UnicodeDecodeError) as err:
        return every_check_fails(spec, f"{path.name} cannot be read: {err}"), spec
    # While the child starts and runs, this process imports numpy and the comparisons on the other
    # core, rather than after it. Not beside a yielding child: the first one may import torch, and it
    # starts before numpy is imported here (check_in_pairs()).
    arrays = load_arrays(stem)
    with tempfile.TemporaryDirectory(prefix="check-") as tmp:
        events = run_child(path, spec, [c["id"] for c in spec["checks"]], Path(tmp), yielding,
                           meanwhile=None if yielding else comparisons_ahead)
        outcomes = [judge(c, events[c["id"]], arrays, Path(tmp)) for c in spec["checks"]]
    arrays.close()
    spec["checked_file"] = path.name
    return outcomes, spec


def every_check_fails(spec: dict, message: str) -> list:
    """An error Outcome for each check: the file could not be found, read or compiled."""
    return [comparisons()[0].Outcome(c, "error", message) for c in spec["checks"]]


MARK = {"passed": "ok", "failed": "wrong", "error": "error", "not_implemented": "todo"}


def report(stem: str, outcomes: list, spec: dict) -> bool:
    points = sum(o.check["points"] for o in outcomes if o.status == "passed")
    total = sum(o.check["points"] for o in outcomes)
    passed = sum(o.status == "passed" for o in outcomes)
    if outcomes:
        print(f"\n{stem} ({spec.get('checked_file', '-')}): {passed}/{len(outcomes)} visible checks passed, "
              f"{points:g}/{total:g} points")
    else:
        print(f"\n{stem}: no visible check chosen")
    failed = [o for o in outcomes if o.status != "passed"]
    unanswered = len(failed) == len(outcomes) and not any(o.hint for o in failed)
    if failed and unanswered and (len({o.message for o in failed}) == 1 or
                                  all(o.status == "not_implemented" for o in failed)):
        for message in dict.fromkeys(o.message for o in failed):     # said once each, in order
            print(f"  {message}")
    elif failed:        # each cause once: what its checks share, then what is each one's own
        answers, grouping = comparisons()[0], causes_module()
        found = grouping.group_causes((grouping.Failure(o.check["id"], o.status, o.message, o.hint,
                                                        title=o.check["title"]) for o in failed),
                                      advice=(answers.GENERIC_ERROR_HINT,))
        for line in grouping.plain_lines(found, lambda f: MARK[f.status], lambda f: f"{f.id} ({f.title})"):
            print(line)
    if spec["hand_values_later"] and not failed:
        print("  your answers are consistent; their values are graded after you hand in")
    if spec["hidden"]:
        print(f"  and {spec['hidden']} hidden check(s)")
    return not failed


def main(argv: list[str]) -> int:
    # One BLAS thread here and in the children, as in the grader's sandbox: the checks' arrays are
    # small, and after numpy's import an idle OpenBLAS thread spins for about 0.1 s of the other
    # core, which the child (or this process) is using then.
    os.environ.update(OMP_NUM_THREADS="1", OPENBLAS_NUM_THREADS="1", MKL_NUM_THREADS="1")
    if argv[:1] == ["--cell"]:
        return notebook_cell(argv[1], argv[2:])
    watch = "--watch" in argv
    index = json.loads((DATA / "index.json").read_text(encoding="utf-8"))
    stems = [a for a in argv if not a.startswith("--")] or index["exercises"]
    unknown = [s for s in stems if s not in index["exercises"]]
    if unknown:
        print(f"no exercise {unknown[0]!r}; the exercises are {', '.join(index['exercises'])}", file=sys.stderr)
        return 2
    folder = HERE
    if len(stems) == 1:        # no pool: importing concurrent.futures (and logging) takes ~10 ms
        ok = [report(stems[0], *check_exercise(stems[0], folder))]
    else:
        ok = check_in_pairs(stems, folder)
    print("\nall visible checks passed" if all(ok) else "\nsome visible checks failed")
    if not watch:
        return 0 if all(ok) else 1
    return watch_folder(folder, stems)


def check_in_pairs(stems: list[str], folder: Path) -> list[bool]:
    """Two exercises' children at a time, reported in order. The slowest to start first (a file that
    imports torch takes a second to), the others beside it at a lower priority: not after it, and
    not slowing it down."""
    from concurrent.futures import ThreadPoolExecutor

    costs = {stem: start_cost(your_file(stem, folder)) for stem in stems}
    with ThreadPoolExecutor(max_workers=2) as pool:
        running = {stem: pool.submit(check_exercise, stem, folder, yielding=costs[stem] < max(costs.values()))
                   for stem in sorted(stems, key=lambda s: -costs[s])}
        return [report(stem, *running[stem].result()) for stem in stems]


def notebook_cell(stem: str, only: list[str]) -> int:
    """What a notebook's test cell runs: the saved <stem>.ipynb beside this file, the cell's checks;
    the report, then one line of JSON the cell reads ({"attnkit": 1, "score", "max_score", "report"})."""
    import contextlib
    import io

    outcomes, spec = check_exercise(stem, HERE, path=HERE / f"{stem}.ipynb", only=only)
    text = io.StringIO()
    with contextlib.redirect_stdout(text):
        report(stem, outcomes, spec)
    score = sum(o.check["points"] for o in outcomes if o.status == "passed")
    print(json.dumps({"attnkit": 1, "score": score, "max_score": sum(o.check["points"] for o in outcomes),
                      "report": text.getvalue().strip("\n")}))
    return 0


def watch_folder(folder: Path, stems: list[str]) -> int:
    """Check an exercise again when its file changes (polled twice a second: works everywhere)."""
    def stamps():
        return {s: tuple(p.stat().st_mtime_ns for p in (folder / f"{s}.py", folder / f"{s}.ipynb") if p.exists())
                for s in stems}

    print(f"\nwatching {folder} for saves; Ctrl-C stops")
    seen = stamps()
    try:
        while True:
            time.sleep(0.5)
            now = stamps()
            for stem in [s for s in stems if now[s] != seen[s]]:
                report(stem, *check_exercise(stem, folder))
            seen = now
    except KeyboardInterrupt:
        return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
