"""Child side: how a child starts and ends, made by the zygote.

    zygote --clone(new PID, mount, IPC namespaces)--> init --fork--> worker

The zygote clones each child straight into namespaces of its own (kernel.fork_into): the first
process is the *init*, pid 1 there. It waits on its gate until it is in its cgroup, builds the
private folders (jail.py), forks the worker (child.py) and reaps; it exits as the worker did
(a signal n that killed the worker as code 128 + n: pid 1 cannot die of its own signal, and the
zygote reports it as that signal), and its end kills every process left in the namespace. Where
the namespaces cannot be made, or the zygote has no jail, the zygote forks the worker itself: no
init.

The gate: a new child waits on a pipe from the zygote before it does anything. The zygote writes
the child's pid into the cgroup.procs files the grader opened and handed it (`place`), then writes
the pid and "go". The move into a cgroup is mostly a wait (the kernel's RCU grace period, on
cgroup v1): waited in the zygote, it does not hold the grader's lane, which goes on answering
the child before. The kernel checks the move against the credentials of the grader that opened the
files (Linux 5.16 on); where it refuses anyway, the gate says "wait" and opens only once the grader
has placed the child itself and told the zygote "go".

Loaded inside the zygote from its file path: standard library only.
"""

from __future__ import annotations

import fcntl     # imported here, in the zygote: each child would load it from disk
import os
import resource
import signal
import socket
import types

EXIT_MEMORY = 113      # the child's own machinery ran out of memory
EXIT_INTERNAL = 114    # the child could not be set up
FIRST_SIGNAL_CODE = 128   # how the init exits when a signal n killed the worker: 128 + n

M = types.SimpleNamespace()   # sibling modules and zygote facts, set by the zygote: see configure()


def configure(**kwargs) -> None:
    vars(M).update(kwargs)


def start(sess_fd: int, cap_fd: int, zygote_pid: int, gate_fd: int, layers: dict) -> None:
    """In the process the zygote just made (the init when `layers["pid"]`, else the worker
    itself). Never returns."""
    _detach_from_zygote()
    if _parent() not in (zygote_pid, None):
        os._exit(EXIT_INTERNAL)     # the zygote died before this process would have died with it
    _through_gate(gate_fd)
    sock = _descriptors(sess_fd, cap_fd)
    try:
        # Said before the worker can say anything: whether this process is an init.
        sock.sendall(M.PROTOCOL.pack({"event": "started", "init": bool(layers.get("pid"))}))
    except OSError:
        os._exit(0)
    if layers.get("pid"):
        _init(sock, layers)      # pid 1 of the new namespace: it forks the worker and reaps
    _run_worker(sock, layers)


def exit_status(status: int, init: bool) -> tuple[int | None, int | None]:
    """In the zygote: (code, signal) of a child's end as waitpid gave it; an init's 128 + n as
    signal n."""
    if os.WIFSIGNALED(status):
        return None, os.WTERMSIG(status)
    code = os.WEXITSTATUS(status) if os.WIFEXITED(status) else None
    if init and code is not None and FIRST_SIGNAL_CODE < code < FIRST_SIGNAL_CODE + 65:
        return None, code - FIRST_SIGNAL_CODE
    return code, None


def _parent() -> int | None:
    """This process's parent as the zygote's /proc names it (from a new PID namespace getppid()
    says 0); None where it cannot be read."""
    parent = os.getppid()
    if parent:
        return parent
    try:
        with open("/proc/self/stat", "rb") as f:
            return int(f.read().rsplit(b")", 1)[1].split()[1])
    except (OSError, IndexError, ValueError):
        return None


def _detach_from_zygote() -> None:
    """The zygote's signal handling undone, a session of its own, and death with the zygote."""
    signal.set_wakeup_fd(-1)
    for sig in (signal.SIGCHLD, signal.SIGTERM, signal.SIGXFSZ):
        signal.signal(sig, signal.SIG_DFL)
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    os.setsid()
    M.KERNEL.prctl(M.KERNEL.PR_SET_PDEATHSIG, signal.SIGKILL)


def place(pid: int, procs: list) -> bool:
    """In the zygote: writes `pid` into each cgroup.procs file the grader opened (closed here
    after): whether every move succeeded. The first write waits for the kernel's grace period."""
    placed = True
    for fd in procs:
        try:
            os.write(fd, str(pid).encode())
        except OSError:
            placed = False
        finally:
            os.close(fd)
    return placed


def _through_gate(gate_fd: int) -> int:
    """Waits until this process is in its cgroup (every process it starts from then on is counted
    and limited there): the zygote writes our pid, then "go" once it or the grader placed us.
    Returns the pid; exits when the gate closes first (the zygote died, or was told to exit)."""
    told = b""
    while b"go\n" not in told:
        try:
            more = os.read(gate_fd, 64)
        except InterruptedError:
            continue
        except OSError:
            more = b""
        if not more or len(told) > 256:
            os._exit(0)
        told += more
    os.close(gate_fd)
    pid = told.split(b"\n", 1)[0]
    if not pid.isdigit():
        os._exit(0)
    return int(pid)


def _descriptors(sess_fd: int, cap_fd: int) -> socket.socket:
    """The child's descriptors set up: the session socket."""
    # File descriptors: 0 = /dev/null, 1 and 2 = the capture file, 3 = the session socket.
    # Out of the way first, so that no dup2 below overwrites a descriptor still needed.
    sess_fd, cap_fd = (fcntl.fcntl(fd, fcntl.F_DUPFD_CLOEXEC, 10) for fd in (sess_fd, cap_fd))
    devnull = os.open(os.devnull, os.O_RDWR)
    os.dup2(devnull, 0)
    os.dup2(cap_fd, 1)
    os.dup2(cap_fd, 2)
    os.dup2(sess_fd, 3, inheritable=False)
    os.closerange(4, max(4, resource.getrlimit(resource.RLIMIT_NOFILE)[0]))
    sock = socket.socket(fileno=3)
    sock.setblocking(True)
    return sock


def _run_worker(sock: socket.socket, layers: dict) -> None:
    code = EXIT_INTERNAL
    try:
        M.WORKER.Worker(sock, layers).run()
    except MemoryError:
        code = EXIT_MEMORY
    except BaseException as err:  # noqa: BLE001 - a broken setup; say so with the exit code
        try:
            os.write(2, f"sandbox set-up failed: {type(err).__name__}: {err}\n".encode())
        except BaseException:  # noqa: BLE001
            pass
    os._exit(code)


def _init(sock: socket.socket, layers: dict) -> None:
    """pid 1 of the child's PID namespace: sets up the private folders, forks the worker (so the
    student's code is not pid 1, whose signals the kernel filters), reaps orphans, and exits as
    the worker did -- which kills every process left in the namespace."""
    layers.update(M.JAIL.enter_child_jail(int(M.TMP_MB)))
    worker = os.fork()
    if worker == 0:
        _run_worker(sock, layers)
    sock.close()
    while True:
        try:
            pid, status = os.wait()
        except InterruptedError:
            continue
        except ChildProcessError:
            os._exit(EXIT_INTERNAL)
        if pid == worker:
            # pid 1 cannot die of its own signal: the zygote turns 128 + n back into signal n.
            if os.WIFSIGNALED(status):
                os._exit(FIRST_SIGNAL_CODE + os.WTERMSIG(status))
            os._exit(os.WEXITSTATUS(status) if os.WIFEXITED(status) else EXIT_INTERNAL)
