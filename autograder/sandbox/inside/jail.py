"""The jail, built from the kernel's namespaces in the order bubblewrap and nsjail use.

The zygote (once, after importing numpy/torch, before any fork):

  1. root only: a private mount namespace while still root   -- so the root can read every
     source it binds (a pyenv under a home folder only its owner may enter), and nothing it mounts is seen outside.
     normal user: a user namespace (inside 0 -> itself; setgroups denied) together with the
     mount, network, IPC and UTS namespaces -- a user namespace is what lets it mount at all.
  2. mounts made private (MS_REC|MS_PRIVATE)                 -- nothing propagates back out.
  3. every source opened as an O_PATH fd                    -- binds are made from the fds, so
     mounting the staging tmpfs over /tmp cannot hide a virtualenv that lives in /tmp.
  4. a tmpfs as the new root, holding only read-only binds of what the interpreter needs
     (view.py: programs, shared libraries, time zones and fonts, a few /etc files, the
     interpreter's own prefix, standard library, site-packages and sys.path folders),
     /dev/{null,zero,full,random,urandom} and /proc             -- the kit, the class folder, OUT,
     home folders and the rest of /usr (nbgrader's shared exchange) are simply not there.
  5. pivot_root into it, the old root detached, the new root remounted read-only.
  6. root only: a user namespace (inside 0 -> a private unprivileged uid outside; the map is
     written by a forked helper that is still root) with network, IPC and UTS namespaces, then
     setresuid/setresgid to that 0 -- nothing it does is root outside. Made after pivot_root:
     unshare(CLONE_NEWUSER) needs a root that is the mount namespace's root.
  7. PR_SET_DUMPABLE 0                                        -- /proc/PID/mem and ptrace refused.

Each child (made by the zygote, see start.py and child.py):

  8. the child is cloned into a PID, mount and IPC namespace of its own: it is pid 1 there, the
     init (a daemon dies with it; nothing outside can be signalled or traced), and SysV/POSIX
     shared memory dies with its IPC namespace.
  9. the init: PR_SET_PDEATHSIG, size-capped tmpfs on /tmp, /var/tmp, /dev/shm, /run/lock
     (cleanup is the namespace dying), then what the zygote bound under those folders (a
     virtualenv in /tmp) bound again on top, read-only, from fds opened before the tmpfs
     covered it; a fresh /proc of its PID namespace (an empty tmpfs where mounting proc is
     refused, as in Docker).
 10. after the rlimits: every capability dropped with securebits locked, PR_SET_NO_NEW_PRIVS.
 11. a seccomp filter (libseccomp, through pyseccomp, where installed; compiled once by the
     zygote, loaded by each worker) that refuses what no submission needs and the kernel does
     not namespace: ptrace and cross-process memory, keyrings, new namespaces, mounts, bpf,
     perf, io_uring, userfaultfd, modules.

Every step is checked and raises JailError(step, reason). Only the first steps ("user
namespace", "mount namespace") leave the process as it was: the zygote then runs without the
jail and reports why (Sandbox.isolation). After them, a failure ends the zygote.

Loaded inside the zygote from its file path: standard library only, plus its siblings kernel.py
and view.py.
"""

from __future__ import annotations

import os
import sys

K = None      # kernel.py, set by the zygote (it loads these under private names)
VIEW = None   # view.py: what the new root holds, set by the zygote

DEVICES = ("null", "zero", "full", "random", "urandom")
EMPTY_DIRS = ("tmp", "var/tmp", "run/lock", "dev/shm", "proc", "etc", "home")
STAGING = "/tmp"

# Per child, size-capped private folders: the namespace's death removes them (no rmtree here).
CHILD_TMPFS = (("/tmp", "tmp_mb", 200_000), ("/var/tmp", None, 1000), ("/dev/shm", None, 1000),
               ("/run/lock", None, 100))

# What the zygote bound inside a CHILD_TMPFS folder (an interpreter under /tmp): each child
# binds it again over its own tmpfs. Set by enter_zygote_jail; children inherit it by fork.
UNDER_CHILD_TMPFS: tuple[tuple[str, str], ...] = ()


def _inside(path: str, root: str) -> bool:
    return path == root or path.startswith(root.rstrip("/") + "/")


def under_child_tmpfs(plan: list[tuple[str, str]]) -> tuple[tuple[str, str], ...]:
    """The plan's binds that a child's private tmpfs would cover, outermost first."""
    covered = [path for path, _size, _inodes in CHILD_TMPFS]
    return tuple((path, kind) for path, kind in plan
                 if kind in ("dir", "file") and any(path != c and _inside(path, c) for c in covered))


class JailError(Exception):
    """A step of the jail failed: (step, reason)."""

    def __init__(self, step: str, reason: str):
        super().__init__(f"{step}: {reason}")
        self.step, self.reason = step, reason


def _step(name: str, fn, *args):
    try:
        return fn(*args)
    except (OSError, ValueError) as err:
        raise JailError(name, str(err)) from None


def enter_zygote_jail(uid: int | None, kit_root: str) -> dict:
    """Steps 1-7 above. `uid`: the private uid to become when running as root (None: stay).
    Returns the layers that hold; raises JailError (process unchanged only if step 1 failed)."""
    root = os.geteuid() == 0
    _step("user namespace", _user_namespaces_allowed)      # probe first: later failures cannot be undone
    if root:
        _step("mount namespace", K.unshare, K.CLONE_NEWNS)
    else:
        outside_uid, outside_gid = os.geteuid(), os.getegid()
        _step("user namespace", K.unshare, K.CLONE_NEWUSER | K.CLONE_NEWNS | K.CLONE_NEWNET | K.CLONE_NEWIPC
              | K.CLONE_NEWUTS)
        _step("uid map", K.write_id_maps, outside_uid, outside_gid)
    _step("private mounts", K.mount, "none", "/", None, K.MS_REC | K.MS_PRIVATE)
    plan = VIEW.plan(kit_root)
    global UNDER_CHILD_TMPFS
    UNDER_CHILD_TMPFS = under_child_tmpfs(plan)
    fds = {}
    for path, kind in plan:
        if kind in ("dir", "file"):
            fds[path] = _step(f"open {path}", os.open, path, os.O_PATH | os.O_CLOEXEC)
    proc_fd = _step("open /proc", os.open, "/proc", os.O_PATH | os.O_CLOEXEC)
    dev_fds = {d: os.open(f"/dev/{d}", os.O_PATH | os.O_CLOEXEC) for d in DEVICES if os.path.exists(f"/dev/{d}")}
    try:
        _build_root(plan, fds, proc_fd, dev_fds)
    finally:
        for fd in list(fds.values()) + [proc_fd] + list(dev_fds.values()):
            os.close(fd)
    _step("pivot_root", _pivot)
    if root:
        if uid is not None:
            _step("user namespace of the private uid", _private_user_namespace, uid)
        else:
            _step("namespaces", K.unshare, K.CLONE_NEWNET | K.CLONE_NEWIPC | K.CLONE_NEWUTS)
    try:
        import socket

        socket.sethostname("sandbox")
    except OSError:
        pass
    _step("not dumpable", K.prctl, K.PR_SET_DUMPABLE, 0)
    return {"user": uid is not None or not root, "mount": True, "net": True, "ipc": True, "uid": uid is not None,
            "not_dumpable": True}


def _user_namespaces_allowed() -> None:
    try:
        with open("/proc/sys/user/max_user_namespaces") as f:
            if f.read().strip() == "0":
                raise OSError(1, "user namespaces are disabled (user.max_user_namespaces=0)")
    except FileNotFoundError:
        pass
    if os.geteuid() == 0:
        return    # root makes its user namespace while privileged: the switches below do not apply
    for path, bad, why in (("/proc/sys/kernel/unprivileged_userns_clone", "0", "disabled"),
                           ("/proc/sys/kernel/apparmor_restrict_unprivileged_userns", "1", "restricted by AppArmor")):
        try:
            with open(path) as f:
                if f.read().strip() == bad:
                    name = path[len("/proc/sys/"):].replace("/", ".")
                    raise OSError(1, f"user namespaces are {why} ({name}={bad})")
        except FileNotFoundError:
            pass


def _build_root(plan, fds: dict, proc_fd: int, dev_fds: dict) -> None:
    new = STAGING
    _step("root tmpfs", K.mount, "tmpfs", new, "tmpfs", K.MS_NOSUID | K.MS_NODEV, "size=1m,mode=0755")
    for d in EMPTY_DIRS:
        os.makedirs(f"{new}/{d}", mode=0o755, exist_ok=True)
    os.chmod(f"{new}/tmp", 0o1777)
    ro = K.MS_BIND | K.MS_REC | K.MS_REMOUNT | K.MS_RDONLY | K.MS_NOSUID | K.MS_NODEV
    for path, kind in plan:
        target = new + path
        if kind == "mask":
            continue
        if kind.startswith("link:"):
            os.makedirs(os.path.dirname(target), exist_ok=True)
            os.symlink(kind[5:], target)
            continue
        if kind == "dir":
            os.makedirs(target, mode=0o755, exist_ok=True)
        else:
            os.makedirs(os.path.dirname(target), mode=0o755, exist_ok=True)
            open(target, "a").close()
        _step(f"bind {path}", K.mount, f"/proc/self/fd/{fds[path]}", target, None, K.MS_BIND | K.MS_REC)
        _step(f"read-only {path}", K.mount, None, target, None, ro)
    for path, kind in plan:
        if kind == "mask" and os.path.isdir(new + path):
            _step(f"hide {path}", K.mount, "tmpfs", new + path, "tmpfs",
                  K.MS_RDONLY | K.MS_NOSUID | K.MS_NODEV | K.MS_NOEXEC, "size=4k,mode=0555")
    for name, fd in dev_fds.items():
        open(f"{new}/dev/{name}", "a").close()
        _step(f"bind /dev/{name}", K.mount, f"/proc/self/fd/{fd}", f"{new}/dev/{name}", None, K.MS_BIND)
    _step("bind /proc", K.mount, f"/proc/self/fd/{proc_fd}", f"{new}/proc", None, K.MS_BIND | K.MS_REC)
    os.makedirs(f"{new}/.old", mode=0o700)


def _pivot() -> None:
    K.pivot_root(STAGING, f"{STAGING}/.old")
    os.chdir("/")
    K.umount("/.old")
    os.rmdir("/.old")
    K.mount(None, "/", None, K.MS_REMOUNT | K.MS_BIND | K.MS_RDONLY | K.MS_NOSUID | K.MS_NODEV)


def _private_user_namespace(uid: int) -> None:
    """Root: a user namespace whose 0 is `uid` outside, made while still privileged (so AppArmor's
    restriction of unprivileged user namespaces does not apply) and mapped by a forked helper
    that stays root outside (a process cannot map another uid for itself). Then become that 0."""
    os.setgroups([])
    go_r, go_w = os.pipe()
    done_r, done_w = os.pipe()
    helper = os.fork()
    if helper == 0:
        os.close(go_w)
        os.close(done_r)
        ok = b"0"
        if os.read(go_r, 1) == b"x":
            try:
                parent = os.getppid()
                for name, text in (("setgroups", "deny"), ("uid_map", f"0 {uid} 1\n"), ("gid_map", f"0 {uid} 1\n")):
                    with open(f"/proc/{parent}/{name}", "w") as f:
                        f.write(text)
                ok = b"1"
            except OSError:
                pass
        os.write(done_w, ok)
        os._exit(0)
    os.close(go_r)
    os.close(done_w)
    try:
        K.unshare(K.CLONE_NEWUSER | K.CLONE_NEWNET | K.CLONE_NEWIPC | K.CLONE_NEWUTS)
        os.write(go_w, b"x")
    finally:
        os.close(go_w)
        answer = os.read(done_r, 1)
        os.close(done_r)
        os.waitpid(helper, 0)
    if answer != b"1":
        raise OSError(1, "the helper could not write the uid map")
    os.setresgid(0, 0, 0)     # inside: 0; outside: the private uid
    os.setresuid(0, 0, 0)


# ====================================================================== per child

def child_namespaces() -> int:
    """Step 8: the namespaces the zygote clones each child into (kernel.fork_into)."""
    return K.CLONE_NEWPID | K.CLONE_NEWNS | K.CLONE_NEWIPC


def enter_child_jail(tmp_mb: int) -> dict:
    """Step 9, in the init (pid 1 of its namespace). Returns the layers that hold."""
    layers = {"private_tmp": False, "proc": False}
    K.prctl(K.PR_SET_PDEATHSIG, 9)
    K.mount("none", "/", None, K.MS_REC | K.MS_PRIVATE)
    # Opened before the tmpfs covers them: the interpreter's files under /tmp stay reachable.
    keep = [(path, kind, os.open(path, os.O_PATH | os.O_CLOEXEC)) for path, kind in UNDER_CHILD_TMPFS]
    try:
        for path, size_key, inodes in CHILD_TMPFS:
            size = f"{tmp_mb}m" if size_key else "16m"
            K.mount("tmpfs", path, "tmpfs", K.MS_NOSUID | K.MS_NODEV,
                    f"size={size},nr_inodes={inodes},mode=1777")
        for path, kind, fd in keep:
            _bind_again(path, kind, fd)
    finally:
        for _path, _kind, fd in keep:
            os.close(fd)
    layers["private_tmp"] = True
    try:
        K.mount("proc", "/proc", "proc", K.MS_NOSUID | K.MS_NODEV | K.MS_NOEXEC)
        layers["proc"] = True
    except OSError:
        # Mounting proc is refused (Docker masks parts of /proc): hide the outer one instead.
        K.mount("tmpfs", "/proc", "tmpfs", K.MS_NOSUID | K.MS_NODEV | K.MS_NOEXEC | K.MS_RDONLY, "size=4k")
    return layers


def _bind_again(path: str, kind: str, fd: int) -> None:
    """Bind `fd` (what the zygote bound at `path`) at `path` over the child's tmpfs, read-only.
    MS_REC carries the empty tmpfs that hides a kit folder inside it along."""
    if kind == "dir":
        os.makedirs(path, mode=0o755, exist_ok=True)
    else:
        os.makedirs(os.path.dirname(path), mode=0o755, exist_ok=True)
        open(path, "a").close()
    K.mount(f"/proc/self/fd/{fd}", path, None, K.MS_BIND | K.MS_REC)
    K.mount(None, path, None, K.MS_BIND | K.MS_REC | K.MS_REMOUNT | K.MS_RDONLY | K.MS_NOSUID | K.MS_NODEV)


def drop_privileges(last_cap: int) -> None:
    """Step 10: no capability left in any set, none regainable through exec."""
    K.drop_all_capabilities(last_cap)
    K.prctl(K.PR_SET_NO_NEW_PRIVS, 1)


# Refused with EPERM by the seccomp filter: none is needed by numpy, torch or matplotlib, and
# each is either not namespaced (keyrings, perf, bpf) or a frequent route to kernel bugs.
DENIED_SYSCALLS = (
    "ptrace", "process_vm_readv", "process_vm_writev", "kcmp", "pidfd_getfd",
    "keyctl", "add_key", "request_key",
    "unshare", "setns", "mount", "umount2", "pivot_root", "chroot", "move_mount", "open_tree", "fsopen",
    "fsmount", "fsconfig", "fspick", "mount_setattr",
    "bpf", "perf_event_open", "userfaultfd", "io_uring_setup", "io_uring_enter", "io_uring_register",
    "kexec_load", "kexec_file_load", "init_module", "finit_module", "delete_module", "reboot", "swapon",
    "swapoff", "syslog", "acct", "quotactl", "open_by_handle_at", "name_to_handle_at", "iopl", "ioperm",
    "settimeofday", "clock_settime", "clock_adjtime", "adjtimex", "sethostname", "setdomainname", "vhangup",
)
NAMESPACE_FLAGS = (0x00020000, 0x04000000, 0x08000000, 0x10000000, 0x20000000, 0x40000000, 0x02000000, 0x80)


# The libraries pyseccomp looks up as it is imported, by the names the loader knows them by.
SECCOMP_SONAMES = {"c": "libc.so.6", "seccomp": "libseccomp.so.2"}


class _NoSoname(LookupError):
    pass


def import_pyseccomp():
    """Step 11's library, in the zygote: pyseccomp, imported without the `ldconfig -p` process its
    import runs for each library it looks up (ctypes.util.find_library, which also imports
    subprocess): a process started for each lookup would slow every zygote's start. Its
    lookups are answered by the loader (dlopen of the soname) instead; where one cannot be, or the
    import fails in any way with the stand-in, it is imported again as it comes."""
    import ctypes
    import sys
    import types

    def find_library(name: str) -> str:
        soname = SECCOMP_SONAMES.get(name)
        if soname is None:
            raise _NoSoname(name)
        try:
            ctypes.CDLL(soname)
        except OSError:
            raise _NoSoname(soname) from None
        return soname

    util = types.ModuleType("ctypes.util")
    util.find_library = find_library
    real = sys.modules.get("ctypes.util")
    sys.modules["ctypes.util"], ctypes.util = util, util
    try:
        import pyseccomp
        return pyseccomp
    except Exception:  # noqa: BLE001 - a lookup the loader cannot answer, or a pyseccomp that asks more of ctypes.util
        sys.modules.pop("pyseccomp", None)
    finally:
        if real is not None:
            sys.modules["ctypes.util"], ctypes.util = real, real
        else:
            del sys.modules["ctypes.util"], ctypes.util
    import pyseccomp
    return pyseccomp


def seccomp_program(seccomp) -> bytes | None:
    """Step 11, made once in the zygote: the filter's BPF program, as libseccomp compiles the rules
    below (`seccomp`: the pyseccomp module, imported before the jail), or None without it. Each
    child only loads it (`install_seccomp`): compiling it in each child would slow every child."""
    if seccomp is None:
        return None
    import errno

    deny = seccomp.ERRNO(errno.EPERM)
    rules = seccomp.SyscallFilter(seccomp.ALLOW)
    for name in DENIED_SYSCALLS:
        try:
            rules.add_rule(deny, name)
        except (OSError, ValueError, RuntimeError):
            pass    # not a system call on this architecture or this libseccomp
    for flag in NAMESPACE_FLAGS:    # fork() stays allowed; clone() into a new namespace does not
        rules.add_rule(deny, "clone", seccomp.Arg(0, seccomp.MASKED_EQ, flag, flag))
    try:
        rules.add_rule(seccomp.ERRNO(errno.ENOSYS), "clone3")   # its flags are out of reach: libc falls back to clone
    except (OSError, ValueError, RuntimeError):
        pass
    with os.fdopen(os.memfd_create("attnkit-seccomp", os.MFD_CLOEXEC), "w+b") as f:
        rules.export_bpf(f)
        f.seek(0)
        return f.read()


def install_seccomp(program: bytes | None) -> bool:
    """Step 11, in the worker: the filter `seccomp_program` compiled, loaded with no-new-privileges
    (as libseccomp loads it)."""
    if not program:
        return False
    K.prctl(K.PR_SET_NO_NEW_PRIVS, 1)
    K.load_seccomp_filter(program)
    return True


def userns_hint(err) -> str:
    """Why a user namespace could not be made, with the setting that forbids it when one does."""
    for path in ("/proc/sys/kernel/unprivileged_userns_clone", "/proc/sys/user/max_user_namespaces",
                 "/proc/sys/kernel/apparmor_restrict_unprivileged_userns"):
        try:
            with open(path) as f:
                value = f.read().strip()
        except OSError:
            continue
        name = path[len("/proc/sys/"):].replace("/", ".")
        if (value == "0") != name.endswith("apparmor_restrict_unprivileged_userns"):
            return f"user namespaces are disabled ({name}={value}): {err}"
    return f"user namespaces are not available here ({err})"
