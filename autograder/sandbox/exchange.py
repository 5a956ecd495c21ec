"""Grader side: one child (init + worker) and one request/answer exchange with it.

The time limits count the child's CPU time (its cgroup's, or its worker's from /proc), so a
busy machine does not cost a correct submission points; a child that makes no progress at all
(sleeping, blocked) is stopped after the limit in wall time, and a wall backstop of
`limits.wall_factor` times the limit stops anything else. Requests the child makes on the way
(calls of provided functions) are answered here, by the grader's own implementation, bounded
(provided.py): the time spent answering counts as the child's, and answers wait in a bounded
outbox that is written only when the child reads, so the grader never blocks on a child.
"""

from __future__ import annotations

import os
import select
import socket
import tempfile
import time
from dataclasses import dataclass
from typing import Any, Callable

from autograder.judge.clock import CPU, CallClock
from autograder.sandbox.inside import protocol
from autograder.config.limits import Limits
from autograder.sandbox.outcome import Budget, Reason
from autograder.sandbox.inside.protocol import FrameTimeout
from autograder.sandbox.provided import ProvidedRefused, answer_provided
from autograder.sandbox.cgroups import ChildCgroup, process_cpu_seconds

OUTPUT_TAIL = 2048
STALL_SLACK = 0.5        # s a wait may come back late before the lateness counts as the grader's stall


class Child:
    """One child the zygote made: its pid (its init's, or without one the worker's), whether it
    said it started and is an init, its socket, capture file, cgroup and (without a jail) its
    temp folder.

    The grader asks for a child without waiting for the zygote's answer (`fork_request`): frames
    can be sent at once, and the child reads them once it is in its cgroup. `pid` waits for the
    answer the first time it is read (`settle`, the sandbox's); `unborn` says why a fork failed."""

    def __init__(self, pid: int | None, sock: socket.socket, cap_fd: int, cgroup: ChildCgroup | None,
                 tmpdir: str | None, uid: int | None):
        self._pid, self.sock, self.cap_fd, self.cgroup, self.tmpdir, self.uid = pid, sock, cap_fd, cgroup, tmpdir, uid
        self.fork_request: int | None = None
        self.settle: Callable[["Child"], bool] | None = None
        self.unborn = ""
        self.started = False     # only the first "started" is the kit's: later ones, the student's code
        self.init = False
        self.layers: dict = {}
        self.alive = True
        # An answer to the child's provided call not yet taken by its socket: one at most, since a
        # proxy reads its answer before it asks again (a child that asks again loses its call).
        self.outbox = bytearray()

    @property
    def pid(self) -> int | None:
        if self.fork_request is not None and self.settle is not None:
            self.settle(self)
        return self._pid

    @pid.setter
    def pid(self, pid: int) -> None:
        self._pid = pid

    def cpu_seconds(self) -> float:
        if self.cgroup is not None:
            used = self.cgroup.cpu_seconds()
            if used is not None:
                return used
        return sum(process_cpu_seconds(p) or 0.0 for p in self.processes())

    def processes(self) -> list[int]:
        """The child's pid and, when it is the init of a PID namespace, the init's children (host pids)."""
        pids = [self.pid] if self.pid else []
        if pids and self.init:
            try:
                with open(f"/proc/{self.pid}/task/{self.pid}/children") as f:
                    pids += [int(p) for p in f.read().split()]
            except (OSError, ValueError):
                pass
        return pids

    def output_size(self) -> int:
        try:
            return os.fstat(self.cap_fd).st_size
        except OSError:
            return 0

    def output_since(self, start: int) -> str:
        size = self.output_size()
        begin = max(start, size - OUTPUT_TAIL) if size >= start else max(0, size - OUTPUT_TAIL)
        if size <= begin:
            return ""
        try:
            data = os.pread(self.cap_fd, size - begin, begin)
        except OSError:
            return ""
        text = data.decode("utf-8", "replace")
        return "".join(ch if ch.isprintable() or ch in "\n\t" else "?" for ch in text)


class Deadline:
    """When a request has taken too long: CPU limit, no progress, wall backstop, budget.

    The submission's budget (outcome.Budget) is charged only with the time the grader waits for
    the child's answer and spends answering its provided calls, and never with a moment the grader
    itself stood still: a wait that came back later than the grader asked (its interpreter held
    by another thread, the process stopped) gives that time back to the request's clocks."""

    def __init__(self, child: Child, limit: float, limits: Limits, budget: Budget | None):
        self.child, self.limit = child, limit
        self.cpu0 = child.cpu_seconds()
        self.clock = CallClock(limit, limits.wall_factor, time.monotonic(), 0.0)   # on child_cpu()'s scale
        self.budget = budget
        self.answering = 0.0     # s the grader spent computing the child's provided calls: counted as its CPU

    def next_check(self) -> float:
        """Seconds to wait for the answer before looking at the clocks again."""
        end = self.clock.backstop - time.monotonic()
        if self.budget is not None:
            end = min(end, self.budget.seconds - self.budget.used)
        return min(0.25, max(0.01, end))

    def waited(self, asked: float, took: float) -> None:
        """A wait for the child of `asked` s that took `took`: charged to the budget; what the
        grader overslept beyond STALL_SLACK is its own stall (the budget's `stalled`), given back."""
        late = took - asked
        if late > STALL_SLACK:
            self._given_back(late)
            if self.budget is not None:
                self.budget.stalled += late
            took = asked
        self.charge(took)

    def charge(self, seconds: float) -> None:
        if self.budget is not None:
            self.budget.used += max(0.0, seconds)

    def child_cpu(self) -> float:
        """CPU seconds of the request: the child's, and the grader's answering its provided calls."""
        return self.child.cpu_seconds() - self.cpu0 + self.answering

    def expired(self, answered: bool = False) -> str | None:
        """Why the request is over its time, or None. `answered`: its answer is waiting to be
        read, so only its CPU limit counts: the wall-clock rules (no progress, the backstop, the
        budget) are about waiting for an answer, and a request read late must not be judged by
        when the grader came to read it."""
        if self.budget is not None and self.budget.used >= self.budget.seconds and not answered:
            return Reason.BUDGET
        over = self.clock.over(time.monotonic(), self.child_cpu(), waiting=not answered)
        return None if over is None else Reason.CPU if over == CPU else Reason.WALL

    def _given_back(self, away: float) -> None:
        self.clock.shift(away)

@dataclass
class Sent:
    """A request on its way: its child, its clocks, where its output starts, and why it failed
    if it could not even be sent."""
    child: Child
    deadline: Deadline
    start: int
    timeout: float
    failed: Any = None                # a CallOutcome
    again: tuple | None = None        # a new child's import: how to ask for it again if its fork failed


def init_frame(child: Child, stem: str, filename: str, source: Any, provided: dict, limits: Limits, *,
               stems: tuple[str, ...], blocked: tuple[str, ...], nproc: bool) -> bytes:
    """What a new child is told first: its file (the source, or a notebook's cells), the stems it
    may import and the names provided for them (values only: a callable is answered by the grader),
    its folder and uid without a jail, and its limits (`nproc`: the process count by rlimit, no cgroup)."""
    init = {"op": "init", "stem": stem, "filename": filename, "tmpdir": child.tmpdir, "uid": child.uid,
            "stems": list(stems), "blocked": list(blocked), "nproc": nproc,
            "provided": {s: {n: (None if callable(v) else v) for n, v in names.items()}
                         for s, names in provided.items()},
            "limits": {"cpu_seconds": limits.cpu_seconds, "memory_mb": limits.memory_mb,
                       "max_processes": limits.max_processes, "output_bytes": limits.output_bytes}}
    if isinstance(source, list):
        payload = {"cells": [{"source": str(c["source"]), "index": int(c["index"]), "solution": bool(c.get("solution")),
                              "text": str(c.get("text", c["source"]))} for c in source]}
    else:
        payload = {"source": source}
    return protocol.message(init, payload)


def exchange(child: Child, frame: bytes, deadline: Deadline, max_frame: int,
             provided: dict[str, dict[str, Callable]]) -> tuple[dict, list]:
    """Sends `frame` and reads the answer, answering the child's own requests meanwhile.
    Returns (header, blobs); raises Expired when time ran out, PeerClosed / ProtocolError."""
    send_request(child, frame, deadline)
    return receive_answer(child, deadline, max_frame, provided)


def send_request(child: Child, frame: bytes, deadline: Deadline) -> None:
    _send(child.sock, frame, deadline)


def receive_answer(child: Child, deadline: Deadline, max_frame: int,
                   provided: dict[str, dict[str, Callable]]) -> tuple[dict, list]:
    """The answer to the request sent last, the child's own requests answered meanwhile. A child
    answers its requests in order, so several may be sent before the first answer is read."""
    while True:
        header, blobs = _recv(child, deadline, max_frame)
        if header.get("op") == "provided":
            if child.outbox:
                raise ProvidedRefused("it called a kit-provided function again without reading the answer "
                                      "to the call before")
            child.outbox += _answer(header, blobs, provided, deadline)
            _flush(child)
            continue
        if header.get("event") == "started":
            if not child.started:
                child.started, child.init = True, header.get("init") is True
            continue
        if child.outbox:     # the next request must not follow an answer the child left unread
            raise ProvidedRefused("it answered without reading what the kit-provided function it called returned")
        return header, blobs


def _answer(header: dict, blobs: list, provided: dict[str, dict[str, Callable]], deadline: Deadline) -> bytes:
    """A provided call's answer; the wall (or, with BLAS threads, CPU) time it took is the child's."""
    wall0, cpu0 = time.monotonic(), time.thread_time()
    try:
        return answer_provided(header, blobs, provided)
    finally:
        spent = max(time.monotonic() - wall0, time.thread_time() - cpu0)
        deadline.answering += spent
        deadline.charge(spent)


def _flush(child: Child) -> None:
    """Hands the socket as much of the outbox as it takes now, without waiting."""
    child.sock.setblocking(False)      # a timeout would wait for the child (every other use sets its own)
    try:
        while child.outbox:
            sent = child.sock.send(child.outbox[: 1 << 20])
            del child.outbox[:sent]
    except (BlockingIOError, InterruptedError):
        pass


def _send(sock: socket.socket, frame: bytes, deadline: Deadline) -> None:
    view = memoryview(frame)
    while view:
        why = deadline.expired()
        if why:
            raise _Expired(why)
        asked, waited_from = deadline.next_check(), time.monotonic()
        try:
            protocol.send_frame(sock, bytes(view[: 1 << 20]), waited_from + asked)
            view = view[1 << 20:]
        except FrameTimeout:
            continue
        finally:
            deadline.waited(asked, time.monotonic() - waited_from)


def _recv(child: Child, deadline: Deadline, max_frame: int) -> tuple[dict, list]:
    sock = child.sock
    while True:
        readable, _, _ = select.select([sock], [], [], 0)
        why = deadline.expired(answered=bool(readable))
        if why:
            raise _Expired(why)
        if not readable or child.outbox:
            asked, waited_from = deadline.next_check(), time.monotonic()
            readable, writable, _ = select.select([sock], [sock] if child.outbox else [], [], asked)
            deadline.waited(asked, time.monotonic() - waited_from)
            if writable:
                _flush(child)
        if readable:
            # A frame has begun: read it whole, within the backstop (a child that sends half a frame
            # and stops is not making progress that CPU time could count).
            return protocol.recv_frame(sock, max(time.monotonic() + 1.0, deadline.clock.backstop), max_frame)


class _Expired(Exception):
    def __init__(self, reason: str):
        super().__init__(reason)
        self.reason = reason


Expired = _Expired


def capture_file(cap: int) -> int:
    """Where a child's prints go: a memory file (nothing on disk to clean), else an unlinked file."""
    try:
        return os.memfd_create("attnkit-output", os.MFD_CLOEXEC)
    except (AttributeError, OSError):
        with tempfile.TemporaryFile() as f:
            return os.dup(f.fileno())
