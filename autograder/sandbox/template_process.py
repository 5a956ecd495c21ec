"""Grader side: zygote templates, a zygote's imports done once per kind and forked for each
sandbox's zygote of that kind (inside/template.py).

A class run's lanes each have a sandbox, and a core that a sleeping submission lends gets one
more (grading/local_grading.py). Each sandbox's torch zygote imported torch and matplotlib again:
about 1.7 of its 2.3-2.9 core-seconds, paid per sandbox while the lanes' students waited. With
`ZygoteTemplates`, the first sandbox that wants a kind starts its template; every sandbox's
zygote of that kind is then forked from it and enters its own jail (its own private uid), as a
zygote the grader starts itself does. Only the kinds with torch or matplotlib have one: a
numpy-only zygote starts in 0.15 core-seconds.

A forked zygote is not the grader's child: `SpawnedProcess` watches and kills it through a pidfd
the template sends, and stands in for its `subprocess.Popen`.
"""

from __future__ import annotations

import collections
import functools
import json
import os
import select
import signal
import socket
import subprocess
import tempfile
import threading
import time
from typing import IO

from autograder.sandbox.zygote_process import EXIT_UNKNOWN, file_tail, start_zygote_script, wait_or_kill

ANSWER_WAIT_S = 120.0     # a bound: the template answers once its imports are done (seconds)
IMPORT_KEYS = ("torch", "matplotlib", "lean")   # what decides a zygote's imports, and so its template


@functools.cache
def templates_work() -> bool:
    """A pidfd is how the grader watches a zygote it did not start (Linux 5.3, Python 3.9): asked
    of this kernel once, since Python has the call wherever it was built on Linux."""
    if not (hasattr(os, "pidfd_open") and hasattr(signal, "pidfd_send_signal")):
        return False
    try:
        os.close(os.pidfd_open(os.getpid()))
    except OSError:
        return False
    return True


class ZygoteTemplates:
    """The templates of one class run, one per kind of zygote, started when first wanted. Shared
    by the run's sandboxes, which its lanes use from their threads."""

    def __init__(self) -> None:
        self._by_kind: dict[tuple, _Template] = {}
        self._failed: set[tuple] = set()     # kinds whose template died: their zygotes start as before
        self._lock = threading.Lock()
        self.closed = False

    def spawn(self, config: dict, zygote_ctrl: socket.socket, stderr: IO[bytes]) -> SpawnedProcess | None:
        """Asks the template of `config`'s kind for a zygote with this config, control socket and
        stderr, without waiting; None where a template would not help (numpy only) or cannot."""
        if not (config.get("torch") or config.get("matplotlib")) or not templates_work():
            return None
        kind = tuple(bool(config.get(k)) for k in IMPORT_KEYS)
        with self._lock:
            template = self._by_kind.get(kind)
            if template is not None and (template.dead or template.proc.poll() is not None):
                self._failed.add(kind)
            if self.closed or kind in self._failed:
                return None
            if template is None:
                template = self._by_kind[kind] = _Template({k: config.get(k) for k in IMPORT_KEYS})
        return template.spawn(config, zygote_ctrl, stderr)

    def close(self) -> None:
        """Every template exits; the zygotes they forked are their sandboxes' to close."""
        with self._lock:
            self.closed = True
            templates, self._by_kind = list(self._by_kind.values()), {}
        for template in templates:
            template.close()


class _Template:
    def __init__(self, imports: dict) -> None:
        ours, theirs = socket.socketpair(socket.AF_UNIX, socket.SOCK_SEQPACKET)
        self.stderr = tempfile.TemporaryFile()
        try:
            self.proc = start_zygote_script({**imports, "template": True}, theirs, self.stderr)
        finally:
            theirs.close()
        self.sock = ours
        self.waiting: collections.deque[SpawnedProcess] = collections.deque()   # in the order asked
        self.lock = threading.Lock()
        self.dead = False
        self.missing: dict | None = None    # the module its imports could not find, and why

    def spawn(self, config: dict, zygote_ctrl: socket.socket, stderr: IO[bytes]) -> SpawnedProcess:
        spawned = SpawnedProcess(self, stderr)
        data = json.dumps({"op": "spawn", "config": config}).encode("utf-8")
        with self.lock:
            try:
                socket.send_fds(self.sock, [data], [zygote_ctrl.fileno(), stderr.fileno()])
                self.waiting.append(spawned)
            except OSError:
                self.dead = True
                self._read_last_words()
                spawned.failed(self.said())
        return spawned

    def _read_last_words(self) -> None:
        """A dead template's messages still unread: which module it could not import, if that is
        why it died."""
        while True:
            try:
                data = self.sock.recv(65536, socket.MSG_DONTWAIT)
            except OSError:
                return
            if not data:
                return
            try:
                msg = json.loads(data.decode("utf-8"))
            except ValueError:
                continue
            if msg.get("event") == "missing":
                self.missing = msg

    def read_answers(self, timeout: float) -> None:
        """The answers that came, waiting up to `timeout` for the first; each goes to the oldest
        spawn still waiting. A template that exited leaves its answers readable before the end of
        its socket: a spawn answered before then has its zygote, and the rest have failed."""
        with self.lock:
            while self.waiting:
                try:
                    readable, _, _ = select.select([self.sock], [], [], max(0.0, timeout))
                    data, fds, _flags, _addr = (socket.recv_fds(self.sock, 65536, 1) if readable
                                                else (None, [], 0, None))
                except (OSError, ValueError):      # closed here: nothing more will come
                    data, fds = b"", []
                if data is None:
                    break
                timeout = 0.0
                if not data:
                    self.dead = True
                    while self.waiting:
                        self.waiting.popleft().failed(self.said())
                    break
                try:
                    msg = json.loads(data.decode("utf-8"))
                except ValueError:
                    msg = {}
                if msg.get("event") == "ready":
                    continue
                if msg.get("event") == "missing":     # its import failed: it exits, and says which
                    self.missing = msg
                    continue
                spawned = self.waiting.popleft()
                if msg.get("event") == "spawned" and fds:
                    spawned.pid, spawned.pidfd = int(msg["pid"]), fds[0]
                else:
                    for fd in fds:
                        os.close(fd)
                    spawned.failed(str(msg.get("message") or "the zygote template could not fork"))

    def said(self) -> str:
        """Why it died, as its stderr says (an import that failed, say)."""
        return f"the zygote template exited: {file_tail(self.stderr) or 'no message'}"

    def close(self) -> None:
        """The template exits; the zygotes it forked stay, their answers read first."""
        try:
            self.sock.send(json.dumps({"op": "exit"}).encode("utf-8"))
        except OSError:
            pass
        wait_or_kill(self.proc)
        self.read_answers(0.0)          # to the end of its socket: every spawn answered or failed
        self.sock.close()
        self.stderr.close()
        self.dead = True


class SpawnedProcess:
    """A zygote a template forked, as much of subprocess.Popen as the grader uses."""

    def __init__(self, template: _Template, stderr: IO[bytes]) -> None:
        self.template, self.stderr = template, stderr
        self._pid: int | None = None
        self.pidfd: int | None = None
        self.returncode: int | None = None
        self.missing: dict | None = None

    @property
    def pid(self) -> int:
        """Its pid, once the template has said it (at once, unless it is still importing)."""
        deadline = time.monotonic() + ANSWER_WAIT_S
        while self._pid is None and self.returncode is None and time.monotonic() < deadline:
            self.template.read_answers(0.2)
        return self._pid if self._pid is not None else -1

    @pid.setter
    def pid(self, value: int) -> None:
        self._pid = value

    def poll(self) -> int | None:
        if self.returncode is None and self.pidfd is None:
            self.template.read_answers(0.0)
        if self.returncode is None and self.pidfd is not None:
            if select.select([self.pidfd], [], [], 0)[0]:
                self._exited()
        return self.returncode

    def wait(self, timeout: float | None = None) -> int:
        deadline = None if timeout is None else time.monotonic() + timeout
        answer_by = time.monotonic() + ANSWER_WAIT_S
        while self.poll() is None:
            now = time.monotonic()
            left = None if deadline is None else deadline - now
            if left is not None and left <= 0:
                raise subprocess.TimeoutExpired("sandbox server", timeout)
            if self.pidfd is None:
                if now > answer_by:       # a template that never answers: its zygote is never ours
                    self.failed("the zygote template did not answer")
                    break
                self.template.read_answers(0.2 if left is None else min(0.2, left))
            elif select.select([self.pidfd], [], [], left)[0]:
                self._exited()
        return self.returncode

    def kill(self) -> None:
        if self.pidfd is None:
            self.template.read_answers(0.0)
        if self.pidfd is not None and self.returncode is None:
            try:
                signal.pidfd_send_signal(self.pidfd, signal.SIGKILL)
            except OSError:
                pass

    def failed(self, why: str) -> None:
        """It was never forked: why, where the zygote's own stderr would have said it."""
        self.returncode = EXIT_UNKNOWN
        self.missing = self.template.missing
        try:
            os.write(self.stderr.fileno(), why.encode("utf-8", "replace") + b"\n")
        except (OSError, ValueError):
            pass

    def _exited(self) -> None:
        self.returncode = EXIT_UNKNOWN
        os.close(self.pidfd)
        self.pidfd = None
