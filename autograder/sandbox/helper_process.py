"""Work the grader must not do in its own process, done in a child of a helper: the one mechanism
of the grader's helper processes (the parse helper, autograder/intake/parse_helper.py, which
reads students' uploads; the torch helper, autograder/diagnosis/torch_raised_server.py).

A helper is a fork server. It is started once per grader process, on first use, from a clean
interpreter (`python -I -S`: no environment, no current folder, no site; the grader's import path
handed over) that imports only its module and warms it; it forks one child per request, so a
child starts warm and small, and never as a fork of the grader (whose threads and libraries make
forking slow and unsafe). A child works under limits of its own -- CPU time (RLIMIT_CPU, which
ends it even inside one long C call), memory above what it maps at its start (RLIMIT_AS), the size
of a file it writes (RLIMIT_FSIZE), no core file, a wall-time alarm -- answers, and exits.

Requests and answers are the sandbox's frames (autograder/sandbox/inside/protocol.py: a JSON
header and .npy blobs, never pickle); nothing a child says is more than data to the grader. The
helper reaps each child with wait4 and sends its caller one more frame, on a socket of its own:
how the child ended and the CPU time it used, its waited-for children's included, so that the
caller can charge it to whoever the work was for. A caller that gives up asks the helper to kill
the child (the helper knows whether it is still its child: no pid is killed after it was reaped).
A child that itself asks its module for work forks it directly, under limits it gives, with the
same frames and the same ending read by wait4. Nothing inside a helper (its warm-up, its
children, theirs) ever starts a helper: the helper does such work in its own process, a child
forks it (`inside`). The helper leaves when its grader closes the control socket or is gone (its
parent changes); a child dies with its parent (PR_SET_PDEATHSIG) and at its alarm.

    HELPER = Helper("autograder.intake.parse_helper")      # its OPS: op -> function, and warm()
    done = HELPER.run("notebook", [text, name, stem], Limits(cpu_seconds=10, memory_mb=256))
    done.value, done.cpu_seconds

This module is the caller's side (and a child's own forks); the helper's side, the fork server and
its children, is helper_server.py.
"""

from __future__ import annotations

import atexit
import json
import math
import os
import signal
import socket
import subprocess
import sys
import threading
import time
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

from autograder.sandbox import helper_server as server
from autograder.sandbox.helper_server import INSIDE_ENV, MAX_REQUEST, Limits, ended_of, fd_path, handed, in_child  # noqa: F401
from autograder.sandbox.inside import protocol

START_SECONDS = 60.0        # the helper's start: its module's imports on a loaded machine
ENDING_SECONDS = 10.0       # how long the helper may take to say how a child that answered ended
_BOOT = ("import json, sys; sys.path[:] = json.loads(sys.argv[1]); "
         "import autograder.sandbox.helper_server as h; h.run(sys.argv[2], int(sys.argv[3]), int(sys.argv[4]))")


@dataclass(frozen=True)
class Done:
    """A child's answer and the CPU time it used."""
    value: Any
    cpu_seconds: float


class OverLimit(Exception):
    """The child went past one of its limits (`limit`: "cpu", "memory", "wall", "file", "answer")."""

    def __init__(self, limit: str, cpu_seconds: float):
        super().__init__(limit)
        self.limit, self.cpu_seconds = limit, cpu_seconds


class Unavailable(RuntimeError):
    """The work could not be done at all (no helper, no fork, a machine too busy to let the child
    run, a failure of the helper's own code): the grader's failure, never the input's."""

    def __init__(self, message: str, cpu_seconds: float = 0.0):
        super().__init__(message)
        self.cpu_seconds = cpu_seconds


# ---------------------------------------------------------------- the caller's side


class Helper:
    """A helper process of one module, started on first use (and again if it died)."""

    def __init__(self, module: str, start_seconds: float = START_SECONDS):
        self.module, self.start_seconds = module, start_seconds
        self._lock = threading.RLock()
        self._proc: subprocess.Popen | None = None
        self._ctrl: socket.socket | None = None
        self._owner = 0       # the pid that started it: a forked grader starts its own
        _HELPERS.append(self)
        atexit.register(self.stop)

    def run(self, op: str, args: list, limits: Limits, fds: tuple[int, ...] = ()) -> Done:
        """The value of the module's OPS[op](*args), computed in a child within `limits`, with `fds`
        handed over (the child finds them with `handed`). Raises OverLimit, or Unavailable."""
        if server.role is not None and op not in server.ops:
            raise Unavailable(f"a process of the helper {server.module_name} cannot do {op!r}")
        if server.role == "helper":      # its warm-up, on the kit's own input: done here
            return Done(server.ops[op](*args), 0.0)
        request = protocol.message({"op": op, "limits": asdict(limits)}, {"args": args})
        if len(request) > MAX_REQUEST:
            raise Unavailable(f"a request of {len(request) >> 20} MB is larger than a helper takes")
        if server.role == "child":       # a child forks the work itself: its module's operations hold it
            return _fork_here(request, limits, fds)
        ours, theirs = socket.socketpair(socket.AF_UNIX, socket.SOCK_STREAM)
        status, their_status = socket.socketpair(socket.AF_UNIX, socket.SOCK_STREAM)
        try:
            with theirs, their_status:
                self._hand_over([theirs.fileno(), their_status.fileno(), *fds])
            return _exchange(ours, request, limits, _Ending(status))
        finally:
            ours.close()
            status.close()

    def start(self) -> None:
        """Starts it now unless it runs, and waits until it is ready: a caller that will need it
        soon calls this on a thread of its own, so that it warms up meanwhile."""
        with self._lock:
            try:
                self._running()
            except OSError:
                pass        # the first request starts it again and says why

    def _hand_over(self, fds: list[int]) -> None:
        with self._lock:
            for attempt in (1, 2):
                try:
                    socket.send_fds(self._running(), [b"p"], fds)
                    return
                except OSError as err:
                    self.stop()
                    if attempt == 2:
                        raise Unavailable(f"the grader's helper {self.module} could not start ({err})") from None

    def _running(self) -> socket.socket:
        if self._proc is not None and self._owner == os.getpid() and self._proc.poll() is None:
            return self._ctrl
        self.stop()
        if in_child() or os.environ.get(INSIDE_ENV):
            # a process of a helper (or anything it started) never starts one: that is how helpers
            # would multiply without end
            raise OSError("a helper's own process never starts a helper")
        ours, theirs = socket.socketpair(socket.AF_UNIX, socket.SOCK_STREAM)
        path = list(dict.fromkeys([str(Path(__file__).resolve().parents[2]),
                                   *(p for p in sys.path if isinstance(p, str) and p)]))
        try:
            # -I -S: no environment, no current folder (it may be a class of submissions), no site:
            # the grader's own import path is handed over, so the helper imports what the grader does.
            self._proc = subprocess.Popen(
                [sys.executable, "-I", "-S", "-c", _BOOT, json.dumps(path), self.module, str(theirs.fileno()),
                 str(os.getpid())],
                pass_fds=(theirs.fileno(),), stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL,
                start_new_session=True, close_fds=True, env={**os.environ, INSIDE_ENV: "1"})
        finally:
            theirs.close()
        self._ctrl, self._owner = ours, os.getpid()
        ours.settimeout(self.start_seconds)
        try:
            ready = ours.recv(1)
        except OSError:
            ready = b""
        ours.settimeout(None)
        if ready != b"r":
            raise OSError("it did not start (its error, if any, is on the grader's standard error)")
        return ours

    def stop(self) -> None:
        """Ends the helper (the next request starts it again)."""
        with self._lock:
            if self._ctrl is not None:
                self._ctrl.close()      # the helper reads the end of its control socket and leaves
            if self._proc is not None and self._owner == os.getpid():
                try:
                    self._proc.wait(timeout=2.0)
                except subprocess.TimeoutExpired:
                    self._proc.kill()
                    self._proc.wait()
            self._proc = self._ctrl = None


_HELPERS: list[Helper] = []


def stop_all() -> None:
    """Ends every helper of this process (each starts again when next asked)."""
    for helper in list(_HELPERS):
        helper.stop()


class _Ending:
    """How a helper's child ended, told by the helper on the status socket; `kill` asks the helper
    to end it."""

    def __init__(self, status: socket.socket):
        self.status = status

    def kill(self, pid: int | None) -> None:
        try:
            self.status.send(b"k")
        except OSError:
            pass

    def read(self, deadline: float) -> dict:
        try:
            header, _ = protocol.recv_frame(self.status, deadline)
        except (protocol.ProtocolError, protocol.FrameTimeout, OSError):
            return {}
        return header


class _Reaped:
    """How a child this process forked itself ended, read by wait4."""

    def __init__(self):
        self.pid = 0

    def kill(self, pid: int | None) -> None:
        if self.pid:
            try:
                os.kill(self.pid, signal.SIGKILL)     # not reaped yet: still this process's child
            except OSError:
                pass

    def read(self, deadline: float) -> dict:
        pause = 0.0005      # a child that answered is exiting: found within a few ms, not a fixed wait
        while True:
            try:
                got, status, usage = os.wait4(self.pid, os.WNOHANG if time.monotonic() < deadline else 0)
            except ChildProcessError:
                return {}
            if got:
                return ended_of(status, usage)
            time.sleep(pause)
            pause = min(2 * pause, 0.01)


def _fork_here(request: bytes, limits: Limits, fds: tuple[int, ...]) -> Done:
    ours, theirs = socket.socketpair(socket.AF_UNIX, socket.SOCK_STREAM)
    reaped = _Reaped()
    try:
        try:
            parent, pid = os.getpid(), os.fork()
        except OSError as err:
            raise Unavailable(f"no process could be started ({err})") from None
        if pid == 0:
            ours.close()
            server.child(theirs.detach(), list(fds), server.module_name, parent)
        theirs.close()
        reaped.pid = pid
        return _exchange(ours, request, limits, reaped)
    finally:
        ours.close()
        theirs.close()


def _exchange(sock: socket.socket, request: bytes, limits: Limits, ending) -> Done:
    """Sends the request to the child on `sock`, reads its answer within the limits and how it ended."""
    deadline = time.monotonic() + limits.wall_seconds + 5.0      # the child's own alarm comes first
    answer, pid = None, None
    try:
        # sent before the child says its pid (it does so first, without reading): one wait fewer
        protocol.send_frame(sock, request, deadline)
        pid = protocol.recv_frame(sock, deadline)[0].get("pid")
        header, blobs = protocol.recv_frame(sock, deadline, max_bytes=limits.answer_bytes,
                                            max_header=limits.answer_bytes)
        answer = protocol.decode(header, blobs)
    except protocol.FrameTimeout:
        ending.kill(pid)
        ended = ending.read(time.monotonic() + ENDING_SECONDS)
        raise _wall(ended, limits) from None
    except protocol.PeerClosed:
        if pid is None:
            ending.kill(pid)
            raise Unavailable("the helper could not start a process") from None
    except protocol.ProtocolError as err:
        ending.kill(pid)
        ended = ending.read(time.monotonic() + ENDING_SECONDS)
        if "larger than the limit" in str(err):
            raise OverLimit("answer", _cpu(ended)) from None
        raise Unavailable(f"a child's answer could not be read ({err})", _cpu(ended)) from None
    except OSError as err:
        ending.kill(pid)
        raise Unavailable(f"the helper failed ({type(err).__name__}: {err})") from None
    ended = ending.read(time.monotonic() + ENDING_SECONDS)
    if not ended:
        ending.kill(pid)
    cpu = _cpu(ended)
    if answer is None:
        raise _died(ended, limits)
    if not isinstance(answer, dict):
        raise Unavailable("a child gave an answer that is not one", cpu)
    if "over" in answer:
        raise OverLimit("memory", cpu)
    if "failed" in answer:
        raise Unavailable(f"a child failed: {str(answer['failed'])[:300]}", cpu)
    return Done(answer.get("value"), cpu)


def _cpu(ended: dict) -> float:
    cpu = ended.get("cpu", 0.0)
    return float(cpu) if type(cpu) in (int, float) and math.isfinite(cpu) and cpu >= 0 else 0.0


def _wall(ended: dict, limits: Limits) -> Exception:
    """A child that worked for its wall time using most of its CPU time was working on its input;
    one that did not was starved by a busy machine: the grader's doing."""
    cpu = _cpu(ended)
    if cpu >= limits.cpu_seconds / 2:
        return OverLimit("wall", cpu)
    return Unavailable(f"a helper's child got no CPU time for {limits.wall_seconds:g} s (the machine is too busy)",
                       cpu)


def _died(ended: dict, limits: Limits) -> Exception:
    """A child that ended without answering: past its CPU time (SIGXCPU, or SIGKILL at the hard
    limit), a file too large (SIGXFSZ), its wall time (SIGALRM), else its memory."""
    if not ended:
        return Unavailable("a helper's child ended and the helper did not say how")
    cpu, sig = _cpu(ended), ended.get("signal")
    if sig == signal.SIGXCPU or (sig == signal.SIGKILL and cpu >= limits.cpu_seconds):
        return OverLimit("cpu", cpu)
    if sig == signal.SIGXFSZ:
        return OverLimit("file", cpu)
    if sig == signal.SIGALRM:
        return _wall(ended, limits)
    if sig is None and ended.get("code") not in (0, 3):
        return Unavailable(f"a helper's child exited with status {ended.get('code')}", cpu)
    return OverLimit("memory", cpu)
