"""Grader side: one stem of one submission running in a child (`Session`); what its answers come
to is answers.py's.

Each call answers a CallOutcome; after a timeout or a crash the next call gets a fresh child
(at most limits.max_restarts times); a function that hung, or made a provided call that was
refused, is not called again.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from autograder.judge import arguments
from autograder.sandbox.answers import ANSWERED, clean, read_answer
from autograder.sandbox.inside import protocol
from autograder.config.limits import Limits
from autograder.sandbox.outcome import CallOutcome, Reason
from autograder.sandbox.inside.protocol import TensorArg
from autograder.sandbox.validate import check_kind


class Session:
    def __init__(self, sandbox, stem: str, source: Any, filename: str, provided: dict, needs: tuple[bool, bool]):
        self.sandbox, self.stem, self.source, self.filename = sandbox, stem, source, filename
        self.provided = provided
        self.needs = needs               # (torch, matplotlib) warm in its zygote
        self.limits: Limits = sandbox.limits
        self.restarts = 0
        self._seq = 0
        self._closed = False
        self._failure: CallOutcome | None = None   # what killed the last child
        self._not_again: dict[str, CallOutcome] = {}   # functions that hung or were refused: not called again
        self._child, self.import_outcome = self._spawn()
        if self.import_outcome.status != "ok" and self._child is not None:
            self.sandbox.discard(self._child)
            self._child = None

    def _spawn(self):
        return self.sandbox._spawn(self.stem, self.source, self.filename, self.provided, self.needs,
                                   self.limits.import_timeout)

    @property
    def layers(self) -> dict:
        """What the jail of the current child holds (pid, private_tmp, proc, capabilities)."""
        return dict(self._child.layers) if self._child is not None else {}

    # -------------------------------------------------------------- calls

    def call(self, function: str, args=(), kwargs: dict | None = None, returns: Any = "array",
             timeout: float | None = None, read_only: bool = False, echo: bool = False) -> CallOutcome:
        """`function(*args, **kwargs)` in the child, which gets the arguments as the judge's arguments.py
        hands them: an array passed several times is one array there too; with `read_only` the arrays
        are not writeable; with `echo` the answer is (value, the array arguments as the call left them)."""
        header = {"op": "call", "function": function, "same": arguments.same_groups(args)}
        if read_only:
            header["read_only"] = True
        if echo:
            header["echo"] = True
            returns = ("tuple", returns, ("tuple", *["array"] * len(arguments.array_positions(args))))
        return self._request(function, header, _call_payload(args, kwargs), returns, timeout)

    def call_each(self, function: str, calls: list[dict], returns: Any = "array",
                  timeout: float | None = None) -> list[CallOutcome]:
        """`function` called anew with each of the keyword arguments in `calls`, in one request (a
        check's many small runs: each call would cost a round trip). The outcomes up to the first
        that is not "ok", where the child stops, as a caller making one call after another would.
        The request has the time of all its calls (`timeout`, else call_timeout, each)."""
        kind = check_kind(returns)
        limit = (self.limits.call_timeout if timeout is None else timeout) * max(1, len(calls))
        sent = self._send(function, {"op": "calls", "function": function},
                          {"calls": [_call_payload((), kw) for kw in calls]}, kind, limit)
        if isinstance(sent, CallOutcome):
            return [sent]
        seq, child, reply = sent
        if isinstance(reply, CallOutcome) or reply[0].get("seq") != seq:
            return [self._answer(function, seq, kind, child, reply)]
        head, blobs, output = reply
        answers, values = head.get("answers"), head.get("value")
        if not _one_answer_each(head, answers, values, len(calls)):
            self.sandbox.kill(child)
            self._failure = CallOutcome("bad_return", message=f"gave answers that could not be read (in {function})")
            return [CallOutcome("bad_return", message="gave an answer that could not be read (not one answer per call)",
                                output=output)]
        last = len(answers) - 1      # what the calls printed goes with the last (the one that failed, if one did)
        return [self._outcome(dict(answer, value=value), blobs, output if i == last else "", kind, child, function)
                for i, (answer, value) in enumerate(zip(answers, values))]

    def attribute(self, name: str, returns: Any = "array", timeout: float | None = None) -> CallOutcome:
        return self._request(name, {"op": "attribute", "name": name}, {}, returns, timeout)

    def call_module(self, class_name: str, init_args=(), init_kwargs: dict | None = None,
                    state: dict[str, np.ndarray] | None = None, forward_args=(), forward_kwargs: dict | None = None,
                    returns: Any = ("tuple", "array", "array"), timeout: float | None = None,
                    how: dict | None = None) -> CallOutcome:
        """Instantiates the submission's torch.nn.Module subclass, copies `state` into its tensors
        (shapes checked), and calls it. Arrays in forward_args/forward_kwargs arrive as tensors,
        handed as `how` asks (the judge's torch_module.forward); with "echo" the answer is (value,
        the tensors as forward left them)."""
        payload = {"init_args": list(init_args), "init_kwargs": dict(init_kwargs or {}),
                   "state": {k: np.asarray(v) for k, v in (state or {}).items()},
                   "args": [_as_tensor(a) for a in forward_args],
                   "kwargs": {k: _as_tensor(v) for k, v in (forward_kwargs or {}).items()}}
        header = {"op": "module", "class_name": class_name} | ({"how": dict(how)} if how else {})
        if how and how.get("echo"):
            given = [*forward_args, *(forward_kwargs or {}).values()]
            returns = ("tuple", returns, ("tuple", *["array"] * len(arguments.array_positions(given))))
        return self._request(class_name, header, payload, returns, timeout)

    def _request(self, name: str, header: dict, payload: dict, returns: Any,
                 timeout: float | None) -> CallOutcome:
        kind = check_kind(returns)
        sent = self._send(name, header, payload, kind, self.limits.call_timeout if timeout is None else timeout)
        if isinstance(sent, CallOutcome):
            return sent
        seq, child, reply = sent
        return self._answer(name, seq, kind, child, reply)

    def _send(self, name: str, header: dict, payload: dict, kind: Any, limit: float):
        """One request to the current child and its reply, within `limit` seconds: (seq, child,
        reply), or the CallOutcome that refuses it without asking a child (`_refusal`)."""
        seq, frame = self._frame(header, payload, kind)
        refused = self._refusal(name)
        if refused is not None:
            return refused
        child = self._child
        return seq, child, self.sandbox.roundtrip(child, frame, limit, self.provided)

    def _frame(self, header: dict, payload: dict, kind: Any) -> tuple[int, bytes]:
        """(the next sequence number, the request's frame with it and the declared kind)."""
        seq = self._seq = self._seq + 1
        return seq, protocol.message(dict(header, returns=kind, seq=seq), payload)

    def _refusal(self, name: str) -> CallOutcome | None:
        """Why a call of `name` is answered without asking a child, else None (a live child ready)."""
        if self._closed:
            return CallOutcome("not_run", message="the session is closed")
        if self.import_outcome.status != "ok":
            o = self.import_outcome
            return CallOutcome("not_run", message=o.message, reason=o.reason, error=o.error)
        spent = self.sandbox.budget_left()
        if spent is not None:
            return spent
        if name in self._not_again:
            first = self._not_again[name]
            return CallOutcome(first.status, reason=first.reason,
                               message=f"not run again: an earlier call of {name} {first.message}")
        return self._ready_child()

    def _answer(self, name: str, seq: int, kind: Any, child, reply) -> CallOutcome:
        if isinstance(reply, CallOutcome):
            self._failure = CallOutcome(reply.status, reason=reply.reason, message=f"{reply.message} (in {name})")
            if (reply.status == "timeout" and reply.reason != Reason.BUDGET) or reply.reason == Reason.REFUSED:
                self._not_again[name] = reply     # a fresh child is kept for the other functions
            return reply
        head, blobs, output = reply
        if head.get("seq") != seq:
            self.sandbox.kill(child)
            self._failure = CallOutcome("bad_return", message=f"gave an answer out of sequence (in {name})")
            return CallOutcome("bad_return", message="gave an answer that could not be read (it arrived out of sequence)",
                               output=output)
        return self._outcome(head, blobs, output, kind, child, name)

    def _outcome(self, head: dict, blobs: list, output: str, kind: Any, child, name: str) -> CallOutcome:
        outcome = read_answer(head, blobs, output, kind)
        if outcome.reason in (Reason.MEMORY, Reason.SANDBOX) or head.get("status") not in ANSWERED:
            self.sandbox.kill(child)         # a child that ran out of memory, broke or talks nonsense
        if outcome.reason == Reason.MEMORY:
            said = clean(head.get("message"))
            self._failure = CallOutcome("crashed", reason=Reason.MEMORY, message=f"{said} (in {name})")
        return outcome

    def _ready_child(self) -> CallOutcome | None:
        """None when a live child is there (restarting one if allowed), else the outcome to answer."""
        if self._child is not None and self._child.alive:
            return None
        failure = self._failure or CallOutcome("crashed", message="the process died")
        if self.restarts >= self.limits.max_restarts:
            return CallOutcome(failure.status, reason=failure.reason,
                               message=f"not run: {failure.message}, and the process was "
                                       f"restarted {self.restarts} times already")
        self.restarts += 1
        if self._child is not None:
            self.sandbox.discard(self._child)
            self._child = None
        child, outcome = self._spawn()
        if outcome.status != "ok":
            if child is not None:
                self.sandbox.discard(child)
            self.restarts = self.limits.max_restarts
            if outcome.reason == Reason.TIMEOUT and self.sandbox.budget_left() is not None:
                return self.sandbox.budget_left()
            self._failure = CallOutcome("crashed", reason=outcome.reason,
                                        message=f"the process could not be restarted: {outcome.message}")
            return CallOutcome("crashed", reason=outcome.reason, message=self._failure.message)
        self._child = child
        return None

    def close(self) -> None:
        if self._closed:
            return
        self._closed = True
        if self._child is not None:
            self.sandbox.discard(self._child)
            self._child = None

    def __enter__(self) -> "Session":
        return self

    def __exit__(self, *exc) -> None:
        self.close()


def _one_answer_each(head: dict, answers: Any, values: Any, asked: int) -> bool:
    """A child's answer to `call_each` has the form it must: one answer (a dict) and one value per
    call made, every call "ok" but the last, and the last "ok" only if every call was made."""
    if head.get("status") != "calls" or type(answers) is not list or type(values) is not list:
        return False
    if not 0 < len(answers) == len(values) <= asked or not all(type(a) is dict for a in answers):
        return False
    if any(a.get("status") != "ok" for a in answers[:-1]):
        return False
    return len(answers) == asked or answers[-1].get("status") != "ok"


def _call_payload(args, kwargs: dict | None) -> dict:
    return {"args": list(args), "kwargs": dict(kwargs or {})}


def _as_tensor(value: Any) -> Any:
    if isinstance(value, np.ndarray):
        return TensorArg(value)
    return value
