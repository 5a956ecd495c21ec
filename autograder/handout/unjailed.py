"""check.py's runner: reads an exercise file as the grader does, and runs its checks in a child.

    read_exercise(path)        the file's Python, or a notebook's cells as Jupyter's Run All runs
                               them (check_notebook.py, the grader's own reading)
    counted_files(stem, ...)   the form(s) of an exercise the grader grades (check_forms.choose)
    run_child(path, spec, ...) each check's event from the child (check_child.py), a new child after
                               one whose function hung; the function that hung is the one blamed

The child is a plain `subprocess` (no fork: the same on Linux, macOS and Windows); it stops itself
when a call outlives its limit, after saying which of your functions was running, and this side
stops it anyway a little after the wall backstop (a loop in C code that never lets the child's
own watchdog run). The limits are the grader's, by its clock (check_clock.py): CPU time, so that
a slow or busy computer costs a correct file nothing.
The standard library only.
"""

from __future__ import annotations

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
FORMAT = 4                    # of check_data/*.json; a checker reads only the format it was written for
EVENT = "@@check "            # the child's lines to the checker start with this; your prints go to stderr
GRACE = 3.0                   # s after the wall backstop before the child is stopped from here (its watchdog failed)
WALL_FACTOR = 5.0             # the grader's default (course.yml limits.wall_factor), for data without it

if __package__:
    from autograder.judge import forms as check_forms, notebook as check_notebook
    from autograder.judge.clock import backstop
else:
    from judge import forms as check_forms, notebook as check_notebook
    from judge.clock import backstop


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
    `read_cells`, `left_out`: a notebook's cells as read (check_notebook.Cell), kept and left out."""
    path: Path
    source: str = ""
    cells: list | None = None
    notes: list = field(default_factory=list)
    problem: str | None = None
    read_cells: list = field(default_factory=list)
    left_out: list = field(default_factory=list)

    def skipped_definitions(self, raised: list[int]) -> dict[str, int]:
        """name -> the skipped cell that would have defined it, the cells numbered `raised` having
        raised when run (check_notebook.skipped_definitions, as the grader finds them)."""
        return check_notebook.skipped_definitions(self.read_cells, self.left_out, raised)


def read_exercise(path: Path) -> Exercise:
    """The file as the grader reads it (autograder/intake/load.py does the same with these modules)."""
    name = path.name
    try:
        data = path.read_bytes()
    except OSError as err:
        return Exercise(path, problem=f"{name} cannot be read: {err.strerror or err}")
    if not data.strip():
        return Exercise(path, problem=f"{name} is empty")
    try:
        text = data.decode("utf-8-sig")
    except UnicodeDecodeError as err:
        line = data[: err.start].count(b"\n") + 1
        return Exercise(path, problem=f"{name} is not UTF-8 text (byte 0x{data[err.start]:02x} on line {line}); "
                                      f"save it as UTF-8")
    if path.suffix.lower() != ".ipynb":
        return Exercise(path, text, problem=check_notebook.compile_problem(text, name))
    cells = check_notebook.notebook_cells(text, name, kit_roles_run=("numbers",))
    if isinstance(cells, tuple):
        return Exercise(path, problem=cells[0])
    kept, notes, left_out = check_notebook.compiled_cells(cells, name)
    if kept is None:
        return Exercise(path, problem=notes)
    return Exercise(path, "\n\n".join(c.source for c in kept) + "\n", [c.as_dict() for c in kept], list(notes),
                    read_cells=kept, left_out=list(left_out))


def counted_files(stem: str, folder: Path, graded: list[str]) -> tuple[list[Path], str]:
    """The file(s) of `stem` in `folder` the grader grades (check_forms.choose: the form holding
    work; both when both do, the better counting) and why, in words."""
    forms, paths = [], {}
    for path in (folder / f"{stem}.py", folder / f"{stem}.ipynb"):
        if path.is_file():
            read = read_exercise(path)
            forms.append(check_forms.Form(path.name, read.problem,
                                          read.problem is None and check_forms.has_work(read.source, graded)))
            paths[path.name] = path
    if not forms:
        return [], ""
    chosen = check_forms.choose(forms)
    why = chosen.note or ("the only one here" if len(forms) == 1 else "")
    return [paths[f.filename] for f in (chosen.graded, chosen.alternative) if f is not None], why


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
    child = HERE / "check_child.py"
    env = dict(os.environ, PYTHONIOENCODING="utf-8")
    while todo:
        for check_id in todo:
            said = not_run_for_a_hang(spec, check_id, hung)
            if said is not None:
                events[check_id] = said
        todo = [c for c in todo if c not in events]
        if not todo:
            break
        proc = subprocess.Popen([sys.executable, str(child), *(["--nice"] if yielding else []),
                                 str(out_dir), str(path), *todo], stdout=subprocess.PIPE, text=True,
                                encoding="utf-8", errors="replace", cwd=str(path.parent), env=env)
        lines: queue.Queue = queue.Queue()
        threading.Thread(target=forward_lines, args=(proc.stdout, lines), daemon=True).start()
        if meanwhile is not None:
            threading.Thread(target=meanwhile, daemon=True).start()
            meanwhile = None
        running, limit = None, spec["limits"]["import_timeout"]        # None: your file is being imported
        wall_factor = spec["limits"].get("wall_factor", WALL_FACTOR)
        deadline = time.monotonic() + backstop(limit, wall_factor) + GRACE
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
                deadline = time.monotonic() + backstop(limit, wall_factor) + GRACE
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
    # "siblings": another exercise of yours the check called (check_siblings.py), kept with the hang
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
