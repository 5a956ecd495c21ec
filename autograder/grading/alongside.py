"""Checks run beside the others: a slow call that needs no other check's answer (a student's
figure, the hidden run with other dims) is sent to a second child of the same file before the
other checks start, and read when its check asks for it.

Only where a student waits for the answer (`attnkit check`, `--watch`, the pytest plugin: the
sandbox's `interactive`): the scaling exercise's figure (0.03-0.05 s of matplotlib in a new
child), then its hidden run with other dims (0.02 s), run on the second core while the
experiment's other calls run on the first. A class run does not: there every core is already
busy with another submission, and the second child would cost core time.

The second child answers in order, one call at a time: the visible checks' calls first, and a
hidden check's call is sent only once every call before it has been answered and read
(`Session.call_ahead` queues it; `collect` and `poll_ahead` read, and so does every wait for the
first child: sandbox/ahead.py's `CallsAhead`). So no child is ever given a hidden check's inputs
before it has answered a visible one (grading's `_visible_first`), and the second child is given
its next call as soon as it has answered. The answers are the same either way.

Everywhere (a class run too), the first calls of an exercise's checks are asked of its child in
one request before the checks run (`answered_ahead`, Session.call_many): the visible checks'
first, the hidden checks' once every visible check is graded. The child answers them in turn,
each within its own time limit, without a round trip between them (43 requests for a correct
submission became 22). A check takes its answer when it makes the call; any other call it makes
goes to the child as before.
"""

from __future__ import annotations

from contextlib import ExitStack
from typing import Any, Callable, Sequence

from autograder.checks.base import Check
from autograder.checks.contract import RETURNS
from autograder.sandbox.session import call_key
from autograder.speedups import on


def open_beside(stack: ExitStack, sandbox, stem: str, source: Any, filename: str, provided: dict,
                checks: Sequence[Check]):
    """A second session of the file, importing while the caller opens the first, or None when
    no check runs beside the others here. Closed with `stack`."""
    if not getattr(sandbox, "interactive", False) or not any(c.alongside for c in checks) or not on("alongside"):
        return None
    return stack.enter_context(sandbox.session(stem, source, filename, provided=provided, deferred=True))


def send_ahead(beside, checks: Sequence[Check], inputs_of: Callable[[Check], dict],
               hidden: Callable[[Check], bool]) -> None:
    """Sends the first call of each check marked `alongside` to `beside`, the visible checks'
    first: the child gets each call once it has answered the ones before (see above). Nothing is
    sent for a check whose call cannot be known in advance."""
    if beside is None:
        return
    for check in sorted((c for c in checks if c.alongside), key=hidden):
        call = first_call(check, inputs_of(check))
        if call is not None:
            name, args, kwargs = call
            beside.call_ahead(name, list(args), kwargs, returns=RETURNS[check.exercise][name])


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
    each cost the grader and the child more than most of these calls (issue 23.1). The session
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
