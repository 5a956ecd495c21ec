"""Another exercise your file imports (`from attention import softmax` in causal_mask.py): which of
its functions each check called, and what a check that depends on it is worth here.

The grader gives an exercise that imports another the kit's correct version of that one, so that
one mistake is not charged twice. check.py cannot ship that version (it is the other exercise's
answer): it runs yours. So a check that does not pass, and that called another exercise of yours
that does not pass its own visible checks (or cannot be imported), is not decided here: its status
is BLOCKED ("waits on attention"), its points are not counted either way, and the reason is said
once. Checks that do not call it, or pass anyway, are judged as always.

In the child (check_child.py): `watch` wraps the other exercise's functions so that CALLS records
the ones a check called; `stand_in` gives an exercise that cannot be imported (or lacks a name)
functions that raise Unavailable, so that the checks that do not need it still run.
In check.py: `wait_on_siblings` turns the checks that wait into BLOCKED ones.
The standard library only.
"""

from __future__ import annotations

import functools
import types

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

    def record(self, stem: str, filename: str, name: str, problem: str | None) -> None:
        entry = self.called.setdefault(stem, {"file": filename, "functions": [], "problem": problem})
        if name not in entry["functions"]:
            entry["functions"].append(name)

    def merge(self, called: dict) -> None:
        """Calls made by an answer made once and read again (check_child.once_key)."""
        for stem, entry in called.items():
            for name in entry["functions"]:
                self.record(stem, entry["file"], name, entry["problem"])

    def snapshot(self) -> dict:
        return {stem: dict(entry, functions=list(entry["functions"])) for stem, entry in self.called.items()}


CALLS = Calls()


def _recorded(fn, stem: str, filename: str, problem: str | None = None):
    @functools.wraps(fn)
    def recorded(*args, **kwargs):
        if CALLS.depth == 0:
            CALLS.record(stem, filename, fn.__name__, problem)
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


def stand_in(module: types.ModuleType, stem: str, filename: str, graded, problem: str) -> None:
    """`module` as another exercise that cannot be imported: its graded names, each raising
    Unavailable when called (where the grader would call its correct version)."""
    for name in [n for n in module.__dict__ if not n.startswith("__")]:
        del module.__dict__[name]
    for name in graded:
        setattr(module, name, _stand_in_function(name, stem, filename, problem))


def _stand_in_function(name: str, stem: str, filename: str, problem: str):
    def unavailable(*args, **kwargs):
        raise Unavailable(f"{filename}'s {name} cannot be used here: {problem}")

    unavailable.__name__ = unavailable.__qualname__ = name
    return _recorded(unavailable, stem, filename, problem)


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
