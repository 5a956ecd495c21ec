"""Checks run beside the others: a slow call that needs no other check's answer (a student's
figure) is sent to a second child of the same file before the other checks start, and read
when its check asks for it.

Only where a student waits for the answer (`attnkit check`, `--watch`, the pytest plugin: the
sandbox's `interactive`): the scaling exercise's figure (0.10-0.15 s of matplotlib) then runs
on the second core while the experiment's calls run on the first. A class run does not: there
every core is already busy with another submission, and the second child would cost core time.
The answer is the same either way; the call runs in a fresh import of the same file.
"""

from __future__ import annotations

from contextlib import ExitStack
from typing import Any, Callable, Sequence

from autograder.checks.base import Check
from autograder.contract import RETURNS


def open_beside(stack: ExitStack, sandbox, stem: str, source: Any, filename: str, provided: dict,
                checks: Sequence[Check]):
    """A second session of the file, importing while the caller opens the first, or None when
    no check runs beside the others here. Closed with `stack`."""
    if not getattr(sandbox, "interactive", False) or not any(c.alongside for c in checks):
        return None
    return stack.enter_context(sandbox.session(stem, source, filename, provided=provided, deferred=True))


def send_ahead(beside, checks: Sequence[Check], inputs_of: Callable[[Check], dict]) -> None:
    """Sends the first call of the first check marked `alongside` (a child answers in order, so
    one call ahead per child). Nothing is sent when that call cannot be known in advance."""
    check = next((c for c in checks if c.alongside), None)
    if beside is None or check is None:
        return
    call = first_call(check, inputs_of(check))
    if call is not None:
        name, args, kwargs = call
        beside.call_ahead(name, list(args), kwargs, returns=RETURNS[check.exercise][name])


class _Recorded(Exception):
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
            self.call = (name, args, kwargs)
            raise _Recorded
        return record

    def fresh(self, name: str):
        return self.__getattr__(name)


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
