"""Student bytes the grader must parse itself (an uploaded archive, a notebook's JSON and cells)
are parsed in a child process under limits of its own: CPU time, memory, wall time and the size
of its answer.

The parsers are the standard library's and IPython's, and some are slow or greedy on crafted
input whatever the interpreter's patch level (tarfile's pax headers in quadratic time, a GNU
long-name header declaring gigabytes that tarfile reads whole, IPython's input transformer
re-reading a whole cell for every `!` line). In the grader they would hold the interpreter and
its memory, and every lane with them. In a child, they cost only the child: past its CPU time or
memory it dies, and the upload is refused with a message that names it.

A helper process, started once per grader process on first use from a clean interpreter that
imports only the parsers, forks one child per parse: a fork of a small single-threaded process
(never of the grader, whose threads and libraries make forking slow and unsafe). Requests and
answers are JSON; nothing a child says is more than data to the grader. This module is the
grader's side; the helper and its children are parse_helper.py.
"""

from __future__ import annotations

import atexit
import hashlib
import json
import os
import signal
import socket
import struct
import subprocess
import sys
import threading
import time
from collections import OrderedDict
from dataclasses import asdict, dataclass
from pathlib import Path

@dataclass(frozen=True)
class ParseLimits:
    """One parse's limits; an honest upload (an archive of 64 MB, a notebook of 2 MB) takes a small
    part of them."""
    cpu_seconds: int = 10
    memory_mb: int = 256          # above what the helper maps; a lane each may be parsing at once
    wall_seconds: float = 60.0    # a child starved by a busy machine, not one that works: see _exchange()
    answer_bytes: int = 32 * 1024 * 1024

    def described(self, what: str = "") -> str:
        cpu, memory = f"{self.cpu_seconds} s of CPU time", f"{self.memory_mb} MB of memory"
        return {"memory": memory, "cpu": cpu}.get(what, f"{cpu} or {memory}")


LIMITS = ParseLimits()
HEADER = struct.Struct("!Q")       # the framing of a request or an answer: its length
MAX_REQUEST = 64 * 1024 * 1024
_REFUSALS_KEPT = 256
_START_SECONDS = 60.0
_BOOT = ("import json, sys; sys.path[:] = json.loads(sys.argv[1]); "
         "import autograder.intake.parse_helper as h; h.serve(int(sys.argv[2]))")


class OverLimit(Exception):
    """The bytes could not be parsed within the limits: the upload's doing (its message says which)."""


class ParserUnavailable(RuntimeError):
    """The grader could not parse at all (no helper, no fork, a machine too busy to let a child
    run): the grader's failure, never held against the student."""


def run(op: str, args: list, *, limits: ParseLimits = LIMITS, memo: str | None = None):
    """The value of parse_helper.OPS[op](*args), computed in a bounded child. Raises OverLimit when the child
    went past its limits (remembered under `memo`, a digest of the bytes: the same bytes are
    refused again at once), ParserUnavailable when it could not run."""
    with _REFUSED_LOCK:
        refused = _refused.get(memo) if memo is not None else None
    if refused is not None:
        raise OverLimit(refused)
    request = json.dumps({"op": op, "args": args, "limits": asdict(limits)}, ensure_ascii=False).encode()
    try:
        return _HELPER.ask(request, limits)
    except OverLimit as err:
        if memo is not None:
            with _REFUSED_LOCK:
                _refused[memo] = str(err)
                while len(_refused) > _REFUSALS_KEPT:
                    _refused.popitem(last=False)
        raise


def digest(*parts: bytes | str) -> str:
    """A key for run()'s `memo`: the bytes parsed and whatever else decides the answer."""
    h = hashlib.sha256()
    for part in parts:
        data = part.encode("utf-8", "surrogateescape") if isinstance(part, str) else part
        h.update(HEADER.pack(len(data)) + data)
    return h.hexdigest()


_refused: OrderedDict[str, str] = OrderedDict()
_REFUSED_LOCK = threading.Lock()


# ---------------------------------------------------------------- the grader's side


class _Helper:
    """The helper process, started on first use and again if it died."""

    def __init__(self):
        self._lock = threading.RLock()
        self._proc: subprocess.Popen | None = None
        self._ctrl: socket.socket | None = None
        self._owner = 0       # the pid that started it: a forked grader starts its own

    def ask(self, request: bytes, limits: ParseLimits):
        ours, theirs = socket.socketpair(socket.AF_UNIX, socket.SOCK_STREAM)
        try:
            with theirs:
                self._hand_over(theirs)
            return _exchange(ours, request, limits)
        finally:
            ours.close()

    def _hand_over(self, conn: socket.socket) -> None:
        with self._lock:
            for attempt in (1, 2):
                try:
                    ctrl = self._running()
                    socket.send_fds(ctrl, [b"p"], [conn.fileno()])
                    return
                except OSError as err:
                    self.stop()
                    if attempt == 2:
                        raise ParserUnavailable(f"the grader's parser could not start ({err})") from None

    def _running(self) -> socket.socket:
        if self._proc is not None and self._owner == os.getpid() and self._proc.poll() is None:
            return self._ctrl
        self.stop()
        ours, theirs = socket.socketpair(socket.AF_UNIX, socket.SOCK_STREAM)
        path = [str(Path(__file__).resolve().parents[2])] + [p for p in sys.path if isinstance(p, str) and p]
        try:
            # -I -S: no environment, no current folder (it may be a class of submissions), no site:
            # the grader's own import path is handed over, so the helper imports what the grader does.
            self._proc = subprocess.Popen(
                [sys.executable, "-I", "-S", "-c", _BOOT, json.dumps(path), str(theirs.fileno())],
                pass_fds=(theirs.fileno(),), stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL,
                start_new_session=True, close_fds=True)
        finally:
            theirs.close()
        self._ctrl, self._owner = ours, os.getpid()
        ours.settimeout(_START_SECONDS)
        try:
            ready = ours.recv(1)
        except OSError:
            ready = b""
        ours.settimeout(None)
        if ready != b"r":
            raise OSError("it did not start (its error, if any, is on the grader's standard error)")
        return ours

    def stop(self) -> None:
        with self._lock:
            if self._ctrl is not None:
                self._ctrl.close()      # the helper reads the end of its control socket and leaves
            if self._proc is not None and self._owner == os.getpid():
                try:
                    self._proc.wait(timeout=1.0)
                except subprocess.TimeoutExpired:
                    self._proc.kill()
                    self._proc.wait()
            self._proc = self._ctrl = None


_HELPER = _Helper()
atexit.register(_HELPER.stop)


def stop() -> None:
    """Ends the helper (a class run's end: nothing of it is left running); the next parse starts it again."""
    _HELPER.stop()


def _exchange(sock: socket.socket, request: bytes, limits: ParseLimits):
    """Sends the request to the child on `sock` and reads its answer within the limits."""
    deadline = time.monotonic() + limits.wall_seconds
    pid = None
    try:
        # sent before the child says its pid (it does so first, without reading): one wait fewer
        _send_all(sock, HEADER.pack(len(request)) + request, deadline)
        pid = HEADER.unpack(_recv_exact(sock, HEADER.size, deadline))[0]
        size = HEADER.unpack(_recv_exact(sock, HEADER.size, deadline))[0]
        if size > limits.answer_bytes:
            raise OverLimit(f"reading it makes more than {limits.answer_bytes // 2**20} MB of source")
        answer = json.loads(_recv_exact(sock, size, deadline))
    except TimeoutError:
        # A child that worked for its wall time without using its CPU time was starved by a busy
        # machine: the grader's doing. One that used most of it was working on these bytes.
        used = _cpu_seconds(pid) if pid else None
        _kill(pid)
        if used is not None and used >= limits.cpu_seconds / 2:
            raise OverLimit(f"reading it took more than {limits.wall_seconds:g} s") from None
        raise ParserUnavailable(f"the grader's parser got no CPU time for {limits.wall_seconds:g} s "
                                f"(the machine is too busy)") from None
    except EOFError:
        if pid is None:
            raise ParserUnavailable("the grader's parser could not start a process") from None
        # the child died without answering: past its CPU time (SIGXCPU) or its memory
        raise OverLimit(f"reading it needs more than {limits.described()}") from None
    except (OSError, ValueError) as err:
        _kill(pid)
        raise ParserUnavailable(f"the grader's parser failed ({type(err).__name__}: {err})") from None
    if not isinstance(answer, dict):
        raise ParserUnavailable("the grader's parser gave an answer that is not one")
    if "over" in answer:
        raise OverLimit(f"reading it needs more than {limits.described('memory')}")
    if "failed" in answer:
        raise ParserUnavailable(f"the grader's parser failed: {str(answer['failed'])[:300]}")
    return answer.get("value")


def _recv_exact(sock: socket.socket, n: int, deadline: float) -> bytes:
    chunks, got = [], 0
    while got < n:
        sock.settimeout(max(0.0, deadline - time.monotonic()) or 1e-3)
        try:
            chunk = sock.recv(min(n - got, 1 << 20))
        except socket.timeout:
            raise TimeoutError from None
        if not chunk:
            raise EOFError
        chunks.append(chunk)
        got += len(chunk)
    return b"".join(chunks)


def _send_all(sock: socket.socket, data: bytes, deadline: float) -> None:
    view = memoryview(data)
    while view:
        sock.settimeout(max(0.0, deadline - time.monotonic()) or 1e-3)
        try:
            sent = sock.send(view[: 1 << 20])
        except socket.timeout:
            raise TimeoutError from None
        except (BrokenPipeError, ConnectionResetError):
            raise EOFError from None
        view = view[sent:]


def _cpu_seconds(pid: int) -> float | None:
    try:
        with open(f"/proc/{pid}/stat", "rb") as fh:
            fields = fh.read().rsplit(b")", 1)[1].split()
        return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")
    except (OSError, ValueError, IndexError):
        return None


def _kill(pid: int | None) -> None:
    if pid:
        try:
            os.kill(pid, signal.SIGKILL)
        except OSError:
            pass
