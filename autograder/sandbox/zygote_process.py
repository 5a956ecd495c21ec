"""Grader side: the zygote as a process -- forked from its template (template_process.py),
asked to fork, told to exit -- and the events it reports (ready with the layers of its jail,
forked, exited).
"""

from __future__ import annotations

import itertools
import json
import os
import socket
import subprocess
import tempfile
import time
from typing import Any

from autograder.sandbox.cgroups import kill_tree
from autograder.sandbox.interpreter import MissingModule
from autograder.sandbox.outcome import SandboxError
from autograder.sandbox.template_process import file_tail, read_events, spawn_zygote, wait_or_kill

UID_BASE = 1_000_000
_SANDBOX_IDS = itertools.count()


def next_private_uid() -> int:
    """As root: a private uid for one Sandbox, unique among the Sandboxes of this process and,
    by the pid, among the grader processes of this machine."""
    return UID_BASE + (os.getpid() % (1 << 14)) * 64 + next(_SANDBOX_IDS) % 64


class _ZygoteDied(Exception):
    pass


class _Zygote:
    """One zygote process and its control socket. Events are read synchronously."""

    def __init__(self, config: dict) -> None:
        ours, theirs = socket.socketpair(socket.AF_UNIX, socket.SOCK_SEQPACKET)
        self.stderr = tempfile.TemporaryFile()
        try:
            self.proc = spawn_zygote(config, theirs, self.stderr)
        finally:
            theirs.close()
        self.sock = ours
        self.config = config
        self.ready = False
        self.layers: dict = {}
        self.modules: dict = {}             # name -> [version, file], as it imported them
        self.missing: dict | None = None    # the module it could not import, and why
        self.torch = bool(config.get("torch", True))
        self.dead = False
        self.asked_to_exit = False
        self.exits: dict[int, tuple[int | None, int | None]] = {}
        self.forked: dict[int, Any] = {}
        self.live: set[int] = set()
        self.forgotten: set[int] = set()   # children nobody will ask about: drop their exit reports
        self.unanswered: set[int] = set()  # fork requests the zygote has not answered yet
        self._ids = itertools.count(1)

    @property
    def pid(self) -> int:
        return self.proc.pid

    def alive(self) -> bool:
        if not self.dead and self.proc.poll() is not None:
            self.poll(0)
            self.dead = True
        return not self.dead

    def ready_now(self) -> bool:
        """Whether it is alive and ready, asked without waiting (its news read first)."""
        if not self.ready and self.alive():
            self.poll(0)
        return self.ready and self.alive()

    def wait_ready(self, timeout: float) -> None:
        deadline = time.monotonic() + timeout
        while not self.ready:
            if self.dead or time.monotonic() > deadline:
                raise self._start_failed("did not start")
            self.poll(min(0.5, max(0.0, deadline - time.monotonic())))
            if not self.ready and self.proc.poll() is not None:
                self.poll(0)
                self.dead = self.dead or not self.ready
                if self.dead:
                    code = self.proc.returncode
                    raise self._start_failed(f"exited with code {code}")

    def _start_failed(self, how: str) -> SandboxError:
        try:
            self.proc.wait(timeout=1.0)
        except (subprocess.TimeoutExpired, OSError):
            pass
        missing = self.missing or self.proc.missing     # its template's imports
        if missing:
            return MissingModule(str(missing.get("module")), str(missing.get("error")))
        return SandboxError(f"the sandbox server {how}: {self.stderr_tail() or 'no message'}")

    def poll(self, timeout: float = 0.0) -> None:
        """Handles every event that is ready, waiting up to `timeout` for the first one."""
        if not self.dead:
            self.dead = read_events(self.sock, timeout, self._handle)

    def _handle(self, msg: dict) -> None:
        event = msg.get("event")
        if event == "ready":
            self.ready = True
            self.layers = msg.get("layers") if isinstance(msg.get("layers"), dict) else {}
            self.modules = msg.get("modules") if isinstance(msg.get("modules"), dict) else {}
        elif event == "missing":
            self.missing = msg
        elif event == "forked":
            placed = msg.get("placed")
            self.unanswered.discard(msg.get("id"))
            self.forked[msg.get("id")] = (int(msg["pid"]), placed if placed in (True, False) else None)
            self.live.add(int(msg["pid"]))
        elif event == "fork_failed":
            self.unanswered.discard(msg.get("id"))
            self.forked[msg.get("id")] = str(msg.get("message", "fork failed"))
        elif event == "exit":
            pid = int(msg["pid"])
            self.live.discard(pid)
            if pid in self.forgotten:
                self.forgotten.discard(pid)
            else:
                self.exits[pid] = (msg.get("code"), msg.get("signal"))

    def request_fork(self, sess_fd: int, cap_fd: int, procs: list[int]) -> int:
        """Asks for a child, without waiting: its request id, for `fork_answer`. `procs`: the
        cgroup.procs files (open for writing) the zygote puts it in before it lets it start."""
        request = next(self._ids)
        data = json.dumps({"op": "fork", "id": request}).encode("utf-8")
        try:
            socket.send_fds(self.sock, [data], [sess_fd, cap_fd, *procs])
        except OSError as err:
            self.dead = True
            raise _ZygoteDied(str(err)) from None
        self.unanswered.add(request)
        return request

    def await_answers(self, timeout: float = 5.0) -> None:
        """Until the zygote has answered every fork asked of it: then `live` names all its children
        (a hunt for a child's orphans among the zygote's children spares those in it)."""
        deadline = time.monotonic() + timeout
        while self.unanswered and self.alive() and time.monotonic() < deadline:
            self.poll(min(0.2, max(0.0, deadline - time.monotonic())))

    def fork_answer(self, request: int, timeout: float = 30.0) -> tuple[int, bool | None] | None:
        """(pid, placed) for a `request_fork`, waiting up to `timeout`; None if it has not come
        yet. placed: True, False (the zygote could not: the grader must, then `go`), or None
        (no cgroup). Raises _ZygoteDied when the fork failed or the zygote died."""
        deadline = time.monotonic() + timeout
        while request not in self.forked:
            if not self.alive():
                raise _ZygoteDied("the sandbox server died")
            remaining = deadline - time.monotonic()
            if remaining <= 0:
                self.poll(0)
                if request in self.forked:
                    break
                if timeout > 0:
                    raise _ZygoteDied("the sandbox server did not answer")
                return None
            self.poll(min(0.2, remaining))
        answer = self.forked.pop(request)
        if isinstance(answer, str):
            raise _ZygoteDied(answer)
        return answer

    def go(self, pid: int) -> None:
        """The child `pid`, placed in its cgroup by the grader, may start."""
        try:
            self.sock.send(json.dumps({"op": "go", "pid": pid}).encode("utf-8"))
        except OSError:
            pass      # the zygote is gone, and its children with it

    def wait_exit(self, pid: int, timeout: float) -> tuple[int | None, int | None] | None:
        deadline = time.monotonic() + timeout
        while pid not in self.exits:
            remaining = deadline - time.monotonic()
            if remaining <= 0 or not self.alive():
                break
            self.poll(min(remaining, 0.1))
        return self.exits.pop(pid, None)

    def stderr_tail(self) -> str:
        """What it said on stderr; before it was forked, what its template said."""
        own = file_tail(self.stderr)
        return own or self.proc.stderr_tail()

    def ask_to_exit(self) -> None:
        """Tells the zygote to kill its children and exit, without waiting: a sandbox asks all of
        its zygotes before it waits for any, so that they wind down together."""
        if not self.dead and not self.asked_to_exit:
            self.asked_to_exit = True
            try:
                self.sock.send(json.dumps({"op": "exit"}).encode("utf-8"))
            except OSError:
                pass

    def close(self) -> None:
        self.ask_to_exit()
        try:
            self.sock.close()
        except OSError:
            pass
        wait_or_kill(self.proc)
        for pid in list(self.live):
            kill_tree(pid, self.pid, set())
        self.live.clear()
        self.dead = True
        self.stderr.close()


