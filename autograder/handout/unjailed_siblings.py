"""check.py: another exercise of yours that a check calls (`from attention import softmax`).

The grader gives an exercise that imports another the kit's correct version of that one, so that
one mistake is not charged twice. check.py cannot ship that version (it is the other exercise's
answer): it runs yours. So a check that does not pass, and that called another exercise of yours
that does not pass its own visible checks (or cannot be imported), is not decided here: its status
is BLOCKED ("waits on attention"), its points are not counted either way, and the reason is said
once. Checks that do not call it, or pass anyway, are judged as always.
In the child: `watch` wraps the other exercise's functions so that CALLS records the ones a check
called; `stand_in` gives an exercise that cannot be imported (or lacks a name) functions that
raise Unavailable, so that the checks that do not need it still run. In check.py:
`wait_on_siblings` turns the checks that wait into BLOCKED ones.
In the child, CountedSiblings makes that import find what Python (and your Jupyter kernel) finds.
"""

from __future__ import annotations

import functools
import importlib.util
import types
from pathlib import Path

if __package__:               # in the kit
    from . import unjailed
else:                         # beside check.py (or run as the child: its folder is on the path)
    import unjailed

calls, forms = unjailed.calls, unjailed.forms
DATA, counted_files, describe, load_spec, read_exercise, run_exercise = (
    unjailed.DATA, unjailed.counted_files, unjailed.describe, unjailed.load_spec, unjailed.read_exercise,
    unjailed.run_exercise)


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
