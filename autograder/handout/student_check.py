"""Check your exercises before you hand them in: the course's visible checks, on your own machine.

    python check.py                       # every exercise
    python check.py attention causal_mask # these exercises (attention.py or attention.ipynb name it too)
    python check.py --watch               # check an exercise again each time you save it (and those calling it)
    python check.py --watch attention     # watch these exercises only (Ctrl-C stops)
    python check.py --json results.json   # also write each check's result (id, status, score) to a file
    python check.py --help                # this, and the exercises

Each exercise is checked from the file the grader grades: the .py or the .ipynb that holds your work
(an untouched stub never counts over work, even work that does not compile yet; with work in both,
the course says which counts, or both are checked and the better counts; with work in neither, the
.py), under its own name or a near miss of it (`attention (1).py`). Which one was saved last plays
no part. A notebook is run as Jupyter's Run All runs it: IPython's magics and `display` work, a cell
that raises is skipped and named. Your code runs in a separate Python process, stopped after a time
limit (unjailed.py). Which file counts, the reading of your file, the comparisons, the grouping of
failed checks by cause, the hints and the points are the grader's own code, in judge/ beside this
file. Hidden checks and the values of your hand computation are graded after you hand in. A check
that fails while it calls another exercise of yours (`from attention import ...`) that does not
pass its own checks waits on it, undecided: the grader gives that check a correct one. Needs numpy
(and torch, matplotlib where an exercise uses them); nothing else.
"""

from __future__ import annotations

import json
import sys
import tempfile
import time
from dataclasses import replace
from pathlib import Path
from types import SimpleNamespace

# numpy is imported only once a child has started (comparisons_ahead()): a child that imports torch,
# the longest to start, does not wait the tenth of a second numpy takes here first.
HERE = Path(__file__).resolve().parent
if not __package__:          # run as check.py: its modules lie beside it (put on the path even under -I)
    sys.path.insert(0, str(HERE))
    import unjailed
    import unjailed_report
    import unjailed_siblings
else:
    from . import unjailed, unjailed_report, unjailed_siblings
calls, forms, points = unjailed.calls, unjailed.forms, unjailed.judge("points")
report, results_json, score = unjailed_report.report, unjailed_report.results_json, unjailed_report.score
FORMAT, DATA = unjailed.FORMAT, unjailed.DATA

USAGE = __doc__.split("\n\n")[1]
INSTALL = ("pip install numpy matplotlib && pip install torch --index-url https://download.pytorch.org/whl/cpu "
           "(or: conda install numpy matplotlib pytorch cpuonly -c pytorch)")


def read_npz(path: Path) -> dict:
    """An .npz file's arrays by name, read without pickle."""
    import numpy as np

    with np.load(path, allow_pickle=False) as arrays:
        return {key: arrays[key] for key in arrays.files}


shipped = unjailed.judge      # the judge's modules, imported when first needed (numpy comes with some)


def comparisons():
    """The judge's answers and properties (the comparisons with answers, the properties tested with code)."""
    return shipped("answers", "properties")


def comparisons_ahead() -> None:
    """comparisons() (and numpy) imported beside a running child; an error is met again when judging,
    and said then."""
    try:
        comparisons()
    except Exception:  # noqa: BLE001, S110
        pass


def judge(check: dict, event: dict, arrays: dict, out_dir: Path, carried: dict | None = None):
    """The check's Outcome (the judge's answers.Outcome) from the child's event and its saved answer.
    `carried`: one dict for a file's hand checks (hand.judge_hand). An answer the
    comparison cannot take apart fails with a sentence, as in the grader (judge/calls.py)."""
    try:
        return judge_answer(check, event, arrays, out_dir, carried)
    except calls.COMPARISON_ERRORS as err:
        return comparisons()[0].Outcome(check, "failed", calls.not_comparable(err))


def judge_answer(check: dict, event: dict, arrays: dict, out_dir: Path, carried: dict | None):
    answers, properties = comparisons()
    Outcome, decode = answers.Outcome, answers.decode
    if event["status"] != "answered":
        diagnosable = check | check.get("match", {})          # a property check's mistakes are under "match"
        raised = event.get("raised")
        hint, mistakes = answers.error_hint(diagnosable, event, diagnosis()[2].RECOGNISERS) if raised else ("", ())
        told = ("", answers.raised_lead(raised[0], event.get("line"), event.get("cell")),
                _hints_of(diagnosable, mistakes, None)) if len(mistakes) > 1 else ()
        return Outcome(check, event["status"], event.get("message", ""), hint, mistakes, told=told)
    parts = read_npz(out_dir / f"{event['file']}.npz")
    answer = decode(json.loads((out_dir / f"{event['file']}.json").read_text(encoding="utf-8")), parts)
    if check["kind"] == "hand":
        return shipped("hand").judge_hand(check, *answer, carried=carried)
    if check["kind"] == "property":               # tested with the grader's own code, judge/properties.py
        problems = properties.PROPERTIES[check["property"]](answer, decode(check["params"], arrays))
        if not problems:
            return Outcome(check, "passed")
        hint, mistakes, told = diagnosed(check | check["match"], answer, arrays, event) if "match" in check \
            else ("", (), ())
        return Outcome(check, "failed", "; ".join(problems), hint, mistakes, answer, told)
    problems = answers.compare(check, answer, decode(check["expected"], arrays), arrays)
    if not problems:
        return Outcome(check, "passed")
    hint, mistakes, told = diagnosed(check, answer, arrays, event)
    return Outcome(check, "failed", "; ".join(problems), hint, mistakes, answer, told)


def diagnosed(check: dict, answer, arrays: dict, event: dict) -> tuple[str, tuple[str, ...], tuple]:
    """A wrong answer's hint and the known mistakes it names, and what the hint is made of (Outcome.told)
    when they are several, as the grader's: what is seen in it,
    then the mistakes whose recogniser or answer on these inputs fits (`check`: a check compared
    with arrays, or a property check's "match", how the grader compares it with the mistakes')."""
    answers = comparisons()[0]
    expected = answers.decode(check["expected"], arrays)
    inputs = answers.decode(check.get("inputs", {"dict": {}}), arrays)
    observations, recognisers, _ = diagnosis()
    observer = observations.observer_from(check.get("observer"))
    seen = (observer.see(check["id"], inputs, answer, expected) or "") if observer is not None else ""
    params = answers.decode(check["params"], arrays) if "params" in check else {}
    # as the grader's Context: the inputs, the dtypes the answers came in, the course's tolerances
    # (a property check's parameters hold those it is judged with)
    returned = SimpleNamespace(inputs=inputs, dtypes=tuple(event.get("dtypes", ())), params=params)
    dtype = recognisers.low_precision_dtype(returned, answer)
    hint, mistakes = answers.hint_for(check, answer, arrays, seen, returned, expected, recognisers.RECOGNISERS,
                                      dtype, agreement(check, arrays))
    return hint, mistakes, (seen, "", _hints_of(check, mistakes, dtype)) if len(mistakes) > 1 else ()


def _hints_of(check: dict, mistakes: tuple[str, ...], dtype: str | None) -> dict[str, str]:
    return {m["id"]: comparisons()[0].with_dtype(m["hint"], dtype) for m in check.get("mistakes", ())
            if m["id"] in mistakes}


def agreement(check: dict, arrays: dict):
    """agrees(yours, a mistake's shipped answer) for this check, as the grader compares them."""
    answers, properties = comparisons()
    if check.get("agree") == "property":     # a mutant's answer is shipped as the parameters made with it
        return lambda mine, theirs: not properties.PROPERTIES[check["property"]](mine, theirs)
    return lambda mine, theirs: not answers.compare(check, mine, theirs, arrays, values_only=True)


def without_ruled_out(outcomes: list, arrays: dict) -> list:
    """The outcomes whose hint names several mistakes, without those your other visible results rule
    out (judge/narrowing.py: the grader's rule)."""
    if not any(len(o.mistakes) > 1 for o in outcomes):
        return outcomes
    narrowing, answers = shipped("narrowing"), comparisons()[0]
    checks = {}
    for o in outcomes:
        data = o.check | o.check.get("match", {})
        checks[o.check["id"]] = (data, o.answer, agreement(data, arrays))
    verdicts = {o.check["id"]: o.status for o in outcomes}
    out = []
    for o in outcomes:
        if len(o.mistakes) > 1 and o.told:
            kept = narrowing.narrowed_ids(o.check["id"], o.mistakes, checks, verdicts,
                                          lambda value: answers.decode(value, arrays))
            if kept != tuple(o.mistakes):
                seen, lead, hints = o.told
                o = replace(o, mistakes=kept, hint=answers.hint_text(seen, [hints[m] for m in kept], lead))
        out.append(o)
    return out


def diagnosis():
    """The judge's observations, recognisers and raised: what the grader sees in a wrong
    answer, and the mistakes it tells by a property of the answer or by the words of an error."""
    return shipped("observations", "recognisers", "raised")


# ---------------------------------------------------------------- which file, one exercise, all of them

def start_cost(path: Path | None) -> int:
    """How long a child takes to import what `path` imports: 2 for torch, 1 for matplotlib, else 0."""
    source = unjailed.read_exercise(path).source if path is not None and path.is_file() else ""
    # module-level imports only (a demo's import inside a function does not run when checked)
    imported = " ".join(line for line in source.splitlines() if line.startswith(("import ", "from ")))
    return 2 if "torch" in imported else 1 if "matplotlib" in imported else 0


def check_exercise(stem: str, folder: Path, path: Path | None = None, only: list[str] | None = None,
                   yielding: bool = False) -> tuple[list, dict]:
    """The Outcomes of an exercise's checks, and its spec (its "checked_file", "why", "notes").
    The file(s) checked are those the grader counts, and which one counts is the grader's rule
    (judge/forms.py: the course's both_forms, near-miss names). `path`: this file rather than the
    grader's choice; `only`: these checks (ids or their prefixes); `yielding`: see unjailed.run_child."""
    spec = unjailed.load_spec(stem)
    if only is not None:
        def chosen(check):
            return any(check["id"] == x or check["id"].startswith(x + ".") for x in only)
        spec["checks"] = [c for c in spec["checks"] if chosen(c)]
        spec["hidden"] = 0
    counted = unjailed.Counted([path]) if path is not None else \
        unjailed.counted_files(stem, folder, spec.get("graded", []))
    if counted.several:            # several names could be meant: each checked, the better counts
        each = [(p, check_file(p, stem, spec, yielding)) for p in counted.several]
        best, why = forms.the_better(stem, [graded(p, outcomes) for p, (outcomes, _, _) in each])
        return settled(spec, *each[best], why)
    if not counted.paths or not counted.paths[0].is_file():
        spec["checked_file"] = "-"
        return every_check_fails(spec, counted.problem or f"no {stem}.py or {stem}.ipynb in {folder}"), spec
    first = (counted.paths[0], check_file(counted.paths[0], stem, spec, yielding))
    if len(counted.paths) == 1:
        return settled(spec, *first, counted.why)
    # both forms hold work: the course's both_forms says whether the other is checked and which counts
    policy, other = spec.get("both_forms", "best"), counted.paths[1]
    why = forms.unless_both(policy, graded(first[0], first[1][0], counted.why), other.name)
    if why is not None:
        return settled(spec, *first, why)
    second = (other, check_file(other, stem, spec, yielding))
    keep, why = forms.of_both(policy, graded(first[0], first[1][0], counted.why), graded(other, second[1][0]))
    return settled(spec, *(first, second)[keep], why)


def graded(path: Path, outcomes: list, note: str = "") -> "forms.Graded":
    """A file's visible checks as the judge weighs one file against another."""
    return forms.Graded(path.name, score(outcomes), points.added(o.check["points"] for o in outcomes), note,
                        untouched=all(o.status == "not_implemented" for o in outcomes))


def settled(spec: dict, path: Path, checked: tuple[list, list, dict], why: str) -> tuple[list, dict]:
    outcomes, notes, called = checked
    spec.update(checked_file=path.name, why=why, notes=notes, called=called)
    return outcomes, spec


def check_file(path: Path, stem: str, spec: dict, yielding: bool) -> tuple[list, list, dict]:
    """The Outcomes of `spec`'s checks on one file, the notes on its cells that were skipped, and
    per check the other exercises of yours it called (unjailed_siblings.wait_on_siblings)."""
    read = unjailed.read_exercise(path)
    if read.problem is not None:
        return every_check_fails(spec, read.problem), [], {}
    # While the child starts and runs, this process imports numpy and the comparisons on the other
    # core, rather than after it. Not beside a yielding child: the first one may import torch, and it
    # starts before numpy is imported here (check_in_pairs()).
    arrays = unjailed.load_arrays(stem)
    with tempfile.TemporaryDirectory(prefix="check-") as tmp:
        events = unjailed.run_child(path, spec, [c["id"] for c in spec["checks"]], Path(tmp), yielding,
                           meanwhile=None if yielding else comparisons_ahead)
        notes = events.pop("notes", {}).get("notes", [])
        called = {check_id: event["siblings"] for check_id, event in events.items() if event.get("siblings")}
        try:
            carried: dict = {}
            told_in = shipped("quoted").told_in    # a hint names only what the file holds, as in the grader
            outcomes = [judge(told_in(c, read.source), events[c["id"]], arrays, Path(tmp), carried)
                        for c in spec["checks"]]
            outcomes = without_ruled_out(outcomes, arrays)
        except ImportError as err:
            outcomes = every_check_fails(spec, f"{err.name or 'a package'} is not installed: {INSTALL}")
    arrays.close()
    return outcomes, [*read.notes, *notes], called


def every_check_fails(spec: dict, message: str) -> list:
    """An error Outcome for each check: the file could not be found, read or compiled."""
    try:
        outcome = comparisons()[0].Outcome
    except ImportError:              # numpy is missing: the judge's answers needs it
        from types import SimpleNamespace as outcome  # noqa: N813
        return [outcome(check=c, status="error", message=f"numpy is not installed: {INSTALL}", hint="", mistakes=())
                for c in spec["checks"]]
    return [outcome(c, "error", message) for c in spec["checks"]]


BLOCKED = unjailed_siblings.BLOCKED


def with_siblings_settled(checked: dict[str, tuple[list, dict]], folder: Path) -> dict[str, tuple[list, dict]]:
    """`checked` with the checks that wait on another exercise of yours BLOCKED (unjailed_siblings.wait_on_siblings);
    an exercise they call that was not checked here is checked for that."""
    return unjailed_siblings.wait_on_siblings(checked, lambda sibling: check_exercise(sibling, folder))


def parse_args(argv: list[str], exercises: list[str]) -> tuple[list[str], dict] | int:
    """(the exercises named, the options) from the command line, or the exit code after usage/an error."""
    options: dict = {"watch": False, "json": None}
    stems: list[str] = []
    args = iter(argv)
    for arg in args:
        if arg in ("-h", "--help"):
            print(USAGE.rstrip() + f"\n\nexercises (name one or more, with --watch too): {', '.join(exercises)}")
            return 0
        if arg == "--watch":
            options["watch"] = True
        elif arg == "--json" or arg.startswith("--json="):
            options["json"] = arg.partition("=")[2] or next(args, None)
            if not options["json"]:
                print("--json needs a file name: python check.py --json results.json", file=sys.stderr)
                return 2
        elif arg.startswith("-"):
            print(f"unknown option {arg!r}\n{USAGE.rstrip()}", file=sys.stderr)
            return 2
        else:
            name = Path(arg).name
            stem = Path(name).stem if Path(name).suffix in (".py", ".ipynb") else name
            if stem not in exercises:
                print(f"no exercise {arg!r}; the exercises are {', '.join(exercises)}", file=sys.stderr)
                return 2
            stems.append(stem)
    return stems or list(exercises), options


def main(argv: list[str]) -> int:
    shipped("threads").one_thread()      # here and in the children, as in the grader's sandbox
    for stream in (sys.stdout, sys.stderr):    # a Windows console's code page cannot print every character
        if hasattr(stream, "reconfigure"):
            stream.reconfigure(errors="backslashreplace")
    if argv[:1] == ["--cell"]:
        return notebook_cell(argv[1], argv[2:])
    index = json.loads((DATA / "index.json").read_text(encoding="utf-8"))
    parsed = parse_args(argv, index["exercises"])
    if isinstance(parsed, int):
        return parsed
    stems, options = parsed
    folder = HERE
    before = saved_times(folder, stems) if options["watch"] else {}   # a save during the first run counts
    if len(stems) == 1:        # no pool: importing concurrent.futures (and logging) would slow a lone exercise
        checked = {stems[0]: check_exercise(stems[0], folder)}
    else:
        checked = check_in_pairs(stems, folder)
    checked = with_siblings_settled(checked, folder)
    ok = [report(stem, *checked[stem]) for stem in stems]
    some_failed = any(o.status not in ("passed", BLOCKED) for outcomes, _ in checked.values() for o in outcomes)
    print("\nall visible checks passed" if all(ok) else "\nsome visible checks failed" if some_failed else
          "\nsome visible checks wait on another exercise (see above)")
    if options["json"]:
        Path(options["json"]).write_text(json.dumps(results_json(checked), indent=1) + "\n", encoding="utf-8")
    if not options["watch"]:
        return 0 if all(ok) else 1
    return watch_folder(folder, stems, checked, before)


def check_in_pairs(stems: list[str], folder: Path) -> dict[str, tuple[list, dict]]:
    """Two exercises' children at a time. The slowest to start first (a file that imports torch
    takes a second to), the others beside it at a lower priority: not after it, and not slowing it down."""
    from concurrent.futures import ThreadPoolExecutor

    costs = {stem: max([start_cost(p) for p in unjailed.your_files(stem, folder)], default=0) for stem in stems}
    with ThreadPoolExecutor(max_workers=2) as pool:
        running = {stem: pool.submit(check_exercise, stem, folder, yielding=costs[stem] < max(costs.values()))
                   for stem in sorted(stems, key=lambda s: -costs[s])}
        return {stem: running[stem].result() for stem in stems}


def notebook_cell(stem: str, only: list[str]) -> int:
    """What a notebook's test cell runs: the saved <stem>.ipynb beside this file, the cell's checks;
    the report, then one line of JSON the cell reads ({"attnkit": 1, "score", "max_score", "report"})."""
    import contextlib
    import io

    outcomes, spec = with_siblings_settled({stem: check_exercise(stem, HERE, path=HERE / f"{stem}.ipynb",
                                                                 only=only)}, HERE)[stem]
    text = io.StringIO()
    with contextlib.redirect_stdout(text):
        report(stem, outcomes, spec)
    print(json.dumps({"attnkit": 1, "score": score(outcomes), "max_score": points.added(o.check["points"] for o in outcomes),
                      "report": text.getvalue().strip("\n")}))
    return 0


def saved_times(folder: Path, stems: list[str]) -> dict[str, tuple]:
    """When each exercise's files (its forms and their near misses) were last saved."""
    return {s: tuple((p.name, p.stat().st_mtime_ns) for p in unjailed.your_files(s, folder) if p.exists())
            for s in stems}


def watch_folder(folder: Path, stems: list[str], checked: dict[str, tuple[list, dict]], seen: dict) -> int:
    """Check an exercise again when its file changes (polled twice a second: works everywhere), and
    those whose checks call it (causal_mask after attention.py). `checked`: the first run's results,
    `seen`: the files' times before it."""
    callers_of = {stem: unjailed_siblings.called_by(spec) for stem, (_, spec) in checked.items()}
    print(f"\nwatching {folder} for saves; Ctrl-C stops")
    try:
        while True:
            time.sleep(0.5)
            now = saved_times(folder, stems)
            saved = [s for s in stems if now[s] != seen[s]]
            callers = {s: [c for c in saved if c in callers_of.get(s, ())] for s in stems if s not in saved}
            for stem in saved + [s for s, called in callers.items() if called]:
                outcomes, spec = with_siblings_settled({stem: check_exercise(stem, folder)}, folder)[stem]
                callers_of[stem] = unjailed_siblings.called_by(spec)
                why = f" (it calls {' and '.join(callers[stem])}, saved)" if stem not in saved else ""
                print(f"\n--- {time.strftime('%H:%M:%S')}: {stem}, checked from {spec.get('checked_file', '-')}{why}")
                report(stem, outcomes, spec)
            seen = now
    except KeyboardInterrupt:
        return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
