"""What check.py alone needs: your code run on your own computer, without the grader's jail.

The grader runs a submission in a jailed child of its sandbox and gives an exercise that imports
another (`from attention import softmax`) the kit's correct version of that one. check.py has
neither: it runs your file in a plain child process, stopped after the grader's time limits, and
another exercise your file imports is yours. Everything else (which file counts, how a file and a
notebook are read, the status of a call, the comparisons, causes, hints and points) is the judge's
(judge/ beside this file, the grader's own code).

    counted_files(stem, ...)   your file(s) of an exercise as the grader counts them (judge/forms.py)
    read_exercise(path)        the file's Python, or a notebook's cells as Jupyter's Run All runs them
    run_exercise(read, ...)    that read run in a module, as the grader runs it
    run_child(path, spec, ...) each check's event from the child, a new child after one whose
                               function hung; the function that hung is the one blamed

The child is unjailed_child.py (what an import in it finds: unjailed_imports.py); another exercise
of yours that a check calls, and the checks that wait on it, are unjailed_siblings.py.
The child is a plain `subprocess` (no fork: the same on Linux, macOS and Windows); it stops itself
when a call outlives its limit, after saying which of your functions was running, and this side
stops it anyway a little after the wall backstop (a loop in C code that never lets the child's
own watchdog run). The limits are the grader's, by its clock (judge/clock.py): CPU time, so that a
slow or busy computer costs a correct file nothing. Each answer goes to OUT_DIR as <n>.json and
<n>.npz, n the check's place in check_data (no pickle on either side: a child started after one
that hung writes beside it, never over it); what happened is told on stdout in lines that start
with EVENT, and your own prints go to stderr. check.py itself imports numpy only once the first
child has started: the standard library only at the top of these modules.
"""

from __future__ import annotations

import importlib
import importlib.machinery
import importlib.util
import json
import os
import queue
import subprocess
import sys
import threading
import time
from dataclasses import dataclass, field
from pathlib import Path

HERE = Path(__file__).resolve().parent
DATA = HERE / "check_data"
FORMAT = 5                    # of check_data/*.json; a checker reads only the format it was written for
EVENT = "@@check "            # the child's lines to the checker start with this; your prints go to stderr
GRACE = 3.0                   # s after the wall backstop before the child is stopped from here (its watchdog failed)
WALL_FACTOR = 5.0             # the grader's default (course.yml limits.wall_factor), for data without it

if __package__:               # in the kit
    JUDGE = "autograder.judge"
else:                         # beside check.py, its judge/ folder beside it (on the path even under -I or -P)
    sys.path.insert(0, str(HERE))
    JUDGE = "judge"
# the judge's modules of the standard library alone; those that import numpy: judge() where needed
calls, clock, errors, forms, notebook, reading = (importlib.import_module(f"{JUDGE}.{name}") for name in
                                                  ("calls", "clock", "errors", "forms", "notebook", "reading"))


def judge(*names: str):
    """The judge's modules of these names (numpy comes with some of them)."""
    found = tuple(importlib.import_module(f"{JUDGE}.{name}") for name in names)
    return found[0] if len(found) == 1 else found


def load_spec(stem: str) -> dict:
    """check_data/<stem>.json: the checks (their arrays are in check_data/<stem>.npz)."""
    spec = json.loads((DATA / f"{stem}.json").read_text(encoding="utf-8"))
    if spec.get("format") != FORMAT:
        raise SystemExit(f"check_data/{stem}.json has format {spec.get('format')}; this check.py reads "
                         f"format {FORMAT}: use the check.py that came with it")
    return spec


class ArraysOnDemand(dict):
    """An .npz file's arrays by name, each read (without pickle) the first time it is asked for: a
    check uses a few of the hundreds kept for its exercise."""

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


def load_arrays(stem: str) -> ArraysOnDemand:
    return ArraysOnDemand(DATA / f"{stem}.npz")


@dataclass
class Exercise:
    """An exercise file as it will be run: its Python (a notebook's cells joined), the notebook's
    cells (Cell.as_dict; None for a .py file), notes on cells left out; or `problem`: why it cannot run.
    `read_cells`, `left_out`: a notebook's cells as read (notebook.Cell), kept and left out."""
    path: Path
    source: str = ""
    cells: list | None = None
    notes: list = field(default_factory=list)
    problem: str | None = None
    read_cells: list = field(default_factory=list)
    left_out: list = field(default_factory=list)

    def skipped_definitions(self, raised: list[int]) -> dict[str, int]:
        """name -> the skipped cell that would have defined it, the cells numbered `raised` having
        raised when run (notebook.skipped_definitions, as the grader finds them)."""
        return notebook.skipped_definitions(self.read_cells, self.left_out, raised)


def read_exercise(path: Path) -> Exercise:
    """The file as the grader reads it (autograder/intake/load.py does the same with these modules)."""
    name = path.name
    try:
        text = reading.text_of(path.read_bytes(), name)
    except OSError as err:
        return Exercise(path, problem=f"{name} cannot be read: {err.strerror or err}")
    if isinstance(text, tuple):
        return Exercise(path, problem=text[0])
    if path.suffix.lower() != ".ipynb":
        return Exercise(path, text, problem=notebook.compile_problem(text, name))
    cells = notebook.notebook_cells(text, name, kit_roles_run=("numbers",))
    if isinstance(cells, tuple):
        return Exercise(path, problem=cells[0])
    kept, notes, left_out = notebook.compiled_cells(cells, name)
    if kept is None:
        return Exercise(path, problem=notes)
    return Exercise(path, "\n\n".join(c.source for c in kept) + "\n", [c.as_dict() for c in kept], list(notes),
                    read_cells=kept, left_out=list(left_out))


@dataclass
class Counted:
    """An exercise's files in your folder as the grader counts them (the judge's rule, judge/forms.py):
    the form graded, and the other one when both hold work (the course's `both_forms` decides which
    counts), with the judge's note; or, where several names could be meant, each of them (each is
    checked, the better counts); or why there is none (`problem`)."""
    paths: list[Path] = field(default_factory=list)
    why: str = ""
    several: list[Path] = field(default_factory=list)
    problem: str = ""

    def counting(self, both_forms: str) -> Path | None:
        """The file that counts without checking any (for another exercise that imports this one)."""
        if not self.paths:
            return self.several[0] if self.several else None
        return self.paths[-1] if both_forms == "ipynb" else self.paths[0]


def folder_names(folder: Path) -> tuple[list[str], set[str]]:
    """The names in `folder` that may be someone's work (forms.ignored), and those that are folders."""
    try:
        names = sorted(n for n in os.listdir(folder) if not forms.ignored(n))
    except OSError:
        return [], set()
    return names, {n for n in names if (folder / n).is_dir()}


def counted_files(stem: str, folder: Path, graded: list[str]) -> Counted:
    """The file(s) of `stem` in `folder` the grader grades, and why, in its words."""
    names, folders = folder_names(folder)
    found = forms.named(stem, names, folders, inside=str(folder))
    if found.ambiguous:
        return Counted(several=[folder / n for n in forms.candidates(stem, names, folders)], why=found.problem,
                       problem=found.problem)
    if not found.files:
        return Counted(problem=found.problem)
    if len(found.files) == 1:
        name, note = found.files[0]
        return Counted([folder / name], note or "the only one here")
    read = {name: read_exercise(folder / name) for name, _ in found.files}
    notes = dict(found.files)
    chosen = forms.choose([forms.Form(name, r.problem, r.problem is None and forms.has_work(r.source, graded))
                           for name, r in read.items()])
    kept = [f.filename for f in (chosen.graded, chosen.alternative) if f is not None]
    return Counted([folder / name for name in kept], "; ".join(filter(None, (notes[kept[0]], chosen.note))))


def your_files(stem: str, folder: Path) -> list[Path]:
    """Every file of `stem` in `folder` the grader could count (its forms and their near misses)."""
    names, folders = folder_names(folder)
    return [folder / n for suffix in forms.SUFFIXES for n in forms.near_misses(stem, names, suffix, folders)]


def calls_of(spec: dict, check_id: str) -> list:
    return next(c["calls"] for c in spec["checks"] if c["id"] == check_id)


def call_limit(spec: dict, check_id: str) -> float:
    """A check's time: the call limit for each of its calls (the grader's per-call limit)."""
    return spec["limits"]["call_timeout"] * max(1, len(calls_of(spec, check_id)))


def run_child(path: Path, spec: dict, todo: list[str], out_dir: Path, yielding: bool = False,
              meanwhile=None) -> dict[str, dict]:
    """Each check's last event from the child (and under "notes", the cells the child skipped). A check whose call does not return in time is an
    error naming the function of yours that was running; the child is stopped, and a new one runs
    the checks after it. `yielding`: the child runs at a lower priority (where the system has nice).
    `meanwhile`: called in a thread of its own once the first child has started."""
    events: dict[str, dict] = {}
    hung: dict[str, dict] = {}       # a function that hung: why the checks that call it are not run
    child = HERE / "unjailed_child.py"
    env = dict(os.environ, PYTHONIOENCODING="utf-8")
    while todo:
        for check_id in todo:
            said = not_run_for_a_hang(spec, check_id, hung)
            if said is not None:
                events[check_id] = said
        todo = [c for c in todo if c not in events]
        if not todo:
            break
        proc = subprocess.Popen([sys.executable, str(child), "--child", *(["--nice"] if yielding else []),
                                 str(out_dir), spec["exercise"], str(path), *todo], stdout=subprocess.PIPE, text=True,
                                encoding="utf-8", errors="replace", cwd=str(path.parent), env=env)
        lines: queue.Queue = queue.Queue()
        threading.Thread(target=forward_lines, args=(proc.stdout, lines), daemon=True).start()
        if meanwhile is not None:
            threading.Thread(target=meanwhile, daemon=True).start()
            meanwhile = None
        running, limit = None, spec["limits"]["import_timeout"]        # None: your file is being imported
        wall_factor = spec["limits"].get("wall_factor", WALL_FACTOR)
        deadline = time.monotonic() + clock.backstop(limit, wall_factor) + GRACE
        while True:
            try:
                line = lines.get(timeout=max(0.0, deadline - time.monotonic()))
            except queue.Empty:         # the child's own timer did not say: blame the check's function
                names = [c["name"] for c in calls_of(spec, running)] if running else []
                line = EVENT + json.dumps({"status": "hung", "check": running, "limit": limit,
                                           "function": names[0] if len(set(names)) == 1 else None})
            if line is None:
                proc.wait()
                for check_id in todo:
                    events.setdefault(check_id, {"status": "error", "message": f"your code stopped Python "
                                                 f"(exit code {proc.returncode}) before this check finished"})
                break
            if not line.startswith(EVENT):
                continue
            event = json.loads(line[len(EVENT):])
            if event["status"] == "hung":
                hang_said(event, path, spec, todo, events, hung)
                break
            if event["status"] == "notes":                    # cells skipped: said once, above the checks
                events["notes"] = event
            elif "check" not in event:                        # the import failed: every check says so
                events.update({c: event for c in todo})
            elif event["status"] == "started":
                running, limit = event["check"], call_limit(spec, event["check"])
                deadline = time.monotonic() + clock.backstop(limit, wall_factor) + GRACE
            else:
                events[event["check"]] = event
            if all(c in events for c in todo):        # every answer is in: not waiting for its exit
                break
        proc.kill()                                   # a child that outlived its last answer: gone too
        proc.wait()
        todo = [c for c in todo if c not in events]
    return events


def hang_said(event: dict, path: Path, spec: dict, todo: list, events: dict, hung: dict) -> None:
    """A call (or the import) that did not end: the check says which function of yours was running
    (`function`; `called_by`: the check's own function, when that is another), and the later checks
    that call either are not run (each would wait out its own limit, to say nothing more)."""
    check, limit, name = event.get("check"), event["limit"], event.get("function")
    if check is None:
        events.update({c: {"status": "error", "message": f"importing {path.name} did not end within {limit:g} s "
                                                          f"(an endless loop?)"} for c in todo})
        return
    caller = event.get("called_by")
    what = f"{name} did not return" if name else "your code did not return"
    via = f" (called by {caller})" if caller and caller != name else ""
    # "siblings": another exercise of yours the check called (wait_on_siblings), kept with the hang
    siblings = {"siblings": event["siblings"]} if event.get("siblings") else {}
    events[check] = {"status": "error", "message": f"{what} within {limit:g} s{via} (an endless loop?)", **siblings}
    if name:
        said = {"status": "error", "message": f"not run: {name} did not return within {limit:g} s in an earlier check",
                **siblings}
        for function in {name, caller} - {None}:
            hung.setdefault(function, said)


def not_run_for_a_hang(spec: dict, check_id: str, hung: dict[str, dict]) -> dict | None:
    """The event of a check that is not run: it calls a function that hung (hang_said); else None."""
    return next((hung[c["name"]] for c in calls_of(spec, check_id) if c["name"] in hung), None)


def forward_lines(stream, lines: queue.Queue) -> None:
    """The child's lines into `lines`, then None when it closes its output."""
    for line in stream:
        lines.put(line)
    lines.put(None)


def run_exercise(read, path: Path, module, files: dict) -> list:
    """`read` (read_exercise of `path`) run in `module`: a .py file at once, a notebook's cells as
    Jupyter's Run All runs them; the cells skipped."""
    if read.cells is None:
        files[str(path)] = None
        exec(compile(read.source, str(path), "exec", dont_inherit=True), module.__dict__)   # noqa: S102
        return []
    return notebook.run_cells(read.cells, module.__dict__, str(path), files)


def exercise_stems() -> list[str]:
    """The exercises the handout checks (check_data/<stem>.json)."""
    return [p.stem for p in DATA.glob("*.json")]


def describe(err: BaseException, path: Path, files: dict, at_import: bool = False) -> str:
    """The error and where in your file (cell and line), as the grader's sandbox says it."""
    return errors.sentence(errors.error_info(err, files, at_import=at_import), path.name)
