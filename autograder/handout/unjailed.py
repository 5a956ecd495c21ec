"""What check.py alone needs: your code run on your own computer, without the grader's jail.

The grader runs a submission in a jailed child of its sandbox and gives an exercise that imports
another (`from attention import softmax`) the kit's correct version of that one. check.py has
neither: it runs your file in a plain child process, stopped after the grader's time limits, and
another exercise your file imports is yours. Everything else (which file counts, how a file and a
notebook are read, the status of a call, the comparisons, causes, hints and points) is the judge's
(judge/ beside this file, the grader's own code).

    counted_files(stem, ...)   your file(s) of an exercise as the grader counts them (judge/forms.py)
    read_exercise(path)        the file's Python, or a notebook's cells as Jupyter's Run All runs them
    run_child(path, spec, ...) each check's event from the child, a new child after one whose
                               function hung; the function that hung is the one blamed
    child(...)                 the child: imports your file and runs the checks' calls on it
                               (`python unjailed.py --child [--nice] OUT_DIR STEM PATH CHECK_ID...`)
    wait_on_siblings(...)      a check that fails while it calls another exercise of yours that does
                               not pass its own checks waits on it, undecided

The child is a plain `subprocess` (no fork: the same on Linux, macOS and Windows); it stops itself
when a call outlives its limit, after saying which of your functions was running, and this side
stops it anyway a little after the wall backstop (a loop in C code that never lets the child's
own watchdog run). The limits are the grader's, by its clock (judge/clock.py): CPU time, so that a
slow or busy computer costs a correct file nothing. Each answer goes to OUT_DIR as <n>.json and
<n>.npz, n the check's place in check_data (no pickle on either side: a child started after one
that hung writes beside it, never over it); what happened is told on stdout in lines that start
with EVENT, and your own prints go to stderr. check.py itself imports numpy only once the first
child has started: the standard library only at this module's top.
"""

from __future__ import annotations

import functools
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
import types
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
    child = Path(__file__).resolve()
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


# ---------------------------------------------------------------- the child

INSTALL = {"torch": "pip install torch --index-url https://download.pytorch.org/whl/cpu (or: conda install "
                    "pytorch cpuonly -c pytorch)",
           "matplotlib": "pip install matplotlib (or: conda install matplotlib)",
           "numpy": "pip install numpy (or: conda install numpy)"}


def import_student(path: Path, stem: str, files: dict):
    """Your file run as a module, as the grader runs it: a .py file at once, a notebook cell by
    cell (a cell that raises is skipped and named, as in Jupyter's Run All). The module, the notes
    on skipped cells, the source run (a stub in it that returns None is not implemented yet), and
    name -> the skipped cell that would have defined it."""

    read = read_exercise(path)
    sys.path.insert(0, str(path.parent))       # `from attention import ...` finds your attention.py
    sys.meta_path.insert(0, CountedSiblings(path.parent, stem, files, path.name, read.source))
    sys.meta_path.insert(0, OwnModules(path.parent))
    module = types.ModuleType(stem)
    module.__file__ = str(path)
    sys.modules[stem] = module
    skipped = run_exercise(read, path, module, files)
    return (module, read.notes + [skipped_note(s) for s in skipped], read.source,
            read.skipped_definitions([s["index"] for s in skipped]))


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


KIT_FILES = "attnkit_"     # what the kit ships beside a notebook (attnkit_variant.py, attnkit_tests.py)


class OwnModules:
    """A module of your own beside your file (`from helpers import scale`, helpers.py) is not
    imported: the grader runs the exercise files only, where it is not there (judge/errors.py
    own_module says so, in both)."""

    def __init__(self, folder: Path):
        self.folder = folder

    def find_spec(self, name, path=None, target=None):
        if path is not None or name in exercise_stems() or name.startswith(KIT_FILES):
            return None
        if (self.folder / f"{name}.py").is_file() or (self.folder / name).is_dir():
            raise ModuleNotFoundError(f"No module named {name!r}", name=name)
        return None


def import_failed(err: BaseException, path: Path, files: dict) -> str:
    """What check.py says of your file that could not be run, as the grader says it."""
    said = f"{path.name} could not be run: {describe(err, path, files, at_import=True)}"
    return said + errors.own_module(said, [p.name for p in path.parent.iterdir()], exercise_stems())


class CountedSiblings:
    """`from attention import softmax` in another exercise's file gets what Python (and your Jupyter
    kernel) gets: your attention.py beside it. Where that is the untouched stub, or there is none,
    while your work on attention is in another file (attention.ipynb), the import is a stand-in that
    says so (forms.imported_stub: the grader's sentence). Its functions are recorded when a check
    calls them, and one that cannot be imported (missing, a syntax error, an error while it runs)
    is a stand-in whose functions raise: the grader gives a correct one there, so only the checks
    that call it wait on it (wait_on_siblings)."""

    def __init__(self, folder: Path, own: str, files: dict, importer: str = "", source: str = ""):
        self.folder, self.own, self.files, self.importer, self.source = folder, own, files, importer, source

    def find_spec(self, name, path=None, target=None):
        if path is not None or name == self.own or not (DATA / f"{name}.json").is_file():
            return None
        spec = load_spec(name)
        graded = spec.get("graded", [])
        py = self.folder / f"{name}.py"
        state = "missing"
        if py.is_file():
            read = read_exercise(py)
            state = "work" if read.problem is not None or forms.has_work(read.source, graded) else "stub"
        counted = counted_files(name, self.folder, graded)
        # the file that counts, or each of several names that could be the exercise's: those holding work
        found = counted.several or [counted.counting(spec.get("both_forms", "best"))]
        work = [path.name for path in found if path is not None and path != py and _holds_work(path, graded)]
        said = forms.imported_stub(self.importer, name, forms.imported_from(self.source, name), state, work)
        loader = _SiblingLoader(name, py if py.is_file() else None, self.folder, self.files, said)
        return importlib.util.spec_from_loader(name, loader, origin=str(py) if py.is_file() else None)


def _holds_work(path: Path, graded) -> bool:
    read = read_exercise(path)
    return read.problem is None and forms.has_work(read.source, graded)


class _SiblingLoader:
    def __init__(self, stem: str, path: Path | None, folder: Path, files: dict, said: str | None = None):
        self.stem, self.path, self.folder, self.files, self.said = stem, path, folder, files, said

    def create_module(self, spec):
        return None

    def exec_module(self, module) -> None:
        graded = load_spec(self.stem).get("graded", [])
        if self.said is not None:
            stand_in(module, self.stem, f"{self.stem}.py", graded, self.said, said=True)
            return
        if self.path is None:
            stand_in(module, self.stem, f"{self.stem}.py", graded,
                              f"there is no {self.stem}.py in {self.folder.name}")
            return
        read = read_exercise(self.path)
        if read.problem is not None:
            stand_in(module, self.stem, self.path.name, graded, read.problem)
            return
        module.__file__ = str(self.path)
        try:
            run_exercise(read, self.path, module, self.files)
        except Exception as err:  # noqa: BLE001 - the checks that call it wait on it; the others run
            stand_in(module, self.stem, self.path.name, graded,
                              f"{self.path.name} could not be run: {describe(err, self.path, self.files, True)}")
            return
        watch(module, self.stem, self.path.name, graded,
                       lambda name: calls.missing(self.path.name, name))


class _AbsentMeta(type):
    """A name of a package that is not installed: it can be named, subclassed and annotated with
    (`class MultiHeadSelfAttention(nn.Module)` still defines the class), never used."""

    def __getattr__(cls, name):
        if name.startswith("__"):
            raise AttributeError(name)
        return _absent(cls.package, f"{cls.__name__}.{name}")

    def __call__(cls, *args, **kwargs):
        raise ModuleNotFoundError(f"No module named {cls.package!r}", name=cls.package)


def _absent(package: str, name: str) -> type:
    return _AbsentMeta(name, (), {"package": package})


class _AbsentModule(types.ModuleType):
    def __getattr__(self, name):
        if name.startswith("__"):
            raise AttributeError(name)
        return _absent(self.__name__.split(".")[0], f"{self.__name__}.{name}")


class _AbsentFinder:
    """Imports of a package that is not installed give stand-ins, so the checks that do not use it
    still run (multihead's numpy functions beside its torch module); a check that uses it is told
    `missing_package`'s sentence."""

    def __init__(self, package: str):
        self.package = package

    def find_spec(self, fullname, path=None, target=None):
        if fullname != self.package and not fullname.startswith(self.package + "."):
            return None
        return importlib.machinery.ModuleSpec(fullname, self, is_package=True)

    def create_module(self, spec):
        module = _AbsentModule(spec.name)
        module.__path__ = []
        return module

    def exec_module(self, module) -> None:
        pass


def stand_in_for_absent(packages=("torch",)) -> None:
    """Stand-ins for those of `packages` that are not installed (check.py only: the grader has them)."""
    for package in packages:
        if importlib.util.find_spec(package) is None:
            sys.meta_path.append(_AbsentFinder(package))


def skipped_note(cell: dict) -> str:
    error = cell["error"]
    return notebook.raised_note(cell["index"], cell["first_line"], cell["solution"], error["type"], error["text"], error["line"])


def missing_package(err: BaseException) -> str | None:
    """The sentence for a package that is not installed (numpy, torch, matplotlib), else None."""
    name = getattr(err, "name", None) if isinstance(err, ImportError) else None
    top = (name or "").split(".")[0]
    return f"{top} is not installed: {INSTALL[top]}" if top in INSTALL else None


class Missing(Exception):
    """Your file defines no such name."""


class BadReturn(Exception):
    """What a function returned cannot be read as arrays (`name`: the function, `returned`: the
    type it returned), set by call()."""

    name, returned = "", ""


# A check's answers that came as bfloat16 tensors, which numpy cannot hold: said with the answer,
# for a hint to name that dtype as the grader's does.
BFLOAT16_RETURNED: set = set()


def to_plain(value):
    """Your answer as numpy arrays (tensors are detached and copied), tuples kept as tuples."""
    if isinstance(value, tuple):
        return tuple(to_plain(v) for v in value)
    if hasattr(value, "detach"):
        value = value.detach().cpu()
        if str(value.dtype) == "torch.bfloat16":
            BFLOAT16_RETURNED.add("bfloat16")
            value = value.float()
        return value.numpy()
    import numpy as np

    try:
        array = np.asarray(value)
    except (ValueError, TypeError) as err:
        raise BadReturn(f"returned {type(value).__name__}, which is not an array ({err})") from None
    if array.dtype == object:
        raise BadReturn(f"returned {type(value).__name__}, expected numbers")
    return array


def as_data(value, kind):
    """Your answer as the sandbox's child reads it (the judge's convert.py): a dict of
    statistics per d, a figure's description (series, labels, titles, legends), or arrays."""
    if kind not in ("float_dict_dict", "figure"):
        return to_plain(value)
    convert = judge("convert")

    try:
        if kind == "figure":
            return convert.describe_figure(value)
        return {int(d): row for d, row in convert.to_float_dict_dict(value).items()}
    except convert.BadReturn as err:
        raise BadReturn(err.message) from None


def call(module, step: dict, arrays: dict, results: list):
    if step["op"] == "value":                 # a constant of the hand computation
        return hand_value(module, step)
    if not hasattr(module, step["name"]):
        raise Missing(step["name"])
    decode, arguments = judge("answers").decode, judge("arguments")
    args = decode(step.get("args", []), arrays, results)
    kwargs = decode({"dict": step.get("kwargs", {})}, arrays, results)
    if step["op"] == "call":
        # arrays of this call's own, as the grader's child gets them: an array the check passed
        # several times is one array, read-only when asked (judge/arguments.py)
        same = arguments.same_groups(args)
        args, kwargs = arguments.handed(_copied(args), _copied(kwargs), same, bool(step.get("read_only")))
        returned = getattr(module, step["name"])(*args, **kwargs)
    else:
        how = {k: True for k in ("echo", "again", "read_only") if step.get(k)}
        returned = forward(getattr(module, step["name"]), step["name"], args, kwargs, how)
    try:
        if step["op"] != "call":
            return to_plain(returned)
        answer = as_data(returned, step.get("returns"))
        return (answer, tuple(to_plain(a) for a in arguments.after(args))) if step.get("echo") else answer
    except BadReturn as err:        # the grader's rule needs which function returned what (calls)
        err.name, err.returned = step["name"], type(returned).__name__
        raise


def hand_value(module, step: dict):
    """A constant of your file, read as the grader reads it (the judge's convert.to_array: lists,
    tuples, numpy scalars and arrays, Fraction, Decimal); a given input your file does not define
    is the handout's ("given": the grader needs only your answers)."""
    import numpy as np

    name = step["name"]
    if not hasattr(module, name):
        if "given" in step:
            return np.asarray(step["given"], dtype=np.float64)
        raise Missing(name)
    value = getattr(module, name)
    if value is None:
        raise NotImplementedError(name)
    convert = judge("convert")
    try:
        return convert.to_array(value)[0]
    except convert.BadReturn as err:
        bad = BadReturn(f"is {err.got}, expected {err.expected}{err.note}")
        bad.name, bad.returned = name, type(value).__name__
        raise bad from None


def _copied(value):
    """Arguments with each array a copy of its own (as the grader's child receives them)."""
    if isinstance(value, (list, tuple)):
        return type(value)(_copied(v) for v in value)
    if isinstance(value, dict):
        return {k: _copied(v) for k, v in value.items()}
    return value.copy() if type(value).__name__ == "ndarray" else value


def forward(cls, name: str, args: list, kwargs: dict, how: dict | None = None):
    """A module's forward on the check's input, the module built and its tensors handed as the
    grader does (judge/torch_module.py)."""
    import numpy as np
    import torch

    torch_module = judge("torch_module")
    mask = kwargs.get("mask")
    forward_kwargs = {} if mask is None else {"mask": torch.from_numpy(np.array(mask))}
    try:
        return torch_module.forward(cls, name, args, {}, kwargs["state"], [torch.from_numpy(np.array(kwargs["x"]))],
                                    forward_kwargs, how)
    except torch_module.CannotLoad as err:
        bad = BadReturn(err.message)
        bad.name = name
        raise bad from None


def once_key(step: dict) -> str | None:
    """The key of a call the grader makes once per submission (scalar arguments, not asked anew)."""
    values = [*step["args"], *step["kwargs"].values()]
    flat = [v for x in values for v in (x["tuple"] if isinstance(x, dict) and set(x) == {"tuple"} else [x])]
    if step["op"] != "call" or step.get("fresh") or any(isinstance(v, (list, dict)) for v in flat):
        return None
    return json.dumps([step["name"], step["args"], step["kwargs"]], sort_keys=True)


def child(out_dir: Path, stem: str, path: Path, check_ids: list[str]) -> None:
    """Import your file, run the checks' calls, write each answer to out_dir/<n>.npz."""
    channel, sys.stdout = sys.stdout, sys.stderr      # your prints go to the terminal, not the checker

    def tell(**event):
        if event.get("check") and event["status"] != "started" and CALLS.called:
            event["siblings"] = CALLS.snapshot()      # whose code this check ran besides yours
        channel.write(EVENT + json.dumps(event) + "\n")
        channel.flush()

    spec, arrays = load_spec(stem), load_arrays(stem)
    if any(step.get("returns") == "figure" for check in spec["checks"] for step in check["calls"]):
        try:
            import matplotlib
        except ImportError as err:
            tell(status="error", message=missing_package(err))
            return
        matplotlib.use("Agg")                         # as in the grader: figures are read, never shown
    files: dict = {}
    stand_in_for_absent()
    watchdog = Watchdog(tell, files, spec["limits"].get("wall_factor", WALL_FACTOR))
    watchdog.watch(None, spec["limits"]["import_timeout"])
    try:
        module, notes, source, defined_in_skipped = import_student(path, stem, files)
    except BaseException as err:  # noqa: BLE001 - what your file raised is what the checker reports
        tell(status="error", message=missing_package(err) or import_failed(err, path, files))
        return
    finally:
        watchdog.stop()
    if notes:
        tell(status="notes", notes=notes)
    checks = {c["id"]: c for c in spec["checks"]}
    made: dict = {}                 # answers of calls with only scalar arguments, made once as in the grader
    place = {c["id"]: n for n, c in enumerate(spec["checks"])}
    for check_id in check_ids:
        CALLS.clear()
        tell(status="started", check=check_id)
        BFLOAT16_RETURNED.clear()
        watchdog.watch(check_id, call_limit(spec, check_id), checks[check_id]["calls"])
        results: list = []
        try:
            for step in checks[check_id]["calls"]:
                key = once_key(step)
                if key in made:
                    answer, called = made[key]
                    CALLS.merge(called)
                else:
                    answer = call(module, step, arrays, results)
                if key is not None:
                    made[key] = answer, CALLS.snapshot()
                results.append(answer)
            answer = judge("answers").decode(checks[check_id]["answer"], {}, results)
        except Missing as err:
            tell(status=calls.check_status("missing"), check=check_id,
                 message=calls.missing(path.name, str(err), defined_in_skipped.get(str(err))))
            continue
        except NotImplementedError:
            name = checks[check_id]["calls"][0]["name"]
            still = "is still None" if checks[check_id]["kind"] == "hand" else "raises NotImplementedError"
            tell(status="not_implemented", check=check_id, message=f"not implemented yet: {name} {still}")
            continue
        except BadReturn as err:
            name = err.name or checks[check_id]["calls"][-1]["name"]
            stub = calls.stub_returned_none(name, err.returned, forms.stub_names(source, spec.get("graded", ())))
            if stub is not None:
                tell(status="not_implemented", check=check_id, message=stub)
            else:
                tell(status=calls.check_status("bad_return"), check=check_id, message=f"{name} {err}")
            continue
        except Exception as err:  # noqa: BLE001
            missing = missing_package(err)
            if missing:
                tell(status="error", check=check_id, message=missing)
                continue
            info = errors.error_info(err, files)
            tell(status="error", check=check_id, message=describe(err, path, files),
                 raised=[info["type"], info["text"]], operation=info["operation"], line=info["line"],
                 cell=info["cell"])
            continue
        finally:
            watchdog.stop()
        save(answer, out_dir / str(place[check_id]))
        tell(status="answered", check=check_id, file=str(place[check_id]), dtypes=sorted(BFLOAT16_RETURNED))


def save(answer, where: Path) -> None:
    """An answer as <where>.json, its arrays in <where>.npz (no pickle on either side)."""
    arrays: dict = {}

    def store(array):
        arrays[f"a{len(arrays)}"] = array
        return f"a{len(arrays) - 1}"

    import numpy as np

    data = judge("answers").encode(answer, store)
    np.savez(where.with_suffix(".npz"), **arrays)
    where.with_suffix(".json").write_text(json.dumps(data), encoding="utf-8")


def describe(err: BaseException, path: Path, files: dict, at_import: bool = False) -> str:
    """The error and where in your file (cell and line), as the grader's sandbox says it."""
    return errors.sentence(errors.error_info(err, files, at_import=at_import), path.name)


class Watchdog:
    """Stops this process when your file's import or a check's calls outlive their limit, by the
    grader's clock (judge/clock.py: CPU time, no progress, the wall backstop), after telling which of
    your functions was running then (the innermost frame of your file) and the check's own function."""

    POLL = 0.05      # s between two looks at the clocks

    def __init__(self, tell, files: dict, wall_factor: float):
        import threading

        self.tell, self.files, self.wall_factor = tell, files, wall_factor
        self.main = threading.main_thread().ident
        self.current = None          # (check id or None for the import, limit, calls, its clock)
        threading.Thread(target=self.look, daemon=True).start()

    def watch(self, check_id: str | None, limit: float, calls: list = ()) -> None:
        """From now on: `check_id`'s calls (None: the import of your file) against `limit`."""
        import time

        self.current = (check_id, limit, calls, clock.CallClock(limit, self.wall_factor, time.monotonic(),
                                                          time.process_time()))

    def stop(self) -> None:
        self.current = None

    def look(self) -> None:
        import time

        while True:
            time.sleep(self.POLL)
            current = self.current
            if current is not None and current[3].over(time.monotonic(), time.process_time()):
                self.expired(*current[:3])

    def expired(self, check_id: str | None, limit: float, calls: list) -> None:
        frame = sys._current_frames().get(self.main)
        running = None
        while frame is not None:
            if frame.f_code.co_filename in self.files and frame.f_code.co_name != "<module>":
                running = frame.f_code.co_name
                break
            frame = frame.f_back
        names = {c["name"] for c in calls}
        self.tell(status="hung", check=check_id, limit=limit, function=running,
                  called_by=next(iter(names)) if len(names) == 1 else None)
        os._exit(3)


# ---------------------------------------------------------------- another exercise of yours
#
# The grader gives an exercise that imports another the kit's correct version of that one, so that
# one mistake is not charged twice. check.py cannot ship that version (it is the other exercise's
# answer): it runs yours. So a check that does not pass, and that called another exercise of yours
# that does not pass its own visible checks (or cannot be imported), is not decided here: its status
# is BLOCKED ("waits on attention"), its points are not counted either way, and the reason is said
# once. Checks that do not call it, or pass anyway, are judged as always.
# In the child: `watch` wraps the other exercise's functions so that CALLS records the ones a check
# called; `stand_in` gives an exercise that cannot be imported (or lacks a name) functions that
# raise Unavailable, so that the checks that do not need it still run. In check.py:
# `wait_on_siblings` turns the checks that wait into BLOCKED ones.

BLOCKED = "blocked"


class Unavailable(Exception):
    """A function of another exercise of yours that could not be imported was called."""


class Calls:
    """The other exercises' functions called since the last clear(): {stem: {"file", "functions",
    "problem"}}, the functions in the order first called; a call made from inside another
    exercise's function (its own helpers) is not one the check made."""

    def __init__(self):
        self.called: dict[str, dict] = {}
        self.depth = 0

    def clear(self) -> None:
        self.called = {}

    def record(self, stem: str, filename: str, name: str, problem: str | None, said: bool = False) -> None:
        entry = self.called.setdefault(stem, {"file": filename, "functions": [], "problem": problem,
                                              **({"said": True} if said else {})})
        if name not in entry["functions"]:
            entry["functions"].append(name)

    def merge(self, called: dict) -> None:
        """Calls made by an answer made once and read again (once_key)."""
        for stem, entry in called.items():
            for name in entry["functions"]:
                self.record(stem, entry["file"], name, entry["problem"], entry.get("said", False))

    def snapshot(self) -> dict:
        return {stem: dict(entry, functions=list(entry["functions"])) for stem, entry in self.called.items()}


CALLS = Calls()


def _recorded(fn, stem: str, filename: str, problem: str | None = None, said: bool = False):
    @functools.wraps(fn)
    def recorded(*args, **kwargs):
        if CALLS.depth == 0:
            CALLS.record(stem, filename, fn.__name__, problem, said)
        CALLS.depth += 1
        try:
            return fn(*args, **kwargs)
        finally:
            CALLS.depth -= 1

    return recorded


def watch(module: types.ModuleType, stem: str, filename: str, graded, missing_reason) -> None:
    """The functions defined in `module` (another exercise, imported) recorded when called; a graded
    name it does not define is a stand-in (`missing_reason(name)`: why, in words)."""
    namespace = module.__dict__
    for name, value in list(namespace.items()):
        if isinstance(value, types.FunctionType) and value.__globals__ is namespace:
            namespace[name] = _recorded(value, stem, filename)
    for name in graded:
        if name not in namespace:
            namespace[name] = _stand_in_function(name, stem, filename, missing_reason(name))


def stand_in(module: types.ModuleType, stem: str, filename: str, graded, problem: str, said: bool = False) -> None:
    """`module` as another exercise that cannot be imported: its graded names, each raising
    Unavailable when called (where the grader would call its correct version). `said`: `problem`
    is the whole sentence a check that waits on it says (forms.imported_stub)."""
    for name in [n for n in module.__dict__ if not n.startswith("__")]:
        del module.__dict__[name]
    for name in graded:
        setattr(module, name, _stand_in_function(name, stem, filename, problem, said))


def _stand_in_function(name: str, stem: str, filename: str, problem: str, said: bool = False):
    def unavailable(*args, **kwargs):
        raise Unavailable(problem if said else f"{filename}'s {name} cannot be used here: {problem}")

    unavailable.__name__ = unavailable.__qualname__ = name
    return _recorded(unavailable, stem, filename, problem, said)


# ---------------------------------------------------------------- check.py: the checks that wait

def called_by(spec: dict) -> set[str]:
    """The other exercises of yours that an exercise's checks called (its spec["called"])."""
    return {sibling for called in spec.get("called", {}).values() for sibling in called}


def why_not_trusted(sibling: str, entry: dict, outcomes_of) -> str | None:
    """Why another exercise of yours cannot stand in for the grader's correct one (None: it passes
    its own visible checks). `outcomes_of(stem)`: that exercise's Outcomes, checked if need be."""
    if entry.get("problem"):
        return entry["problem"]
    outcomes = outcomes_of(sibling)
    bad = [o for o in outcomes if o.status != "passed"]
    if not outcomes or not bad:
        return None
    one = len(bad) == 1
    if all(o.status == "not_implemented" for o in bad):
        return f"{len(bad)} of its {len(outcomes)} visible checks {'is' if one else 'are'} not implemented yet"
    return f"{len(bad)} of its {len(outcomes)} visible checks {'does' if one else 'do'} not pass"


def waiting_sentence(stem: str, caller: str, sibling: str, entry: dict, why: str) -> str:
    if entry.get("said"):             # the import itself loads no work of yours: its sentence alone
        return why
    functions = entry["functions"]
    names = " and ".join(functions)
    if entry.get("problem"):
        state = f"which cannot be used yet: {why}"
    else:
        state = f"which {'does' if len(functions) == 1 else 'do'} not pass {sibling}'s own checks yet ({why})"
    return (f"{caller} calls your {entry['file']}'s {names}, {state}; the grader checks {stem} with a correct "
            f"{sibling}: fix {entry['file']} first")


def wait_on_siblings(checked: dict, check_sibling) -> dict:
    """`checked` ({stem: (outcomes, spec)}, spec["called"]: {check id: the other exercises it
    called}) with each check that did not pass and called another exercise of yours that is not to
    be trusted BLOCKED, its message the reason. `check_sibling(stem)`: (outcomes, spec) of an
    exercise not in `checked`, checked once when needed."""
    extra: dict = {}

    def outcomes_of(sibling: str) -> list:
        if sibling in checked:
            return checked[sibling][0]
        if sibling not in extra:
            extra[sibling] = check_sibling(sibling)
        return extra[sibling][0]

    settled = {}
    for stem, (outcomes, spec) in checked.items():
        called = spec.get("called", {})
        settled[stem] = ([_waiting(stem, o, called.get(o.check["id"], {}), outcomes_of) for o in outcomes], spec)
    return settled


def _waiting(stem: str, outcome, called: dict, outcomes_of):
    if outcome.status == "passed" or not called:
        return outcome
    caller = outcome.check["calls"][0]["name"] if outcome.check.get("calls") else stem
    for sibling, entry in called.items():
        why = why_not_trusted(sibling, entry, outcomes_of)
        if why is not None:
            fields = dict(vars(outcome), status=BLOCKED, hint="", mistakes=(),
                          message=waiting_sentence(stem, caller, sibling, entry, why))
            waiting = type(outcome)(**fields)
            waiting.waiting_on = sibling
            return waiting
    return outcome


def child_main(argv: list[str]) -> None:
    """`python unjailed.py --child [--nice] OUT_DIR STEM PATH CHECK_ID...` (check.py starts it; you need
    not): the exercise STEM's checks on the file PATH, your file of it."""
    nice = argv[:1] == ["--nice"]
    if nice and hasattr(os, "nice"):    # check.py asks: another child, slower to start, goes first
        os.nice(5)
    args = argv[1:] if nice else argv
    try:
        import numpy  # noqa: F401
    except ImportError:
        print(EVENT + json.dumps({"status": "error", "message": "numpy is not installed: pip install numpy "
                                                                 "matplotlib (or: conda install numpy matplotlib)"}))
        return
    child(Path(args[0]), args[1], Path(args[2]), args[3:])


if __name__ == "__main__" and sys.argv[1:2] == ["--child"]:
    child_main(sys.argv[2:])
