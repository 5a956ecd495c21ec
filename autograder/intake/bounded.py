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
answers are JSON; nothing a child says is more than data to the grader.
"""

from __future__ import annotations

import atexit
import gc
import hashlib
import importlib
import json
import os
import resource
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

# What a child may run: op -> (module, function). The function takes the request's JSON arguments
# and returns JSON-ready data; the helper imports these modules once, before it forks.
OPS = {
    "archive": ("autograder.intake.archives", "unpacked_here"),
    "notebook": ("autograder.intake.load", "notebook_here"),
    "python": ("autograder.intake.load", "python_here"),
}


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
_HEADER = struct.Struct("!Q")
_MAX_REQUEST = 64 * 1024 * 1024
_REFUSALS_KEPT = 256
_START_SECONDS = 60.0
_BOOT = ("import json, sys; sys.path[:] = json.loads(sys.argv[1]); "
         "import autograder.intake.bounded as b; b.serve(int(sys.argv[2]))")


class OverLimit(Exception):
    """The bytes could not be parsed within the limits: the upload's doing (its message says which)."""


class ParserUnavailable(RuntimeError):
    """The grader could not parse at all (no helper, no fork, a machine too busy to let a child
    run): the grader's failure, never held against the student."""


def run(op: str, args: list, *, limits: ParseLimits = LIMITS, memo: str | None = None):
    """The value of OPS[op](*args), computed in a bounded child. Raises OverLimit when the child
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
        h.update(_HEADER.pack(len(data)) + data)
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
        _send_all(sock, _HEADER.pack(len(request)) + request, deadline)
        pid = _HEADER.unpack(_recv_exact(sock, _HEADER.size, deadline))[0]
        size = _HEADER.unpack(_recv_exact(sock, _HEADER.size, deadline))[0]
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


# ---------------------------------------------------------------- the helper and its children


def serve(ctrl_fd: int) -> None:
    """The helper: one child per connection handed over on `ctrl_fd`, until the grader closes it."""
    for module, _ in OPS.values():
        importlib.import_module(module)
    _warm()
    # A child that collected garbage would touch, and so copy, every page the helper's objects are
    # on: they are left out of its collections.
    gc.collect()
    gc.freeze()
    # children are reaped as they end, so that their CPU time is the helper's, and the grader's
    signal.signal(signal.SIGCHLD, _reap)
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    ctrl = socket.socket(fileno=ctrl_fd)
    ctrl.sendall(b"r")
    while True:
        try:
            msg, fds, _, _ = socket.recv_fds(ctrl, 1, 4)
        except InterruptedError:
            continue
        except OSError:
            return
        if not msg:
            return
        for fd in fds[1:]:
            os.close(fd)
        if not fds:
            continue
        try:
            pid = os.fork()
        except OSError:
            pid = -1          # the grader reads the connection's end and says so
        if pid == 0:
            ctrl.close()
            signal.signal(signal.SIGCHLD, signal.SIG_DFL)
            _child(fds[0])
        os.close(fds[0])


def _reap(*_) -> None:
    try:
        while os.waitpid(-1, os.WNOHANG)[0] > 0:
            pass
    except ChildProcessError:
        pass


def _warm() -> None:
    """What every child would otherwise do first, done once in the helper (a fork shares it):
    IPython's transformer made, the tokenizer's and the compiler's first use."""
    from autograder.intake.load import notebook_here

    cell = {"cell_type": "code", "metadata": {}, "source": "%matplotlib inline\n!ls\nx = 1\nx?"}
    notebook = {"nbformat": 4, "nbformat_minor": 5, "metadata": {},
                "cells": [cell, dict(cell, source="%%time\ny = 2")]}
    try:
        notebook_here(json.dumps(notebook), "warm.ipynb", "warm")
    except Exception:  # noqa: BLE001 - a child that needs it meets the error and says so
        pass


def _child(fd: int) -> None:
    """Reads one request, works within its limits, answers, and exits."""
    status, sock = 0, None
    try:
        sock = socket.socket(fileno=fd)
        sock.sendall(_HEADER.pack(os.getpid()))
        size = _HEADER.unpack(_read(sock, _HEADER.size))[0]
        if size > _MAX_REQUEST:
            raise ValueError("request too large")
        request = json.loads(_read(sock, size))
        _limit(ParseLimits(**request["limits"]))
        module, name = OPS[request["op"]]
        try:
            answer = {"value": getattr(sys.modules[module], name)(*request["args"])}
        except MemoryError:
            answer = {"over": "memory"}
        data = json.dumps(answer, ensure_ascii=False, allow_nan=False).encode()
        sock.sendall(_HEADER.pack(len(data)) + data)
    except MemoryError:
        status = 3
    except BaseException as err:  # noqa: BLE001 - said to the grader, which counts it as its own failure
        try:
            data = json.dumps({"failed": f"{type(err).__name__}: {err}"[:500]}).encode()
            if sock is not None:
                sock.sendall(_HEADER.pack(len(data)) + data)
        except BaseException:  # noqa: BLE001
            status = 4
    finally:
        os._exit(status)


def _read(sock: socket.socket, n: int) -> bytes:
    chunks, got = [], 0
    while got < n:
        chunk = sock.recv(min(n - got, 1 << 20))
        if not chunk:
            raise EOFError
        chunks.append(chunk)
        got += len(chunk)
    return b"".join(chunks)


def _limit(limits: ParseLimits) -> None:
    """This child's limits: its CPU time (SIGXCPU ends it, even inside one long C call), its address
    space above what it maps now, its wall time (SIGALRM), no core files, and files no larger than
    an archive's member may be."""
    from autograder.intake.archives import MAX_MEMBER_BYTES

    try:
        with open("/proc/self/statm", "rb") as fh:
            mapped = int(fh.read().split()[0]) * resource.getpagesize()
        cap = mapped + limits.memory_mb * 1024 * 1024
        resource.setrlimit(resource.RLIMIT_AS, (cap, cap))
    except (OSError, ValueError):
        pass        # no /proc (macOS: a student's own `attnkit check`): CPU and wall time still hold
    resource.setrlimit(resource.RLIMIT_CPU, (limits.cpu_seconds, limits.cpu_seconds + 1))
    resource.setrlimit(resource.RLIMIT_CORE, (0, 0))
    resource.setrlimit(resource.RLIMIT_FSIZE, (MAX_MEMBER_BYTES + (1 << 16),) * 2)
    signal.signal(signal.SIGXCPU, signal.SIG_DFL)
    signal.signal(signal.SIGALRM, signal.SIG_DFL)
    signal.alarm(int(limits.wall_seconds) + 1)
