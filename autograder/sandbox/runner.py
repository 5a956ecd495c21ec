"""The grader's side of the sandbox: `Sandbox`, `Session`, `Limits`, `CallOutcome`.

    with Sandbox(limits) as sandbox:                       # starts one zygote process
        with sandbox.session(stem, source, filename, provided={...}) as s:   # forks a child
            s.import_outcome                               # CallOutcome: "ok" or why not
            s.call("softmax", [x], {"axis": -1}, returns="array")
            s.attribute("SCORES", returns="array")
            s.call_module("MultiHeadAttention", init_args=[8, 2], state={...},
                          forward_args=[x], forward_kwargs={"mask": m}, returns=("tuple", "array", "array"))

Student code never runs in this process. Everything a child sends is validated here again
(kinds, dtypes, JSON structure, frame sizes); nothing it sends can raise in the grader.
See docs/architecture.md, "The sandbox protocol".
"""

from __future__ import annotations

import contextlib
import itertools
import json
import os
import select
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass
from typing import Any, Iterator

import numpy as np

from autograder.sandbox import protocol
from autograder.sandbox.protocol import FrameTimeout, PeerClosed, ProtocolError, TensorArg

ZYGOTE_PATH = os.path.join(os.path.dirname(os.path.abspath(__file__)), "zygote.py")
KIT_ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
STATUSES = ("ok", "missing", "raised", "timeout", "crashed", "bad_return", "not_run")
CONTRACT_STEMS = ("hand_computation", "attention", "causal_mask", "scaling", "multihead")
UID_BASE = 1_000_000
EXIT_MEMORY = 113
EXIT_INTERNAL = 114
OUTPUT_TAIL = 2048
MESSAGE_MAX = 2000
_ENV_KEEP = {"PATH", "HOME", "LANG", "LANGUAGE", "TZ", "TMPDIR", "LD_LIBRARY_PATH", "MPLCONFIGDIR",
             "XDG_CACHE_HOME", "XDG_CONFIG_HOME"}
_SIGNALS = {
    signal.SIGSEGV: "segmentation fault", signal.SIGBUS: "bus error", signal.SIGABRT: "aborted",
    signal.SIGFPE: "floating-point exception", signal.SIGILL: "illegal instruction",
    signal.SIGTERM: "terminated", signal.SIGKILL: "killed; perhaps the machine ran out of memory",
    signal.SIGXFSZ: "wrote a file larger than the output limit",
}


class SandboxError(RuntimeError):
    """The sandbox itself cannot work (the zygote does not start). Not the student's fault."""


@dataclass(frozen=True)
class Limits:
    call_timeout: float = 10.0        # s, per call (a call may pass its own)
    import_timeout: float = 20.0      # s, executing the module
    memory_mb: int = 2048             # address space on top of the child's size at fork
    cpu_seconds: int = 60             # CPU time per child process
    max_processes: int = 64           # RLIMIT_NPROC (not enforced for root: see drop_privileges)
    output_bytes: int = 1024 * 1024   # the capture file of prints (RLIMIT_FSIZE)
    max_frame_bytes: int = 64 * 1024 * 1024   # the largest answer accepted from a child
    max_restarts: int = 3             # fresh children per session after a timeout or crash
    drop_privileges: bool = True      # as root: children run as a private unprivileged uid, and the
                                      # kit's folder is hidden from them (a private mount namespace)


@dataclass
class CallOutcome:
    status: str                       # one of STATUSES
    value: Any = None                 # plain data of the declared kind when status == "ok"
    dtype: Any = None                 # what the student returned: "float32", "list"... (a list for tuples)
    message: str = ""
    output: str = ""                  # the last ~2 KB the student printed during the call

    @property
    def ok(self) -> bool:
        return self.status == "ok"


def tensor(array, dtype: str | None = None) -> TensorArg:
    """Marks an argument to arrive in the child as a torch tensor (of `dtype`, default: the array's)."""
    return TensorArg(array, dtype)


# ====================================================================== the zygote process

class _ZygoteDied(Exception):
    pass


class _Zygote:
    """One zygote process and its control socket. Events are read synchronously."""

    def __init__(self, root: str) -> None:
        ours, theirs = socket.socketpair(socket.AF_UNIX, socket.SOCK_SEQPACKET)
        self.stderr = tempfile.TemporaryFile()
        env = {k: v for k, v in os.environ.items() if k in _ENV_KEEP or k.startswith("LC_")}
        env.update(OMP_NUM_THREADS="1", OPENBLAS_NUM_THREADS="1", MKL_NUM_THREADS="1", MPLBACKEND="Agg")
        try:
            self.proc = subprocess.Popen(
                [sys.executable, "-I", ZYGOTE_PATH, str(theirs.fileno()), root], pass_fds=[theirs.fileno()],
                stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=self.stderr, env=env, cwd="/",
                start_new_session=True)
        finally:
            theirs.close()
        self.sock = ours
        self.pid = self.proc.pid
        self.ready = False
        self.dead = False
        self.exits: dict[int, tuple[int | None, int | None]] = {}
        self.forked: dict[int, Any] = {}
        self.live: set[int] = set()
        self.forgotten: set[int] = set()   # children nobody will ask about: drop their exit reports
        self._ids = itertools.count(1)

    def alive(self) -> bool:
        if not self.dead and self.proc.poll() is not None:
            self.poll(0)
            self.dead = True
        return not self.dead

    def wait_ready(self, timeout: float) -> None:
        deadline = time.monotonic() + timeout
        while not self.ready:
            if self.dead or time.monotonic() > deadline:
                raise SandboxError(f"the sandbox server did not start: {self.stderr_tail() or 'no message'}")
            self.poll(min(0.5, max(0.0, deadline - time.monotonic())))
            if not self.ready and self.proc.poll() is not None:
                self.poll(0)
                self.dead = self.dead or not self.ready
                if self.dead:
                    raise SandboxError(f"the sandbox server exited with code {self.proc.returncode}: "
                                       f"{self.stderr_tail() or 'no message'}")

    def poll(self, timeout: float = 0.0) -> None:
        """Handles every event that is ready, waiting up to `timeout` for the first one."""
        wait = timeout
        while not self.dead:
            try:
                readable, _, _ = select.select([self.sock], [], [], max(0.0, wait))
            except (OSError, ValueError):
                self.dead = True
                return
            if not readable:
                return
            try:
                data = self.sock.recv(65536)
            except OSError:
                data = b""
            if not data:
                self.dead = True
                return
            self._handle(data)
            wait = 0.0

    def _handle(self, data: bytes) -> None:
        try:
            msg = json.loads(data.decode("utf-8"))
        except ValueError:
            return
        event = msg.get("event")
        if event == "ready":
            self.ready = True
        elif event == "forked":
            self.forked[msg.get("id")] = int(msg["pid"])
            self.live.add(int(msg["pid"]))
        elif event == "fork_failed":
            self.forked[msg.get("id")] = str(msg.get("message", "fork failed"))
        elif event == "exit":
            pid = int(msg["pid"])
            self.live.discard(pid)
            if pid in self.forgotten:
                self.forgotten.discard(pid)
            else:
                self.exits[pid] = (msg.get("code"), msg.get("signal"))

    def fork(self, sess_fd: int, cap_fd: int, timeout: float = 30.0) -> int:
        request = next(self._ids)
        data = json.dumps({"op": "fork", "id": request}).encode("utf-8")
        try:
            socket.send_fds(self.sock, [data], [sess_fd, cap_fd])
        except OSError as err:
            self.dead = True
            raise _ZygoteDied(str(err)) from None
        deadline = time.monotonic() + timeout
        while request not in self.forked:
            if not self.alive() or time.monotonic() > deadline:
                raise _ZygoteDied("the sandbox server did not answer")
            self.poll(min(0.2, max(0.0, deadline - time.monotonic())))
        answer = self.forked.pop(request)
        if isinstance(answer, str):
            raise _ZygoteDied(answer)
        return answer

    def wait_exit(self, pid: int, timeout: float) -> tuple[int | None, int | None] | None:
        deadline = time.monotonic() + timeout
        while pid not in self.exits:
            remaining = deadline - time.monotonic()
            if remaining <= 0 or not self.alive():
                break
            self.poll(min(remaining, 0.1))
        return self.exits.pop(pid, None)

    def stderr_tail(self) -> str:
        try:
            size = os.fstat(self.stderr.fileno()).st_size
            data = os.pread(self.stderr.fileno(), 2000, max(0, size - 2000))
        except OSError:
            return ""
        text = data.decode("utf-8", "replace")
        return "".join(ch if ch.isprintable() or ch in "\n\t" else "?" for ch in text).strip()

    def close(self) -> None:
        if not self.dead:
            try:
                self.sock.send(json.dumps({"op": "exit"}).encode("utf-8"))
            except OSError:
                pass
        try:
            self.sock.close()
        except OSError:
            pass
        try:
            self.proc.wait(timeout=2)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            self.proc.wait()
        for pid in list(self.live):
            _kill_tree(pid, self.pid, set())
        self.live.clear()
        self.dead = True
        self.stderr.close()


# ====================================================================== process cleanup

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


def _kill_tree(child: int, zygote: int, protected: set[int], uid: int | None = None) -> None:
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
        for pid in victims:
            try:
                os.kill(pid, signal.SIGKILL)
            except OSError:
                pass
        killed |= victims


def _exit_text(info: tuple[int | None, int | None] | None, limits: Limits) -> str:
    if info is None:
        return "the process died"
    code, sig = info
    if sig is not None:
        if sig == signal.SIGXCPU:
            return f"exceeded the CPU time limit of {limits.cpu_seconds} s"
        try:
            name = signal.Signals(sig).name
        except ValueError:
            name = f"signal {sig}"
        what = _SIGNALS.get(sig) or (signal.strsignal(sig) or name).lower()
        return f"the process was killed by signal {sig} ({what})"
    if code == EXIT_MEMORY:
        return f"exceeded the memory limit of {limits.memory_mb} MB"
    if code == EXIT_INTERNAL:
        return "the sandbox could not set up the process"
    return f"the process exited with code {code} (the code called os._exit({code}) or similar)"


def _clean(text: Any, limit: int = MESSAGE_MAX) -> str:
    if not isinstance(text, str):
        return ""
    text = "".join(ch if ch.isprintable() or ch in "\n\t" else "?" for ch in text[: limit * 2])
    return text if len(text) <= limit else text[: limit - 3] + "..."


# ====================================================================== validation of answers

class _Invalid(Exception):
    pass


def _check_kind(kind) -> Any:
    """The kind as sent over JSON; raises ValueError for a kind the sandbox does not know."""
    if kind in ("array", "float", "float_dict_dict", "figure"):
        return kind
    if isinstance(kind, (tuple, list)) and len(kind) >= 2 and kind[0] == "tuple":
        return ["tuple"] + [_check_kind(k) for k in kind[1:]]
    raise ValueError(f"unknown return kind {kind!r}")


def _validate(value: Any, dtype: Any, kind: Any) -> tuple[Any, Any]:
    if isinstance(kind, list):
        kinds = kind[1:]
        if not isinstance(value, tuple) or len(value) != len(kinds):
            raise _Invalid("a tuple of the wrong length")
        if not isinstance(dtype, list) or len(dtype) != len(kinds):
            raise _Invalid("dtypes of the wrong length")
        pairs = [_validate(v, d, k) for v, d, k in zip(value, dtype, kinds)]
        return tuple(v for v, _ in pairs), [d for _, d in pairs]
    if not (dtype is None or (isinstance(dtype, str) and len(dtype) <= 40)):
        raise _Invalid("a malformed dtype")
    if kind == "array":
        if type(value) is not np.ndarray or value.dtype != np.float64:
            raise _Invalid("not a float64 array")
        return value, dtype
    if kind == "float":
        if type(value) is int:
            value = float(value)
        if type(value) is not float:
            raise _Invalid("not a float")
        return value, dtype
    if kind == "float_dict_dict":
        return _validate_dict(value), dtype
    if kind == "figure":
        return _validate_figure(value), dtype
    raise _Invalid(f"unknown kind {kind!r}")


def _number(x: Any) -> float:
    if type(x) in (int, float):
        return float(x)
    raise _Invalid("not a number")


def _validate_dict(value: Any) -> dict[int, dict[str, float]]:
    if type(value) is not dict:
        raise _Invalid("not a dict")
    out: dict[int, dict[str, float]] = {}
    for key, inner in value.items():
        if type(key) is not str or not key.lstrip("-").isdigit() or len(key) > 30:
            raise _Invalid("a key that is not an int")
        if type(inner) is not dict:
            raise _Invalid("an inner value that is not a dict")
        row = {}
        for name, number in inner.items():
            if type(name) is not str:
                raise _Invalid("an inner key that is not a str")
            row[name] = _number(number)
        out[int(key)] = row
    return out


def _text_field(d: dict, key: str) -> str:
    value = d.get(key, "")
    if type(value) is not str:
        raise _Invalid(f"{key} is not text")
    return value


def _int_field(d: dict, key: str) -> int:
    value = d.get(key, 0)
    if type(value) is not int or value < 0:
        raise _Invalid(f"{key} is not a count")
    return value


def _text_list(d: dict, key: str) -> list[str]:
    value = d.get(key, [])
    if type(value) is not list or any(type(t) is not str for t in value):
        raise _Invalid(f"{key} is not a list of text")
    return list(value)


def _points(value: Any) -> list:
    if type(value) is not list:
        raise _Invalid("line data is not a list")
    out = []
    for x in value:
        if type(x) in (int, float):
            out.append(float(x))
        elif type(x) is str or x is None:
            out.append(x)
        else:
            raise _Invalid("line data holds something that is not a number")
    return out


def _validate_figure(value: Any) -> dict:
    if type(value) is not dict or type(value.get("axes")) is not list:
        raise _Invalid("not a figure description")
    axes = []
    for ax in value["axes"]:
        if type(ax) is not dict or type(ax.get("lines", [])) is not list:
            raise _Invalid("an axes description is malformed")
        lines = []
        for line in ax.get("lines", []):
            if type(line) is not dict:
                raise _Invalid("a line description is malformed")
            lines.append({"label": _text_field(line, "label"), "x": _points(line.get("x", [])),
                          "y": _points(line.get("y", []))})
        axes.append({
            "title": _text_field(ax, "title"), "xlabel": _text_field(ax, "xlabel"),
            "ylabel": _text_field(ax, "ylabel"), "xscale": _text_field(ax, "xscale"),
            "yscale": _text_field(ax, "yscale"), "legend": _text_list(ax, "legend"), "lines": lines,
            "collections": _int_field(ax, "collections"),
            "collection_labels": _text_list(ax, "collection_labels"), "patches": _int_field(ax, "patches"),
        })
    return {"axes": axes, "suptitle": _text_field(value, "suptitle"), "legends": _text_list(value, "legends"),
            "supxlabel": _text_field(value, "supxlabel"), "supylabel": _text_field(value, "supylabel")}


# ====================================================================== children and sessions

class _Child:
    """One forked child: its pid, its socket, its temp folder and capture file."""

    def __init__(self, pid: int, sock: socket.socket, tmpdir: str, cap_fd: int, uid: int | None):
        self.pid, self.sock, self.tmpdir, self.cap_fd, self.uid = pid, sock, tmpdir, cap_fd, uid
        self.alive = True

    def output_size(self) -> int:
        try:
            return os.fstat(self.cap_fd).st_size
        except OSError:
            return 0

    def output_since(self, start: int) -> str:
        size = self.output_size()
        begin = max(start, size - OUTPUT_TAIL) if size >= start else max(0, size - OUTPUT_TAIL)
        if size <= begin:
            return ""
        try:
            data = os.pread(self.cap_fd, size - begin, begin)
        except OSError:
            return ""
        text = data.decode("utf-8", "replace")
        return "".join(ch if ch.isprintable() or ch in "\n\t" else "?" for ch in text)


class Sandbox:
    """One warm zygote; `session()` forks a child per stem of a submission. Use from one thread;
    several Sandboxes (one per worker) can run at the same time."""

    def __init__(self, limits: Limits | None = None, *, blocked: tuple[str, ...] = (),
                 hide: tuple[str, ...] = (), stems: tuple[str, ...] = CONTRACT_STEMS,
                 startup_timeout: float = 120.0):
        """`blocked`: more top-level module names a submission may not import. `hide`: more
        folders (e.g. the class's submissions) to make unreadable in children, besides the kit."""
        self.limits = limits or Limits()
        self.blocked = tuple(blocked)
        self.hide = (KIT_ROOT,) + tuple(os.path.abspath(p) for p in hide)
        self.stems = tuple(stems)
        self.startup_timeout = startup_timeout
        self._closed = False
        self._uids = 0
        # Every child's folder lives under this one, which the zygote removes when it exits: a
        # grader killed with SIGKILL leaves no student's code behind in the temp folder.
        self._root = tempfile.mkdtemp(prefix="attnkit-sandbox-")
        os.chmod(self._root, 0o711)            # children may enter their own folder, not list others
        self._zygote: _Zygote | None = _Zygote(self._root)
        self.restarts = 0   # how often the zygote had to be started again

    # -------------------------------------------------------------- zygote

    def _ensure_zygote(self) -> _Zygote:
        if self._closed:
            raise SandboxError("the sandbox is closed")
        z = self._zygote
        if z is None or not z.alive():
            if z is not None:
                z.close()
                self.restarts += 1
            z = self._zygote = _Zygote(self._root)
        if not z.ready:
            z.wait_ready(self.startup_timeout)
        return z

    def _uid(self, z: _Zygote) -> tuple[int | None, int | None]:
        """As root: a private unprivileged uid per child, unique among live children of all
        sandboxes (zygote pid, and a counter), so RLIMIT_NPROC counts that child's processes only."""
        if not self.limits.drop_privileges or os.geteuid() != 0:
            return None, None
        self._uids += 1
        uid = UID_BASE + (z.pid % (1 << 22)) * 256 + self._uids % 256
        return uid, uid

    def _spawn(self, stem: str, source: str, filename: str, provided: dict,
               timeout: float) -> tuple[_Child | None, CallOutcome]:
        """Forks a child and imports the source in it: (child or None, import outcome)."""
        for attempt in (1, 2):
            z = self._ensure_zygote()
            uid, gid = self._uid(z)
            tmpdir = tempfile.mkdtemp(prefix="child-", dir=self._root)
            path = os.path.join(tmpdir, f"{stem}.py")
            with open(path, "w", encoding="utf-8", errors="surrogateescape") as f:
                f.write(source)
            cap_fd = os.open(os.path.join(tmpdir, ".output"),
                             os.O_RDWR | os.O_CREAT | os.O_EXCL | os.O_CLOEXEC | os.O_NOFOLLOW, 0o600)
            if uid is not None:
                os.chown(tmpdir, uid, gid)
            ours, theirs = socket.socketpair(socket.AF_UNIX, socket.SOCK_STREAM)
            try:
                pid = z.fork(theirs.fileno(), cap_fd)
            except _ZygoteDied as err:
                ours.close()
                os.close(cap_fd)
                shutil.rmtree(tmpdir, ignore_errors=True)
                if attempt == 2:
                    return None, CallOutcome("not_run", message=f"the sandbox could not start a process ({err})")
                continue
            finally:
                theirs.close()
            child = _Child(pid, ours, tmpdir, cap_fd, uid)
            break
        limits = self.limits
        init = {"op": "init", "stem": stem, "filename": filename, "path": path, "tmpdir": tmpdir,
                "uid": uid, "gid": gid, "stems": list(self.stems), "blocked": list(self.blocked),
                "hide": list(self.hide) if limits.drop_privileges else [],
                "limits": {"cpu_seconds": limits.cpu_seconds, "memory_mb": limits.memory_mb,
                           "max_processes": limits.max_processes, "output_bytes": limits.output_bytes}}
        frame = protocol.message(init, {"source": source, "provided": dict(provided)})
        reply = self._roundtrip(child, frame, timeout)
        if isinstance(reply, CallOutcome):
            if reply.status == "timeout":
                message = (f"importing {filename} did not finish within {timeout:g} s (is there an infinite "
                           f"loop or a long computation at the top level of the file?)")
            else:
                message = f"the process crashed while importing {filename}: {reply.message}"
            return child, CallOutcome("not_run", message=message, output=reply.output)
        header, _blobs, output = reply
        status = header.get("status")
        if status == "ok":
            return child, CallOutcome("ok", output=output)
        message = _clean(header.get("message")) or "the module could not be imported"
        return child, CallOutcome("not_run", message=message, output=output)

    def _roundtrip(self, child: _Child, frame: bytes, timeout: float):
        """Sends one request and reads the answer: (header, blobs, output) or a failed CallOutcome
        (timeout, crashed, bad_return). A failure leaves the child dead."""
        start = child.output_size()
        deadline = time.monotonic() + timeout
        try:
            protocol.send_frame(child.sock, frame, deadline)
            header, blobs = protocol.recv_frame(child.sock, deadline, self.limits.max_frame_bytes)
        except FrameTimeout:
            self._kill(child)
            return CallOutcome("timeout", message=f"stopped after {timeout:g} s", output=child.output_since(start))
        except (PeerClosed, OSError):
            return self._crashed(child, start)
        except ProtocolError as err:
            self._kill(child)
            return CallOutcome("bad_return", message=f"the answer could not be read ({_clean(str(err), 200)})",
                               output=child.output_since(start))
        except Exception as err:  # noqa: BLE001 - never let a child's bytes raise in the grader
            self._kill(child)
            return CallOutcome("bad_return", message=f"the answer could not be read ({type(err).__name__})",
                               output=child.output_since(start))
        return header, blobs, child.output_since(start)

    def _crashed(self, child: _Child, start: int) -> CallOutcome:
        z = self._zygote
        info = z.wait_exit(child.pid, 2.0) if z is not None else None
        if info is None and z is not None and not z.alive():
            message = "the sandbox's server process died"
        elif info is None:
            message = "the process closed its connection to the grader"
        else:
            message = _exit_text(info, self.limits)
        self._kill(child)
        return CallOutcome("crashed", message=message, output=child.output_since(start))

    def _kill(self, child: _Child) -> None:
        if not child.alive:
            return
        child.alive = False
        z = self._zygote
        zygote_pid = z.pid if z is not None else -1
        protected = (z.live - {child.pid}) if z is not None else set()
        _kill_tree(child.pid, zygote_pid, protected, child.uid)
        try:
            child.sock.close()
        except OSError:
            pass

    def _discard(self, child: _Child) -> None:
        self._kill(child)
        try:
            os.close(child.cap_fd)
        except OSError:
            pass
        shutil.rmtree(child.tmpdir, ignore_errors=True)
        z = self._zygote
        if z is not None and not z.dead:
            z.poll(0)
            if z.exits.pop(child.pid, None) is None and child.pid in z.live:
                z.forgotten.add(child.pid)

    # -------------------------------------------------------------- public

    @contextlib.contextmanager
    def session(self, stem: str, source: str, filename: str | None = None,
                provided: dict[str, str] | None = None) -> Iterator["Session"]:
        s = Session(self, stem, source, filename or f"{stem}.py", provided or {})
        try:
            yield s
        finally:
            s.close()

    def close(self) -> None:
        if self._closed:
            return
        self._closed = True
        if self._zygote is not None:
            self._zygote.close()
            self._zygote = None
        shutil.rmtree(self._root, ignore_errors=True)

    def __enter__(self) -> "Sandbox":
        return self

    def __exit__(self, *exc) -> None:
        self.close()

    def __del__(self) -> None:
        try:
            self.close()
        except Exception:  # noqa: BLE001
            pass


class Session:
    """One stem of one submission, running in a child. Each call answers a CallOutcome; after a
    timeout or a crash the next call gets a fresh child (at most limits.max_restarts times)."""

    def __init__(self, sandbox: Sandbox, stem: str, source: str, filename: str, provided: dict[str, str]):
        self.sandbox, self.stem, self.source, self.filename = sandbox, stem, source, filename
        self.provided = dict(provided)
        self.limits = sandbox.limits
        self.restarts = 0
        self._seq = 0
        self._closed = False
        self._failure: CallOutcome | None = None   # what killed the last child
        self._timed_out: dict[str, CallOutcome] = {}
        started = time.monotonic()
        self._child, self.import_outcome = sandbox._spawn(stem, source, filename, self.provided,
                                                          self.limits.import_timeout)
        self.import_seconds = time.monotonic() - started
        if self.import_outcome.status != "ok" and self._child is not None:
            sandbox._discard(self._child)
            self._child = None

    # -------------------------------------------------------------- calls

    def call(self, function: str, args=(), kwargs: dict | None = None, returns: Any = "array",
             timeout: float | None = None) -> CallOutcome:
        payload = {"args": list(args), "kwargs": dict(kwargs or {})}
        return self._request(function, {"op": "call", "function": function}, payload, returns, timeout)

    def attribute(self, name: str, returns: Any = "array", timeout: float | None = None) -> CallOutcome:
        return self._request(name, {"op": "attribute", "name": name}, {}, returns, timeout)

    def call_module(self, class_name: str, init_args=(), init_kwargs: dict | None = None,
                    state: dict[str, np.ndarray] | None = None, forward_args=(), forward_kwargs: dict | None = None,
                    returns: Any = ("tuple", "array", "array"), timeout: float | None = None) -> CallOutcome:
        """Instantiates the submission's torch.nn.Module subclass, copies `state` into its tensors
        (shapes checked), and calls it. Arrays in forward_args/forward_kwargs arrive as tensors."""
        payload = {"init_args": list(init_args), "init_kwargs": dict(init_kwargs or {}),
                   "state": {k: np.asarray(v) for k, v in (state or {}).items()},
                   "args": [_as_tensor(a) for a in forward_args],
                   "kwargs": {k: _as_tensor(v) for k, v in (forward_kwargs or {}).items()}}
        return self._request(class_name, {"op": "module", "class_name": class_name}, payload, returns, timeout)

    def _request(self, name: str, header: dict, payload: dict, returns: Any,
                 timeout: float | None) -> CallOutcome:
        kind = _check_kind(returns)
        seq = self._seq = self._seq + 1
        frame = protocol.message(dict(header, returns=kind, seq=seq), payload)
        if self._closed:
            return CallOutcome("not_run", message="the session is closed")
        if self.import_outcome.status != "ok":
            return CallOutcome("not_run", message=self.import_outcome.message)
        if name in self._timed_out:
            return CallOutcome("timeout", message=f"not run again: an earlier call of {name} "
                                                  f"{self._timed_out[name].message}")
        ready = self._ready_child()
        if ready is not None:
            return ready
        child = self._child
        limit = self.limits.call_timeout if timeout is None else timeout
        reply = self.sandbox._roundtrip(child, frame, limit)
        if isinstance(reply, CallOutcome):
            self._failure = CallOutcome(reply.status, message=f"{reply.message} (in {name})")
            if reply.status == "timeout":
                self._timed_out[name] = reply
            return reply
        head, blobs, output = reply
        if head.get("seq") != seq:
            self.sandbox._kill(child)
            self._failure = CallOutcome("bad_return", message=f"an answer arrived out of sequence (in {name})")
            return CallOutcome("bad_return", message="the answer could not be read (it arrived out of sequence)",
                               output=output)
        return self._outcome(head, blobs, output, kind, child, name)

    def _outcome(self, head: dict, blobs: list, output: str, kind: Any, child: _Child, name: str) -> CallOutcome:
        status = head.get("status")
        message = _clean(head.get("message"))
        if status == "ok":
            try:
                value = protocol.decode(head.get("value"), blobs)
                value, dtype = _validate(value, head.get("dtype"), kind)
            except (_Invalid, ProtocolError) as err:
                return CallOutcome("bad_return", message=f"the answer could not be read ({err})", output=output)
            except Exception as err:  # noqa: BLE001
                return CallOutcome("bad_return", message=f"the answer could not be read ({type(err).__name__})",
                                   output=output)
            return CallOutcome("ok", value=value, dtype=dtype, output=output)
        if status == "memory":
            self.sandbox._kill(child)
            self._failure = CallOutcome("crashed", message=f"{message} (in {name})")
            return CallOutcome("crashed", message=message or "exceeded the memory limit", output=output)
        if status in ("missing", "raised", "bad_return"):
            return CallOutcome(status, message=message, output=output)
        if status == "crashed":
            self.sandbox._kill(child)
            return CallOutcome("crashed", message=message, output=output)
        self.sandbox._kill(child)
        return CallOutcome("bad_return", message="the answer could not be read (unknown status)", output=output)

    def _ready_child(self) -> CallOutcome | None:
        """None when a live child is there (restarting one if allowed), else the outcome to answer."""
        if self._child is not None and self._child.alive:
            return None
        failure = self._failure or CallOutcome("crashed", message="the process died")
        if self.restarts >= self.limits.max_restarts:
            return CallOutcome(failure.status, message=f"not run: {failure.message}, and the process was "
                                                       f"restarted {self.restarts} times already")
        self.restarts += 1
        if self._child is not None:
            self.sandbox._discard(self._child)
            self._child = None
        child, outcome = self.sandbox._spawn(self.stem, self.source, self.filename, self.provided,
                                             self.limits.import_timeout)
        if outcome.status != "ok":
            if child is not None:
                self.sandbox._discard(child)
            self.restarts = self.limits.max_restarts
            self._failure = CallOutcome("crashed", message=f"the process could not be restarted: {outcome.message}")
            return CallOutcome("crashed", message=self._failure.message)
        self._child = child
        return None

    def close(self) -> None:
        if self._closed:
            return
        self._closed = True
        if self._child is not None:
            self.sandbox._discard(self._child)
            self._child = None

    def __enter__(self) -> "Session":
        return self

    def __exit__(self, *exc) -> None:
        self.close()


def _as_tensor(value: Any) -> Any:
    if isinstance(value, np.ndarray):
        return TensorArg(value)
    return value
