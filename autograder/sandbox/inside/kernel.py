"""Thin ctypes wrappers of the Linux calls the jail needs (unshare, clone, mount, pivot_root,
prctl, capset). Each raises OSError with the call's name and errno when it fails.

Loaded inside the zygote from its file path (see zygote.py), so it imports only the standard
library. On a system without these calls (macOS) `available()` is False and nothing is called.
"""

from __future__ import annotations

import ctypes
import errno
import os
import platform
import signal
from collections.abc import Iterator

CLONE_NEWNS = 0x00020000
CLONE_NEWUTS = 0x04000000
CLONE_NEWIPC = 0x08000000
CLONE_NEWUSER = 0x10000000
CLONE_NEWPID = 0x20000000
CLONE_NEWNET = 0x40000000

MS_RDONLY, MS_NOSUID, MS_NODEV, MS_NOEXEC = 1, 2, 4, 8
MS_REMOUNT, MS_BIND, MS_REC = 32, 4096, 16384
MS_PRIVATE, MS_SLAVE = 1 << 18, 1 << 19
MNT_DETACH = 2

PR_SET_PDEATHSIG = 1
PR_SET_DUMPABLE = 4
PR_CAPBSET_DROP = 24
PR_SET_SECUREBITS = 28
PR_SET_CHILD_SUBREAPER = 36
PR_SET_NO_NEW_PRIVS = 38
PR_CAP_AMBIENT, PR_CAP_AMBIENT_CLEAR_ALL = 47, 4
# NOROOT, NO_SETUID_FIXUP and KEEP_CAPS_LOCKED, each with its lock: exec never grants capabilities back.
SECUREBITS_LOCKED = 0x01 | 0x02 | 0x04 | 0x08 | 0x20

_SYS_PIVOT_ROOT = {"x86_64": 155, "aarch64": 41, "arm64": 41}
_SYS_CLONE3 = 435          # the same number on every architecture
_SYS_CLONE = {"x86_64": 56, "aarch64": 220, "arm64": 220}
_CAP_VERSION_3 = 0x20080522

_libc = None
_syscall = None     # libc's syscall(), called without releasing the interpreter's lock (fork_into)


def available() -> bool:
    return platform.system() == "Linux" and _lib() is not None


def _lib():
    global _libc
    if _libc is None:
        try:
            # The process's own symbols, libc's among them: find_library("c") would start a
            # process (ldconfig) in every zygote's start to name the library already loaded.
            _libc = ctypes.CDLL(None, use_errno=True)
        except OSError:
            return None
        _libc.mount.argtypes = [ctypes.c_char_p, ctypes.c_char_p, ctypes.c_char_p, ctypes.c_ulong, ctypes.c_char_p]
        _libc.umount2.argtypes = [ctypes.c_char_p, ctypes.c_int]
        _libc.prctl.argtypes = [ctypes.c_int, ctypes.c_ulong, ctypes.c_ulong, ctypes.c_ulong, ctypes.c_ulong]
    return _libc


def _check(result: int, what: str) -> int:
    if result != 0:
        err = ctypes.get_errno()
        raise OSError(err, f"{what}: {os.strerror(err)}")
    return result


def unshare(flags: int) -> None:
    _check(_lib().unshare(flags), "unshare")


class _CloneArgs(ctypes.Structure):
    # struct clone_args as of its first version: a null stack means the child goes on on a copy
    # of the caller's, as after fork.
    _fields_ = [(name, ctypes.c_uint64) for name in
                ("flags", "pidfd", "child_tid", "parent_tid", "exit_signal", "stack", "stack_size", "tls")]


def fork_into(flags: int) -> int:
    """os.fork() whose child starts in the new namespaces `flags` names (CLONE_NEWPID and the
    like): 0 in the child, its pid in the parent. Python's own fork hooks run around it as they
    do around os.fork. For a single-threaded caller only: no lock of the C library is taken, and
    the child's C library still holds its parent's thread id (the child should fork before it
    does anything that would need it: os.fork, which sets its child's right, is safe)."""
    global _syscall
    python = ctypes.pythonapi
    if _syscall is None:
        # Called with the interpreter's lock held throughout: the child must not find it released
        # by a thread that does not exist there.
        _syscall = ctypes.PyDLL(None, use_errno=True).syscall
        _syscall.restype = ctypes.c_long
    syscall = _syscall
    args = _CloneArgs(flags=flags, exit_signal=signal.SIGCHLD)
    legacy = _SYS_CLONE.get(platform.machine())
    python.PyOS_BeforeFork()
    pid = syscall(ctypes.c_long(_SYS_CLONE3), ctypes.byref(args), ctypes.c_size_t(ctypes.sizeof(args)))
    err = ctypes.get_errno() if pid < 0 else 0
    if pid < 0 and err == errno.ENOSYS and legacy is not None:
        # A seccomp profile that hides clone3 (Docker's) lets clone through.
        pid = syscall(ctypes.c_long(legacy), ctypes.c_ulong(flags | signal.SIGCHLD), None, None, None, None)
        err = ctypes.get_errno() if pid < 0 else 0
    if pid == 0:
        python.PyOS_AfterFork_Child()
        return 0
    python.PyOS_AfterFork_Parent()
    if pid < 0:
        raise OSError(err, f"clone: {os.strerror(err)}")
    return pid


def mount(source: str | None, target: str, fstype: str | None, flags: int, data: str | None = None) -> None:
    enc = (lambda s: None if s is None else s.encode())
    _check(_lib().mount(enc(source), enc(target), enc(fstype), flags, enc(data)), f"mount {target}")


def umount(target: str) -> None:
    _check(_lib().umount2(target.encode(), MNT_DETACH), f"umount {target}")


def pivot_root(new_root: str, put_old: str) -> None:
    number = _SYS_PIVOT_ROOT.get(platform.machine())
    if number is None:
        raise OSError(38, f"pivot_root: unknown system call number on {platform.machine()}")
    _check(_lib().syscall(number, new_root.encode(), put_old.encode()), "pivot_root")


PR_SET_SECCOMP, SECCOMP_MODE_FILTER = 22, 2


class _SockFprog(ctypes.Structure):
    _fields_ = [("len", ctypes.c_ushort), ("filter", ctypes.c_void_p)]


def load_seccomp_filter(program: bytes) -> None:
    """Loads a compiled BPF program (struct sock_filter entries, 8 bytes each) as this process's
    seccomp filter; no-new-privileges must be set first (unless the process has CAP_SYS_ADMIN)."""
    if not program or len(program) % 8:
        raise OSError(errno.EINVAL, "seccomp: not a BPF program")
    code = ctypes.create_string_buffer(program, len(program))
    prog = _SockFprog(len(program) // 8, ctypes.cast(code, ctypes.c_void_p))
    _check(_lib().prctl(PR_SET_SECCOMP, SECCOMP_MODE_FILTER, ctypes.addressof(prog), 0, 0), "prctl seccomp")


def wake_on_child_exit() -> tuple[int, int]:
    """A pipe written to whenever a child exits (SIGCHLD): a select loop wakes on its read end."""
    wake_r, wake_w = os.pipe()
    os.set_blocking(wake_r, False)
    os.set_blocking(wake_w, False)
    signal.signal(signal.SIGCHLD, lambda *_: None)
    signal.set_wakeup_fd(wake_w, warn_on_full_buffer=False)
    return wake_r, wake_w


def drain(fd: int) -> None:
    """Reads a non-blocking pipe empty."""
    try:
        while os.read(fd, 4096):
            pass
    except (BlockingIOError, InterruptedError):
        pass


def reaped() -> Iterator[tuple[int, int]]:
    """(pid, status) of every child that has exited, each waited for now; none blocks."""
    while True:
        try:
            pid, status = os.waitpid(-1, os.WNOHANG)
        except ChildProcessError:
            return
        if pid == 0:
            return
        yield pid, status


def prctl(option: int, arg2: int = 0, arg3: int = 0) -> None:
    _check(_lib().prctl(option, arg2, arg3, 0, 0), f"prctl {option}")


def drop_all_capabilities(last_cap: int) -> None:
    """Securebits locked (so exec cannot regain anything), the bounding and ambient sets
    emptied, then the effective, permitted and inheritable sets set to nothing."""
    prctl(PR_SET_SECUREBITS, SECUREBITS_LOCKED)
    for cap in range(last_cap + 1):
        try:
            prctl(PR_CAPBSET_DROP, cap)
        except OSError as err:
            if err.errno != 22:   # EINVAL: a capability this kernel does not know
                raise
    try:
        prctl(PR_CAP_AMBIENT, PR_CAP_AMBIENT_CLEAR_ALL)
    except OSError:
        pass   # kernels before 4.3 have no ambient set
    header = (ctypes.c_uint32 * 2)(_CAP_VERSION_3, 0)
    data = (ctypes.c_uint32 * 6)(0, 0, 0, 0, 0, 0)
    _check(_lib().capset(header, data), "capset")


def last_capability() -> int:
    try:
        with open("/proc/sys/kernel/cap_last_cap") as f:
            return int(f.read())
    except (OSError, ValueError):
        return 63


def write_id_maps(uid_outside: int, gid_outside: int) -> None:
    """Inside uid/gid 0 maps to the given outside ids, and nothing else (setgroups denied first,
    as an unprivileged process must)."""
    with open("/proc/self/setgroups", "w") as f:
        f.write("deny")
    with open("/proc/self/uid_map", "w") as f:
        f.write(f"0 {uid_outside} 1\n")
    with open("/proc/self/gid_map", "w") as f:
        f.write(f"0 {gid_outside} 1\n")
