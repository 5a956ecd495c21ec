"""Grader side: a file that only binds literal values is read, not run (`InertSession`).

Attention by hand (hand_computation.py) is numbers typed as nested lists. Running such a file
in a child costs a fork of the zygote, a jail and an exit to learn what the file already says.
Which files qualify, and how their values are read without running anything:
autograder/sandbox/literals.py (`inert_values`).

`InertSession` answers a request for such a value the way a child would: the same conversion
(the judge's `convert.reply`), the same frame bytes read back by the same reader (`protocol`), the
same outcome (`answers.read_answer`). Anything else -- a call, a name the file does not bind
with a literal, an answer that could not be framed -- goes to a real child, opened then, so the
file's grade never depends on which of the two answered.
"""

from __future__ import annotations

from typing import Any

from autograder.sandbox.literals import UNBOUND
from autograder.judge import convert
from autograder.sandbox.inside import protocol
from autograder.sandbox.outcome import CallOutcome
from autograder.sandbox.answers import read_answer
from autograder.sandbox.validate import check_kind


class _FrameBytes:
    """A received frame as the socket `protocol.recv_frame` reads from (no deadline)."""

    def __init__(self, frame: bytes):
        self._view, self._at = memoryview(frame), 0

    def settimeout(self, _timeout) -> None:
        pass

    def recv_into(self, buffer, n: int) -> int:
        chunk = self._view[self._at:self._at + n]
        buffer[:len(chunk)] = chunk
        self._at += len(chunk)
        return len(chunk)


class InertSession:
    """A Session for an inert file (see the module's docstring): its values answered here, the
    rest by a child opened when first needed (`open_child()` makes a Session)."""

    def __init__(self, sandbox, values: dict[str, Any], open_child):
        self.sandbox, self._values, self._open_child = sandbox, values, open_child
        self._child_session = None
        self.import_outcome = CallOutcome("ok")

    def attribute(self, name: str, returns: Any = "array", timeout: float | None = None) -> CallOutcome:
        value = self._values.get(name, UNBOUND)
        answer = None if value is UNBOUND else self._answer(value, check_kind(returns))
        if answer is None:
            return self._session().attribute(name, returns, timeout)
        spent = self.sandbox.budget_left()     # the submission's budget holds here too
        return spent if spent is not None else answer

    @staticmethod
    def _answer(value: Any, kind: Any) -> CallOutcome | None:
        """What a child's answer to `attribute` would be, from its own conversion and frame."""
        reply = convert.reply(value, kind)
        plain = reply.pop("value", None)
        try:
            frame = protocol.message(reply, {"value": plain})
            head, blobs = protocol.recv_frame(_FrameBytes(frame))
        except Exception:  # noqa: BLE001 - whatever a child would make of it, one decides
            return None
        return read_answer(head, blobs, "", kind)

    def _session(self):
        if self._child_session is None:
            self._child_session = self._open_child()
        return self._child_session

    def __getattr__(self, name: str):
        """call, call_module, collect, layers...: a child's."""
        if name.startswith("_"):
            raise AttributeError(name)
        return getattr(self._session(), name)

    def close(self) -> None:
        if self._child_session is not None:
            self._child_session.close()

    def __enter__(self) -> "InertSession":
        return self

    def __exit__(self, *exc) -> None:
        self.close()
