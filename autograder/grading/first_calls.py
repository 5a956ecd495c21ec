"""The first calls of an exercise's checks, asked of its child in one request before the checks run
(`answered_ahead`, Session.call_many): the visible checks' first, the hidden checks' once every
visible check is graded. The child answers them in turn, each within its own time limit, without a
round trip between them. A check takes its answer when it makes the call; any other call it makes
goes to the child as before.
"""

from __future__ import annotations

from typing import Any, Callable, Sequence

from autograder.checks.base import Check
from autograder.checks.contract import RETURNS
from autograder.sandbox.session import call_key


class _Recorded(Exception):
    pass


class _NotPlain(Exception):
    pass


class _FirstCall:
    """Stands in for the student's implementation: learns the check's first call without making it."""

    def __init__(self, stem: str):
        self._stem = stem
        self.call: tuple[str, tuple, dict] | None = None

    def __getattr__(self, name: str):
        if name.startswith("_") or name not in RETURNS[self._stem]:
            raise AttributeError(name)

        def record(*args, **kwargs):
            if self.call is None:     # a check that caught it and called again: its first call still
                self.call = (name, args, kwargs)
            raise _Recorded
        return record

    def fresh(self, name: str):
        return self.__getattr__(name)

    def fresh_each(self, name: str, calls: list[dict]) -> list:
        raise _NotPlain       # made in one request of its own (Session.call_each), never as a single call


def first_call(check: Check, inputs: dict) -> tuple[str, tuple, dict] | None:
    """(function, args, kwargs) of the first call `check.run` makes, or None (it reads an attribute
    or a module, or raises before calling)."""
    recorder = _FirstCall(check.exercise)
    try:
        check.run(recorder, inputs)
    except _Recorded:
        return recorder.call
    except Exception:  # noqa: BLE001 - not a plain call: the check runs the ordinary way
        return None
    return None


def answered_ahead(session, checks: Sequence[Check], inputs_of: Callable[[Check], dict]) -> None:
    """The first calls of `checks` (one group: all visible, or all hidden), each plain call once,
    asked of `session` in one request (Session.call_many) before the checks run: a round trip
    each cost the grader and the child more than most of these calls. The session
    keeps the answers for the checks to `collect` (StudentImplementation); a call left
    unanswered is made by its check, as without this."""
    asked: dict[bytes, tuple[str, list, dict, Any]] = {}
    for check in checks:
        call = first_call(check, inputs_of(check))
        if call is not None:
            name, args, kwargs = call
            asked.setdefault(call_key(name, args, kwargs), (name, list(args), dict(kwargs),
                                                           RETURNS[check.exercise][name]))
    if len(asked) >= 2:
        session.call_many(list(asked.values()))
