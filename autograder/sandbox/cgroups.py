"""Grader side: a child's processes as one unit -- cgroups (memory, process count and CPU time
of all its processes together), CPU time for the time limits, and killing what is left.

With a PID namespace (the jail) killing is simple: SIGKILL to its pid 1 and the kernel kills
the rest. Without one (no user namespaces), `kill_tree` hunts the child's processes in /proc.
"""

from __future__ import annotations

import itertools
import os
import signal
import subprocess
import time

V1_ROOT = "/sys/fs/cgroup"
V1_CONTROLLERS = ("memory", "pids", "cpuacct")
_ids = itertools.count(1)


class ChildCgroup:
    """The cgroup(s) of one child. Every method is best effort and never raises."""

    def __init__(self, version: str, dirs: dict[str, str]):
        self.version, self.dirs = version, dirs
        self._cpu_fd: int | None = None     # the CPU counter, kept open: read before and after every call

    def _write(self, controller: str, name: str, value: str) -> bool:
        try:
            with open(os.path.join(self.dirs[controller], name), "w") as f:
                f.write(value)
            return True
        except (OSError, KeyError):
            return False

    def _read(self, controller: str, name: str) -> str:
        try:
            with open(os.path.join(self.dirs[controller], name)) as f:
                return f.read()
        except (OSError, KeyError):
            return ""

    def add(self, pid: int) -> bool:
        return all(self._write(c, "cgroup.procs", str(pid)) for c in self.dirs)

    def procs_files(self) -> list[int]:
        """Each directory's cgroup.procs, open for writing: the zygote writes a new child's pid in
        them (the kernel checks the move against the opener, the grader). [] if one cannot be opened."""
        fds: list[int] = []
        try:
            for path in self.dirs.values():
                fds.append(os.open(os.path.join(path, "cgroup.procs"), os.O_WRONLY | os.O_CLOEXEC))
        except OSError:
            for fd in fds:
                os.close(fd)
            return []
        return fds

    def cpu_seconds(self) -> float | None:
        text = self._read_cpu()
        if self.version == "v1":
            return int(text) / 1e9 if text.strip().isdigit() else None
        for line in text.splitlines():
            if line.startswith("usage_usec "):
                return int(line.split()[1]) / 1e6
        return None

    def _read_cpu(self) -> str:
        """The counter read again from its open file (pread at 0 makes the kernel write it anew):
        opening and closing a cgroup file for each read, a few times per call, slowed the grader."""
        controller, name = ("cpuacct", "cpuacct.usage") if self.version == "v1" else ("unified", "cpu.stat")
        try:
            if self._cpu_fd is None:
                self._cpu_fd = os.open(os.path.join(self.dirs[controller], name), os.O_RDONLY | os.O_CLOEXEC)
            return os.pread(self._cpu_fd, 4096, 0).decode("ascii", "replace")
        except (OSError, KeyError):
            return ""

    def _close_cpu(self) -> None:
        fd, self._cpu_fd = self._cpu_fd, None
        if fd is not None:
            try:
                os.close(fd)
            except OSError:
                pass

    def out_of_memory(self) -> bool:
        key = "memory" if self.version == "v1" else "unified"
        events = self._read(key, "memory.oom_control" if self.version == "v1" else "memory.events")
        for line in events.splitlines():
            parts = line.split()
            if len(parts) == 2 and parts[0] == "oom_kill" and parts[1].isdigit() and int(parts[1]) > 0:
                return True
        failcnt = self._read("memory", "memory.failcnt").strip() if self.version == "v1" else ""
        return failcnt.isdigit() and int(failcnt) > 0

    def pids(self) -> list[int]:
        found = set()
        for controller in self.dirs:
            for line in self._read(controller, "cgroup.procs").split():
                if line.isdigit():
                    found.add(int(line))
        return sorted(found)

    def kill(self) -> None:
        if self.version == "v2" and self._write("unified", "cgroup.kill", "1"):
            return
        killed: set[int] = set()
        for _ in range(20):
            # Killed processes stay listed until they are reaped: only new ones (a fork that raced
            # the last pass) need another pass, not the dying ones again.
            pids = set(self.pids()) - killed
            if not pids:
                return
            killed |= _sigkill(pids)

    def remove(self, wait: float = 0.5) -> bool:
        """rmdir every directory (after kill); False if some are still busy (zombies being reaped)."""
        self._close_cpu()     # an open file keeps nothing busy, but a removed group is read no more
        deadline = time.monotonic() + wait
        left = dict(self.dirs)
        while left:
            for controller, path in list(left.items()):
                try:
                    os.rmdir(path)
                    left.pop(controller)
                except FileNotFoundError:
                    left.pop(controller)
                except OSError:
                    pass
            if not left or time.monotonic() > deadline:
                break
            time.sleep(0.01)
        self.dirs = left
        return not left


class Cgroups:
    """Where a sandbox makes its children's cgroups: v1 controllers (as root), or a delegated,
    writable v2 subtree. `Cgroups.detect()` answers (Cgroups or None, why not)."""

    def __init__(self, version: str, bases: dict[str, str]):
        self.version, self.bases = version, bases
        self.leftovers: list[ChildCgroup] = []

    @classmethod
    def detect(cls) -> tuple["Cgroups | None", str]:
        name = f"attnkit-{os.getpid()}-{next(_ids)}"
        v1 = {c: os.path.join(V1_ROOT, c) for c in V1_CONTROLLERS}
        if all(os.path.isfile(os.path.join(p, "cgroup.procs")) for p in v1.values()):
            for p in v1.values():
                sweep_stale(p)
            bases = {}
            try:
                for c, p in v1.items():
                    os.mkdir(os.path.join(p, name), 0o755)
                    bases[c] = os.path.join(p, name)
                return cls("v1", bases), ""
            except OSError as err:
                for p in bases.values():
                    _rmdir(p)
                return None, f"cgroup v1 controllers are not writable ({err.strerror})"
        return cls._detect_v2(name)

    @classmethod
    def _detect_v2(cls, name: str) -> tuple["Cgroups | None", str]:
        root = V1_ROOT if os.path.isfile(os.path.join(V1_ROOT, "cgroup.controllers")) else \
            os.path.join(V1_ROOT, "unified")
        try:
            with open("/proc/self/cgroup") as f:
                own = next(line.split("::", 1)[1].strip() for line in f if line.startswith("0::"))
        except (OSError, StopIteration):
            return None, "no cgroup v2 hierarchy"
        mine = os.path.join(root, own.lstrip("/"))
        sweep_stale(mine)
        base = os.path.join(mine, name)
        try:
            os.mkdir(base, 0o755)
        except OSError as err:
            return None, f"the cgroup v2 subtree {own} is not delegated to this user ({err.strerror})"
        try:
            with open(os.path.join(base, "cgroup.subtree_control"), "w") as f:
                f.write("+memory +pids")     # cpu.stat (usage_usec) exists without the cpu controller
        except OSError as err:
            _rmdir(base)
            return None, f"memory and pids controllers cannot be enabled in {own} ({err.strerror})"
        return cls("v2", {"unified": base}), ""

    def create(self, memory_mb: int, max_processes: int) -> ChildCgroup | None:
        name = f"child-{next(_ids)}"
        dirs = {}
        try:
            for c, base in self.bases.items():
                dirs[c] = os.path.join(base, name)
                os.mkdir(dirs[c], 0o755)
        except OSError:
            ChildCgroup(self.version, {c: d for c, d in dirs.items() if os.path.isdir(d)}).remove(0)
            return None
        group = ChildCgroup(self.version, dirs)
        limit = str(memory_mb * 1024 * 1024)
        if self.version == "v1":
            group._write("memory", "memory.limit_in_bytes", limit)
            group._write("memory", "memory.memsw.limit_in_bytes", limit)   # no escape into swap
            group._write("pids", "pids.max", str(max_processes))
        else:
            group._write("unified", "memory.max", limit)
            group._write("unified", "memory.swap.max", "0")
            group._write("unified", "pids.max", str(max_processes))
        return group

    def discard(self, group: ChildCgroup) -> None:
        """Killed now; removed now if its processes are gone, else at a later discard (or close):
        waiting here for the zygote to reap them would cost every child that wait."""
        group.kill()
        self.leftovers = [g for g in [*self.leftovers, group] if not g.remove(0)]

    def close(self) -> None:
        for group in self.leftovers:
            group.kill()
            group.remove(1.0)
        for base in self.bases.values():
            _rmdir(base)


_SWEPT: set[str] = set()
STALE_AFTER_S = 3600


def sweep_stale(parent: str) -> None:
    """Removes, once per process and parent folder, the empty cgroups a grader left behind when it
    was killed before closing its sandbox (`attnkit-<pid>-<n>` with their `child-<n>`): those of a
    process that is gone, untouched for an hour. A group that still holds a process is never
    removed (the kernel refuses), nor one of a live process."""
    if parent in _SWEPT:
        return
    _SWEPT.add(parent)
    try:
        names = [n for n in os.listdir(parent) if n.startswith("attnkit-")]
    except OSError:
        return
    now = time.time()
    for name in names:
        pid = name.split("-")[1]
        base = os.path.join(parent, name)
        try:
            if not pid.isdigit() or os.path.exists(f"/proc/{pid}") or now - os.stat(base).st_mtime < STALE_AFTER_S:
                continue
            for child in os.listdir(base):
                if child.startswith("child-"):
                    _rmdir(os.path.join(base, child))
        except OSError:
            continue
        _rmdir(base)


def _rmdir(path: str) -> None:
    try:
        os.rmdir(path)
    except OSError:
        pass


def process_cpu_seconds(pid: int) -> float | None:
    """utime + stime + waited-for children of one process, from /proc/PID/stat."""
    try:
        with open(f"/proc/{pid}/stat", "rb") as f:
            fields = f.read().rsplit(b")", 1)[1].split()
        return sum(int(x) for x in fields[11:15]) / os.sysconf("SC_CLK_TCK")
    except (OSError, IndexError, ValueError):
        return None


# ====================================================================== without a PID namespace

def _scan_proc(skip: set[int] = frozenset()) -> dict[int, tuple[int, int, int, str, int]]:
    """pid -> (ppid, pgrp, session, state, uid) of every process we can see, except `skip`
    (reading the stat of a process that is tearing down its memory waits for it)."""
    procs = {}
    try:
        names = os.listdir("/proc")
    except OSError:
        return procs
    for name in names:
        if not name.isdigit() or int(name) in skip:
            continue
        try:
            with open(f"/proc/{name}/stat", "rb") as f:
                data = f.read()
        except OSError:
            continue
        rest = data[data.rfind(b")") + 2:].split()
        try:
            uid = os.stat(f"/proc/{name}").st_uid
            procs[int(name)] = (int(rest[1]), int(rest[2]), int(rest[3]), rest[0].decode(), uid)
        except (IndexError, ValueError, OSError):
            continue
    return procs


def _doomed(pid: int, procs: dict, child: int, zygote: int, protected: set[int], uid: int | None,
            killed: set[int]) -> bool:
    ppid, pgrp, sid, state, owner = procs[pid]
    if state in ("Z", "X") or pid in (zygote, os.getpid()) or pid in protected:
        return False
    if sid == child or pgrp == child or pid == child or (uid is not None and owner == uid):
        return True
    current, steps = pid, 0
    while steps < 4096:
        parent = procs.get(current, (0,))[0]
        if parent == child or parent in killed:
            return True
        if parent == zygote:
            return current not in protected   # an orphan the zygote (a subreaper) inherited
        if parent <= 1:
            return False
        current, steps = parent, steps + 1
    return False


def kill_tree(child: int, zygote: int, protected: set[int], uid: int | None = None) -> None:
    """SIGKILLs the child's process group, then every process of its session, its descendants,
    orphans it left with the zygote, and everything running as its private uid (when it has
    one); repeats until a scan finds nothing new."""
    for kill in (os.killpg, os.kill):
        try:
            kill(child, signal.SIGKILL)
        except OSError:
            pass
    killed: set[int] = {child}
    for _ in range(50):
        procs = _scan_proc(killed)
        victims = {p for p in procs if _doomed(p, procs, child, zygote, protected, uid, killed)} - killed
        if not victims:
            return
        killed |= _sigkill(victims)


def _sigkill(pids: set[int]) -> set[int]:
    """SIGKILL each of `pids` (one already gone is no error); returns them."""
    for pid in pids:
        try:
            os.kill(pid, signal.SIGKILL)
        except OSError:
            pass
    return pids


def remove_in_background(path: str) -> None:
    """Without a jail, a child's folder is removed by `rm -rf` in the background: deep trees,
    many files and odd modes cost the grader nothing, and never raise here."""
    try:
        subprocess.Popen(["rm", "-rf", "--one-file-system", "--", path], stdin=subprocess.DEVNULL,
                         stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, start_new_session=True)
    except OSError:
        pass
