"""The helper's side of autograder/sandbox/helper_process.py: the fork server (`serve`) a helper
process runs, and each child it forks (`child`): the request read, the child's limits set, the
module's operation done, the answer sent, the exit. Also what a child asks about itself
(`in_child`, `handed`). Imports nothing of the kit but the sandbox protocol: a helper starts from
a clean interpreter with only its module.
"""

from __future__ import annotations

import ctypes
import gc
import importlib
import math
import os
import resource
import select
import signal
import socket
import sys
from dataclasses import dataclass
from typing import NoReturn

from autograder.sandbox.inside import protocol

MAX_REQUEST = 64 * 1024 * 1024
PARENT_POLL_SECONDS = 0.5   # how often a helper looks whether its grader is still there
INSIDE_ENV = "ATTNKIT_INSIDE_HELPER"   # set in a helper: whatever it starts knows it is inside one


@dataclass(frozen=True)
class Limits:
    """One child's limits."""
    cpu_seconds: int                      # RLIMIT_CPU: at least 1
    memory_mb: int                        # address space above what the child maps at its start
    wall_seconds: float                   # a child starved by a busy machine, not one that works
    answer_bytes: int = 32 * 1024 * 1024
    file_bytes: int = 32 * 1024 * 1024    # the largest file it may write


def in_child() -> bool:
    """Whether this process is a helper or one of its children: work asked for here is done here
    (a helper's warm-up) or in a fork of this process (a child's), never by starting a helper."""
    return role is not None


def handed(i: int) -> int:
    """The i-th descriptor the caller handed this child with its request."""
    return _handed[i]


def fd_path(fd: int) -> str:
    """A path that opens the descriptor `fd` of this process again."""
    return f"/proc/self/fd/{fd}" if os.path.isdir("/proc/self/fd") else f"/dev/fd/{fd}"


def ended_of(status: int, usage) -> dict:
    """How a child ended (wait4's status and usage), as the helper tells its caller."""
    return {"cpu": usage.ru_utime + usage.ru_stime,
            "signal": os.WTERMSIG(status) if os.WIFSIGNALED(status) else None,
            "code": os.WEXITSTATUS(status) if os.WIFEXITED(status) else None}


role: str | None = None        # "helper" in a helper, "child" in a child of one (or of a child)
module_name = ""
ops: dict = {}                 # the module's operations: op -> function
_handed: list[int] = []        # the descriptors handed to this child with its request
_prctl_call = None


def run(module: str, ctrl_fd: int, grader: int) -> NoReturn:
    """The helper process: `serve`, then the end, without the interpreter's teardown of every
    module and object (nothing of a helper outlives it: its grader is done with it)."""
    serve(module, ctrl_fd, grader)
    for stream in (sys.stdout, sys.stderr):
        try:
            stream.flush()
        except (OSError, ValueError):
            pass
    os._exit(0)


def serve(module: str, ctrl_fd: int, grader: int) -> None:
    """The helper: one child per request handed over on `ctrl_fd`, until the grader closes it or
    is gone (`grader`, its pid, is no longer this process's parent)."""
    global ops, role, module_name, _prctl_call
    role, module_name = "helper", module         # before anything is imported: nothing here starts a helper
    os.environ[INSIDE_ENV] = "1"
    _prctl_call = _prctl()
    if os.getppid() != grader:
        return
    loaded = importlib.import_module(module)
    ops = loaded.OPS
    warm = getattr(loaded, "warm", None)
    if warm is not None:
        warm()
    # A child that collected garbage would touch, and so copy, every page the helper's objects are
    # on: they are left out of its collections.
    gc.collect()
    gc.freeze()
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    wake_r, wake_w = os.pipe()
    os.set_blocking(wake_w, False)
    signal.set_wakeup_fd(wake_w)
    signal.signal(signal.SIGCHLD, lambda *_: None)     # wakes the loop below through the pipe
    ctrl = socket.socket(fileno=ctrl_fd)
    ctrl.sendall(b"r")
    live: dict[int, socket.socket | None] = {}        # pid -> its caller's status socket (None: gone)
    while True:
        if os.getppid() != grader:      # the grader is gone (killed): so are its requests
            return
        try:
            readable, _, _ = select.select([ctrl, wake_r, *filter(None, live.values())], [], [],
                                           PARENT_POLL_SECONDS)
        except InterruptedError:
            continue
        if wake_r in readable:
            os.read(wake_r, 4096)
        _reap(live)
        for sock in [s for s in readable if s not in (ctrl, wake_r)]:
            pid = next((p for p, s in live.items() if s is sock), None)
            try:
                asked = sock.recv(1)
            except OSError:
                asked = b""
            if pid is not None and asked in (b"k", b""):      # the caller gave up, or is gone
                try:
                    os.kill(pid, signal.SIGKILL)
                except OSError:
                    pass
                if not asked:
                    sock.close()
                    live[pid] = None
        if ctrl in readable and not _accept(ctrl, live, module, (wake_r, wake_w)):
            return


def _accept(ctrl: socket.socket, live: dict, module: str, pipe: tuple[int, int]) -> bool:
    try:
        msg, fds, _, _ = socket.recv_fds(ctrl, 1, 16)
    except InterruptedError:
        return True
    except OSError:
        return False
    if not msg:
        return False
    if len(fds) < 2:
        for fd in fds:
            os.close(fd)
        return True
    conn, status, extra = fds[0], socket.socket(fileno=fds[1]), fds[2:]
    try:
        parent, pid = os.getpid(), os.fork()
    except OSError:
        pid = -1          # the caller reads the connection's end and says so
    if pid == 0:
        ctrl.close()
        status.close()
        for sock in filter(None, live.values()):
            sock.close()
        signal.set_wakeup_fd(-1)
        for fd in pipe:
            os.close(fd)
        signal.signal(signal.SIGCHLD, signal.SIG_DFL)
        child(conn, extra, module, parent)
    os.close(conn)
    for fd in extra:
        os.close(fd)
    if pid > 0:
        live[pid] = status
    else:
        status.close()
    return True


def _reap(live: dict) -> None:
    while True:
        try:
            pid, status, usage = os.wait4(-1, os.WNOHANG)
        except ChildProcessError:
            return
        if not pid:
            return
        sock = live.pop(pid, None)
        if sock is not None:
            try:
                sock.settimeout(1.0)
                sock.sendall(protocol.pack(ended_of(status, usage)))
            except OSError:
                pass
            sock.close()


def child(fd: int, fds: list[int], module: str, parent: int) -> None:
    """Reads one request, works within its limits, answers, and exits; dies with `parent`."""
    global role, _handed
    role, _handed = "child", fds
    status, sock = 0, None
    try:
        _die_with_parent(parent)
        sock = socket.socket(fileno=fd)
        sock.sendall(protocol.pack({"pid": os.getpid()}))
        header, blobs = protocol.recv_frame(sock, max_bytes=MAX_REQUEST, max_header=MAX_REQUEST)
        limits = Limits(**header["limits"])
        args = protocol.decode(header["args"], blobs, make_tensor=protocol.TensorArg)
        _limit(limits)
        try:
            answer = {"value": ops[header["op"]](*args)}
        except MemoryError:
            answer = {"over": "memory"}
        sock.sendall(protocol.message({}, answer))
    except MemoryError:
        status = 3
    except BaseException as err:  # noqa: BLE001 - said to the caller, which counts it as its own failure
        try:
            if sock is not None:
                sock.sendall(protocol.pack({"failed": f"{type(err).__name__}: {err}"[:500]}))
        except BaseException:  # noqa: BLE001
            status = 4
    finally:
        os._exit(status)


def _die_with_parent(parent: int) -> None:
    """SIGKILL when `parent`, the process that forked this one, ends (Linux; a helper and a child
    are single threaded, so the parent's end is its process's, not one of its threads')."""
    if _prctl_call is not None:
        _prctl_call(1, signal.SIGKILL, 0, 0, 0)      # PR_SET_PDEATHSIG
    if os.getppid() != parent:     # it ended before the signal was asked for
        os._exit(5)


def _prctl():
    """libc's prctl, found once in the helper (a child only calls it), or None (not Linux)."""
    if not sys.platform.startswith("linux"):
        return None
    try:
        return ctypes.CDLL(None, use_errno=True).prctl
    except (OSError, AttributeError):
        return None


def _limit(limits: Limits) -> None:
    """This child's limits: its CPU time (SIGXCPU ends it, even inside one long C call), its address
    space above what it maps now, its wall time (SIGALRM), no core files, and the size of a file it
    writes. A limit is never raised above what this process was given (a child of a child)."""
    try:
        with open("/proc/self/statm", "rb") as fh:
            mapped = int(fh.read().split()[0]) * resource.getpagesize()
        _set(resource.RLIMIT_AS, mapped + limits.memory_mb * 1024 * 1024)
    except (OSError, ValueError):
        pass        # no /proc (macOS: a student's own `attnkit check`): CPU and wall time still hold
    cpu = max(1, int(limits.cpu_seconds))
    _set(resource.RLIMIT_CPU, cpu, cpu + 1)
    _set(resource.RLIMIT_CORE, 0)
    _set(resource.RLIMIT_FSIZE, limits.file_bytes)
    signal.signal(signal.SIGXCPU, signal.SIG_DFL)     # (SIGXFSZ stays ignored: a write too large fails)
    signal.signal(signal.SIGALRM, signal.SIG_DFL)
    signal.alarm(max(1, math.ceil(limits.wall_seconds)))


def _set(which: int, soft: int, hard: int | None = None) -> None:
    _, held = resource.getrlimit(which)
    hard = soft if hard is None else hard
    if held != resource.RLIM_INFINITY:
        soft, hard = min(soft, held), min(hard, held)
    try:
        resource.setrlimit(which, (soft, hard))
    except (OSError, ValueError):
        pass
