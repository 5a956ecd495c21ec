"""Check your exercises before you hand them in: the course's visible checks, on your own machine.

    python check.py                 # every exercise
    python check.py attention       # one exercise (or several)
    python check.py --watch         # check an exercise again each time you save its file

Each check calls your functions on the inputs kept in check_data/ and compares what they
return with the answers kept there, or tests the property the check is about (check_properties.py,
the grader's own code for it), and says what is wrong. Your code runs in a separate
Python process, so a function that never returns is stopped after a time limit. What differs
and the known mistakes are told by check_answers.py, beside this file. When your
answer is one a known mistake gives, the hint names the mistake. Hidden checks and the values
of your hand computation are graded after you hand in; a check here passing is no promise of
full marks there. Needs numpy (and torch, matplotlib where an exercise uses them); nothing else.
"""

from __future__ import annotations

import json
import queue
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path

import numpy as np

HERE = Path(__file__).resolve().parent
if __package__:              # imported by the grader, from its package
    from .check_answers import (Outcome, array_problem, compare, decode, encode, error_hint,  # noqa: F401
                                hint_for, judge_hand, near_one, weights_problem)
    from .check_properties import PROPERTIES
else:                        # run as check.py: its modules lie beside it (put on the path even under -I)
    sys.path.insert(0, str(HERE))
    from check_answers import Outcome, compare, decode, encode, error_hint, hint_for, judge_hand  # noqa: E402
    from check_properties import PROPERTIES  # noqa: E402
DATA = HERE / "check_data"
FORMAT = 2                    # of check_data/*.json; a checker reads only the format it was written for
EVENT = "@@check "            # the child's lines to the checker start with this; your prints go to stderr


# ---------------------------------------------------------------- the data of one exercise

def load_exercise(stem: str) -> tuple[dict, dict]:
    """check_data/<stem>.json (the checks) and its arrays (check_data/<stem>.npz, read without pickle)."""
    spec = json.loads((DATA / f"{stem}.json").read_text(encoding="utf-8"))
    if spec.get("format") != FORMAT:
        raise SystemExit(f"check_data/{stem}.json has format {spec.get('format')}; this check.py reads "
                         f"format {FORMAT}: use the check.py that came with it")
    with np.load(DATA / f"{stem}.npz", allow_pickle=False) as arrays:
        return spec, {key: arrays[key] for key in arrays.files}


# ---------------------------------------------------------------- the child: runs your code

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


def import_student(path: Path):
    import types

    sys.path.insert(0, str(path.parent))       # `from attention import ...` finds your attention.py
    module = types.ModuleType(path.stem)
    module.__file__ = str(path)
    sys.modules[path.stem] = module
    exec(compile(source_of(path), str(path), "exec"), module.__dict__)   # noqa: S102 - your own code
    return module


class Missing(Exception):
    """Your file defines no such name."""


class BadReturn(Exception):
    """What a function returned cannot be read as arrays."""


def to_plain(value):
    """Your answer as numpy arrays (tensors are detached and copied), tuples kept as tuples."""
    if isinstance(value, tuple):
        return tuple(to_plain(v) for v in value)
    if hasattr(value, "detach"):
        value = value.detach().cpu()
        value = value.float() if str(value.dtype) == "torch.bfloat16" else value
        return value.numpy()
    try:
        array = np.asarray(value)
    except (ValueError, TypeError) as err:
        raise BadReturn(f"returned {type(value).__name__}, which is not an array ({err})") from None
    if array.dtype == object:
        raise BadReturn(f"returned {type(value).__name__}, expected numbers")
    return array


def as_data(value, kind):
    """Your answer as the sandbox's child reads it (its convert.py, here check_convert.py): a dict of
    statistics per d, a figure's description (series, labels, titles, legends), or arrays."""
    if kind not in ("float_dict_dict", "figure"):
        return to_plain(value)
    import check_convert

    try:
        if kind == "figure":
            return check_convert.describe_figure(value)
        return {int(d): row for d, row in check_convert.to_float_dict_dict(value).items()}
    except check_convert.BadReturn as err:
        raise BadReturn(err.message) from None


def call(module, step: dict, arrays: dict, results: list):
    if not hasattr(module, step["name"]):
        raise Missing(step["name"])
    if step["op"] == "value":                 # a constant of the hand computation
        value = getattr(module, step["name"])
        if value is None:
            raise NotImplementedError(step["name"])
        return to_plain(value)
    args = decode(step.get("args", []), arrays, results)
    kwargs = decode({"dict": step.get("kwargs", {})}, arrays, results)
    if step["op"] == "call":
        return as_data(getattr(module, step["name"])(*args, **kwargs), step.get("returns"))
    import torch                              # a module's forward, built as the grader builds it

    torch.manual_seed(0)
    layer = getattr(module, step["name"])(*args)
    with torch.no_grad():
        for name, array in kwargs["state"].items():
            part, param = name.split(".")
            getattr(getattr(layer, part), param).copy_(torch.from_numpy(np.array(array)))
        mask = kwargs.get("mask")
        out = layer(torch.from_numpy(np.array(kwargs["x"])),
                    **({} if mask is None else {"mask": torch.from_numpy(np.array(mask))}))
    return to_plain(out)


def once_key(step: dict) -> str | None:
    """The key of a call the grader makes once per submission (scalar arguments, not asked anew)."""
    values = [*step["args"], *step["kwargs"].values()]
    flat = [v for x in values for v in (x["tuple"] if isinstance(x, dict) and set(x) == {"tuple"} else [x])]
    if step["op"] != "call" or step.get("fresh") or any(isinstance(v, (list, dict)) for v in flat):
        return None
    return json.dumps([step["name"], step["args"], step["kwargs"]], sort_keys=True)


def child(out_dir: Path, path: Path, check_ids: list[str]) -> None:
    """Import your file, run the checks' calls, write each answer to out_dir/<n>.npz."""
    channel, sys.stdout = sys.stdout, sys.stderr      # your prints go to the terminal, not the checker

    def tell(**event):
        channel.write(EVENT + json.dumps(event) + "\n")
        channel.flush()

    spec, arrays = load_exercise(path.stem)
    if any(step.get("returns") == "figure" for check in spec["checks"] for step in check["calls"]):
        import matplotlib

        matplotlib.use("Agg")                         # as in the grader: figures are read, never shown
    try:
        module = import_student(path)
    except BaseException as err:  # noqa: BLE001 - what your file raised is what the checker reports
        tell(status="error", message=f"{path.name} could not be run: {describe(err, path)}")
        return
    checks = {c["id"]: c for c in spec["checks"]}
    made: dict = {}                 # answers of calls with only scalar arguments, made once as in the grader
    for n, check_id in enumerate(check_ids):
        tell(status="started", check=check_id)
        results: list = []
        try:
            for step in checks[check_id]["calls"]:
                key = once_key(step)
                answer = made[key] if key in made else call(module, step, arrays, results)
                if key is not None:
                    made[key] = answer
                results.append(answer)
            answer = decode(checks[check_id]["answer"], {}, results)
        except Missing as err:
            tell(status="error", check=check_id, message=f"{path.name} defines no {err}")
            continue
        except NotImplementedError:
            name = checks[check_id]["calls"][0]["name"]
            still = "is still None" if checks[check_id]["kind"] == "hand" else "raises NotImplementedError"
            tell(status="not_implemented", check=check_id, message=f"not implemented yet: {name} {still}")
            continue
        except BadReturn as err:
            tell(status="error", check=check_id, message=f"{checks[check_id]['calls'][-1]['name']} {err}")
            continue
        except Exception as err:  # noqa: BLE001
            tell(status="error", check=check_id, message=describe(err, path), raised=[type(err).__name__, str(err)],
                 line=line_of(err, path))
            continue
        save(answer, out_dir / str(n))
        tell(status="answered", check=check_id, file=str(n))


def save(answer, where: Path) -> None:
    """An answer as <where>.json, its arrays in <where>.npz (no pickle on either side)."""
    arrays: dict = {}

    def store(array):
        arrays[f"a{len(arrays)}"] = array
        return f"a{len(arrays) - 1}"

    data = encode(answer, store)
    np.savez(where.with_suffix(".npz"), **arrays)
    where.with_suffix(".json").write_text(json.dumps(data), encoding="utf-8")


def line_of(err: BaseException, path: Path) -> int | None:
    """The line of your file that raised `err` (the innermost one)."""
    import traceback

    if isinstance(err, SyntaxError):
        return err.lineno
    frames = [f for f in traceback.extract_tb(err.__traceback__) if Path(f.filename).name == path.name]
    return frames[-1].lineno if frames else None


def describe(err: BaseException, path: Path) -> str:
    """The error and the line of your file that raised it."""
    import linecache

    line = line_of(err, path)
    text = (err.text or "") if isinstance(err, SyntaxError) else linecache.getline(str(path), line or 0)
    where = f" (line {line} of {path.name}: {text.strip()})" if line else ""
    return f"{type(err).__name__}: {err}{where}"


# ---------------------------------------------------------------- the checker: runs the child, compares


def run_child(path: Path, spec: dict, todo: list[str], out_dir: Path) -> dict[str, dict]:
    """Each check's last event from the child. A check that does not finish in time is an error;
    the child is stopped, and a new one runs the checks after it."""
    events: dict[str, dict] = {}
    limits = spec["limits"]
    while todo:
        proc = subprocess.Popen([sys.executable, str(Path(__file__).resolve()), "--child", str(out_dir), str(path),
                                 *todo], stdout=subprocess.PIPE, text=True, cwd=str(path.parent))
        lines: queue.Queue = queue.Queue()
        threading.Thread(target=forward_lines, args=(proc.stdout, lines), daemon=True).start()
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
        proc.kill()                                   # a child that outlived its last answer: gone too
        todo = [c for c in todo if c not in events]
    return events


def forward_lines(stream, lines: queue.Queue) -> None:
    """The child's lines into `lines`, then None when it closes its output."""
    for line in stream:
        lines.put(line)
    lines.put(None)


def calls_of(spec: dict, check_id: str) -> list:
    return next(c["calls"] for c in spec["checks"] if c["id"] == check_id)


def judge(check: dict, event: dict, arrays: dict, out_dir: Path) -> Outcome:
    if event["status"] != "answered":
        hint = error_hint(check, event) if event.get("raised") else ""
        return Outcome(check, event["status"], event.get("message", ""), hint)
    with np.load(out_dir / f"{event['file']}.npz", allow_pickle=False) as saved:
        parts = {key: saved[key] for key in saved.files}
    answer = decode(json.loads((out_dir / f"{event['file']}.json").read_text(encoding="utf-8")), parts)
    if check["kind"] == "hand":
        return judge_hand(check, *answer)
    if check["kind"] == "property":               # tested with the grader's own code, check_properties.py
        problems = PROPERTIES[check["property"]](answer, decode(check["params"], arrays))
        return Outcome(check, "failed", "; ".join(problems)) if problems else Outcome(check, "passed")
    problems = compare(check, answer, decode(check["expected"], arrays), arrays)
    if not problems:
        return Outcome(check, "passed")
    return Outcome(check, "failed", "; ".join(problems), hint_for(check, answer, arrays))


# ---------------------------------------------------------------- one exercise, all of them, watching

def your_file(stem: str, folder: Path) -> Path | None:
    """attention.py or attention.ipynb, whichever you saved last."""
    forms = [p for p in (folder / f"{stem}.py", folder / f"{stem}.ipynb") if p.is_file()]
    return max(forms, key=lambda p: p.stat().st_mtime) if forms else None


def check_exercise(stem: str, folder: Path, path: Path | None = None,
                   only: list[str] | None = None) -> tuple[list[Outcome], dict]:
    """`path`: this file rather than the one saved last; `only`: these checks (ids or their prefixes)."""
    spec, arrays = load_exercise(stem)
    if only is not None:
        def chosen(check):
            return any(check["id"] == x or check["id"].startswith(x + ".") for x in only)
        spec["checks"] = [c for c in spec["checks"] if chosen(c)]
        spec["hidden"] = 0
    path = path if path is not None else your_file(stem, folder)
    if path is None or not path.is_file():
        return [Outcome(c, "error", f"no {(path or folder / stem).name} in {folder}") for c in spec["checks"]], spec
    try:
        compile(source_of(path), str(path), "exec")
    except SyntaxError as err:
        return [Outcome(c, "error", f"{path.name} has a syntax error at line {err.lineno} ({err.msg}): "
                                    f"{(err.text or '').strip()}") for c in spec["checks"]], spec
    except (ValueError, UnicodeDecodeError) as err:
        return [Outcome(c, "error", f"{path.name} cannot be read: {err}") for c in spec["checks"]], spec
    with tempfile.TemporaryDirectory(prefix="check-") as tmp:
        events = run_child(path, spec, [c["id"] for c in spec["checks"]], Path(tmp))
        outcomes = [judge(c, events[c["id"]], arrays, Path(tmp)) for c in spec["checks"]]
    spec["checked_file"] = path.name
    return outcomes, spec


MARK = {"passed": "ok", "failed": "wrong", "error": "error", "not_implemented": "todo"}


def report(stem: str, outcomes: list[Outcome], spec: dict) -> bool:
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
    else:
        for o in failed:
            print(f"  {MARK[o.status]} {o.check['id']} ({o.check['title']})\n      {o.message}")
            if o.hint:
                print("      hint: " + o.hint.replace("\n", "\n      "))
    if spec["hand_values_later"] and not failed:
        print("  your answers are consistent; their values are graded after you hand in")
    if spec["hidden"]:
        print(f"  and {spec['hidden']} hidden check(s)")
    return not failed


def main(argv: list[str]) -> int:
    if argv[:1] == ["--child"]:
        child(Path(argv[1]), Path(argv[2]), argv[3:])
        return 0
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
    from concurrent.futures import ThreadPoolExecutor

    with ThreadPoolExecutor(max_workers=2) as pool:     # two exercises' children at a time, reported in order
        running = [pool.submit(check_exercise, stem, folder) for stem in stems]
        ok = [report(stem, *done.result()) for stem, done in zip(stems, running)]
    print("\nall visible checks passed" if all(ok) else "\nsome visible checks failed")
    if not watch:
        return 0 if all(ok) else 1
    return watch_folder(folder, stems)


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
