"""The warm sandbox server ("zygote") and the code of the children it forks.

Run by the grader as `python -I zygote.py <control fd>`: a clean interpreter (no kit, no
PYTHONPATH, no cwd on sys.path) that imports numpy, torch and matplotlib once and then, for
each session, forks a child that runs one stem of one submission. The zygote never runs
student code, never runs a torch op (OpenMP pools and fork do not mix), and is
single-threaded: one select loop over the control socket and a SIGCHLD wake-up pipe.

Control socket (SOCK_SEQPACKET, one JSON message per packet):
    grader -> zygote  {"op": "fork", "id": n} + two fds (session socket, capture file)
                      {"op": "exit"}
    zygote -> grader  {"event": "ready", "pid": p}
                      {"event": "forked", "id": n, "pid": p}  /  {"event": "fork_failed", ...}
                      {"event": "exit", "pid": p, "code": c, "signal": s}

A child talks to the grader only over its own session socket, in the frames of
protocol.py: first an "init" frame (the source and the limits), answered by the outcome of
the import, then one request/answer pair per call until the grader closes the socket.

Nothing here may import the kit: protocol.py and convert.py are loaded from their file
paths under private names.
"""

import gc
import importlib.abc
import importlib.machinery
import importlib.util
import io
import json
import os
import resource
import select
import signal
import socket
import sys
import types

HERE = os.path.dirname(os.path.abspath(__file__))
KIT_ROOT = os.path.dirname(os.path.dirname(HERE))
PRIVATE_PREFIX = "_attnkit_sandbox"
PROVIDED_PACKAGE = "_attnkit_provided"
KIT_PACKAGES = frozenset({"autograder", "reference", "solutions", "exercises", "attnkit"})
KIT_MESSAGE = "the kit's own code is not available to submissions"
# Hidden one by one when the kit's root folder cannot be hidden as a whole (a venv inside it...).
KIT_FOLDERS = ("autograder", "reference", "solutions", "exercises", "tests", "docs", ".git")

EXIT_MEMORY = 113      # the child's own machinery ran out of memory
EXIT_INTERNAL = 114    # the child could not be set up

for _var in ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS", "NUMEXPR_NUM_THREADS",
             "VECLIB_MAXIMUM_THREADS"):
    os.environ[_var] = "1"
os.environ["MPLBACKEND"] = "Agg"


def _load_private(name: str, filename: str):
    spec = importlib.util.spec_from_file_location(f"{PRIVATE_PREFIX}_{name}", os.path.join(HERE, filename))
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module
    spec.loader.exec_module(module)
    return module


def _owner(obj) -> str:
    parts = [getattr(obj, "__module__", None), getattr(type(obj), "__module__", None),
             getattr(obj, "__qualname__", None)]
    return " ".join(str(p) for p in parts if p)


def _inside(path: str, root: str) -> bool:
    try:
        path, root = os.path.realpath(path), os.path.realpath(root)
    except (OSError, ValueError):
        return False
    return path == root or path.startswith(root.rstrip(os.sep) + os.sep)


def _strip_kit_from_imports() -> None:
    """Removes editable-install finders and path entries of the kit (and anything editable)."""
    sys.meta_path[:] = [f for f in sys.meta_path if "__editable__" not in _owner(f)]
    sys.path_hooks[:] = [h for h in sys.path_hooks if "__editable__" not in _owner(h)]
    for name in list(sys.modules):
        if name.startswith("__editable__"):
            del sys.modules[name]
    sys.path_importer_cache.clear()


def _child_sys_path() -> list:
    """Stdlib and site-packages entries of this interpreter: entries under its prefixes, minus
    the kit's folder (unless the kit lives in site-packages, where the import guard blocks it)."""
    prefixes = {os.path.realpath(p) for p in (sys.prefix, sys.base_prefix, sys.exec_prefix,
                                              sys.base_exec_prefix)}
    keep = []
    for entry in sys.path:
        if not entry or "__editable__" in entry:
            continue
        if not any(_inside(entry, p) for p in prefixes):
            continue
        if _inside(entry, KIT_ROOT) and not any(_inside(KIT_ROOT, p) for p in prefixes):
            continue
        keep.append(entry)
    return keep


# ====================================================================== the zygote

class Zygote:
    def __init__(self, ctrl_fd: int):
        self.ctrl = socket.socket(fileno=ctrl_fd)
        self.ctrl.setblocking(True)
        self.children: dict = {}   # pid -> request id

    def serve(self) -> None:
        wake_r, wake_w = os.pipe()
        os.set_blocking(wake_r, False)
        os.set_blocking(wake_w, False)
        self.wake = (wake_r, wake_w)
        signal.signal(signal.SIGCHLD, lambda *_: None)
        signal.set_wakeup_fd(wake_w, warn_on_full_buffer=False)
        self.send({"event": "ready", "pid": os.getpid()})
        while True:
            readable, _, _ = select.select([self.ctrl, wake_r], [], [])
            if wake_r in readable:
                try:
                    while os.read(wake_r, 4096):
                        pass
                except (BlockingIOError, InterruptedError):
                    pass
            self.reap()
            if self.ctrl in readable:
                try:
                    data, fds, _flags, _addr = socket.recv_fds(self.ctrl, 65536, 8)
                except OSError:
                    data, fds = b"", []
                if not data:
                    self.shutdown()
                try:
                    msg = json.loads(data.decode("utf-8"))
                except ValueError:
                    msg = {}
                if msg.get("op") == "fork":
                    self.fork(msg, fds)
                else:
                    for fd in fds:
                        os.close(fd)
                    if msg.get("op") == "exit":
                        self.shutdown()
            self.reap()

    def send(self, msg: dict) -> None:
        try:
            self.ctrl.sendall(json.dumps(msg).encode("utf-8"))
        except OSError:
            self.shutdown()

    def reap(self) -> None:
        while True:
            try:
                pid, status = os.waitpid(-1, os.WNOHANG)
            except ChildProcessError:
                return
            if pid == 0:
                return
            if pid in self.children:
                del self.children[pid]
                code = os.WEXITSTATUS(status) if os.WIFEXITED(status) else None
                sig = os.WTERMSIG(status) if os.WIFSIGNALED(status) else None
                self.send({"event": "exit", "pid": pid, "code": code, "signal": sig})
            # anything else is an orphan of a child, reparented to us (we are a subreaper)

    def fork(self, msg: dict, fds: list) -> None:
        request = msg.get("id")
        if len(fds) != 2:
            for fd in fds:
                os.close(fd)
            self.send({"event": "fork_failed", "id": request, "message": "expected two file descriptors"})
            return
        sess_fd, cap_fd = fds
        try:
            pid = os.fork()
        except OSError as err:
            os.close(sess_fd)
            os.close(cap_fd)
            self.send({"event": "fork_failed", "id": request, "message": str(err)})
            return
        if pid == 0:
            code = EXIT_INTERNAL
            try:
                Child(self, sess_fd, cap_fd).run()
            except MemoryError:
                code = EXIT_MEMORY
            except BaseException:  # noqa: BLE001 - a broken setup; say so with the exit code
                pass
            os._exit(code)
        os.close(sess_fd)
        os.close(cap_fd)
        self.children[pid] = request
        self.send({"event": "forked", "id": request, "pid": pid})

    def shutdown(self) -> None:
        """The grader is gone (or asked us to go): kill every child, its session, and every
        orphan we adopted as a subreaper, then exit."""
        me = os.getpid()
        for pid in list(self.children):
            for kill in (os.killpg, os.kill):
                try:
                    kill(pid, signal.SIGKILL)
                except OSError:
                    pass
        try:
            names = [n for n in os.listdir("/proc") if n.isdigit()]
        except OSError:
            names = []
        for name in names:
            try:
                with open(f"/proc/{name}/stat", "rb") as f:
                    fields = f.read().rsplit(b")", 1)[1].split()
                ppid, sid = int(fields[1]), int(fields[3])
            except (OSError, IndexError, ValueError):
                continue
            if ppid == me or sid in self.children:
                try:
                    os.kill(int(name), signal.SIGKILL)
                except OSError:
                    pass
        signal.set_wakeup_fd(-1)
        signal.signal(signal.SIGCHLD, signal.SIG_DFL)
        signal.signal(signal.SIGALRM, lambda *_: os._exit(0))
        signal.setitimer(signal.ITIMER_REAL, 1.0)     # reap what we killed, but never hang here
        while self.children:
            try:
                pid, _ = os.waitpid(-1, 0)
            except ChildProcessError:
                break
            self.children.pop(pid, None)
        if TEMP_ROOT and os.path.basename(TEMP_ROOT).startswith("attnkit-sandbox-"):
            import shutil

            shutil.rmtree(TEMP_ROOT, ignore_errors=True)
        os._exit(0)


def _set_subreaper() -> None:
    try:
        import ctypes

        libc = ctypes.CDLL(None, use_errno=True)
        libc.prctl(36, 1, 0, 0, 0)   # PR_SET_CHILD_SUBREAPER: orphans of children come back to us
    except Exception:  # noqa: BLE001 - not on Linux: cleanup by process group only
        pass


# ====================================================================== a child

class _CaptureWriter(io.RawIOBase):
    """fd 1/2 as seen from Python: never raises, and wraps around (truncates) at the cap so the
    file keeps the most recent output instead of the first."""

    def __init__(self, fd: int, cap: int):
        self._fd, self._cap = fd, max(1024, cap)

    def writable(self) -> bool:
        return True

    def write(self, data) -> int:
        n = len(data)
        try:
            chunk = bytes(data)[-(self._cap // 2):] if n > self._cap // 2 else data
            if os.lseek(self._fd, 0, os.SEEK_CUR) + len(chunk) > self._cap:
                os.ftruncate(self._fd, 0)
                os.lseek(self._fd, 0, os.SEEK_SET)
            os.write(self._fd, chunk)
        except OSError:
            pass
        return n

    def fileno(self) -> int:
        return self._fd


class _SourceLoader(importlib.abc.Loader):
    """A kit-provided module (correct code of another contract stem), from its source text."""

    def __init__(self, stem: str, source: str):
        self.stem, self.source = stem, source

    def create_module(self, spec):
        return None

    def exec_module(self, module) -> None:
        code = compile(self.source, f"<kit-provided {self.stem}.py>", "exec", dont_inherit=True)
        exec(code, module.__dict__)


class _AliasLoader(importlib.abc.Loader):
    """`import attention` -> the provided `_attnkit_provided.attention`, under both names."""

    def __init__(self, stem: str):
        self.stem = stem
        self._spec = None

    def create_module(self, spec):
        module = importlib.import_module(f"{PROVIDED_PACKAGE}.{self.stem}")
        self._spec = module.__spec__
        return module

    def exec_module(self, module) -> None:
        module.__spec__ = self._spec


class _ImportGuard(importlib.abc.MetaPathFinder):
    def __init__(self, stem: str, filename: str, provided: dict, stems, blocked):
        self.stem, self.filename, self.provided = stem, filename, provided
        self.stems = frozenset(stems)
        self.blocked = KIT_PACKAGES | frozenset(blocked)

    def find_spec(self, fullname, path=None, target=None):
        top = fullname.partition(".")[0]
        if top in self.blocked or top.startswith("__editable__") or top.startswith(PRIVATE_PREFIX):
            raise ImportError(KIT_MESSAGE, name=fullname)
        if top == PROVIDED_PACKAGE:
            if fullname == PROVIDED_PACKAGE:
                return importlib.machinery.ModuleSpec(fullname, None, is_package=True)
            rest = fullname[len(PROVIDED_PACKAGE) + 1:]
            if rest in self.provided:
                return importlib.util.spec_from_loader(fullname, _SourceLoader(rest, self.provided[rest]))
            return None
        if top in self.stems and top != self.stem:
            if top not in self.provided:
                raise ImportError(f"{self.filename} cannot import {top} here; each exercise is graded on its own",
                                  name=fullname)
            if fullname == top:
                return importlib.util.spec_from_loader(fullname, _AliasLoader(top))
            raise ImportError(f"{fullname} is not available here", name=fullname)
        return None


def _vm_size() -> int:
    with open("/proc/self/status") as f:
        for line in f:
            if line.startswith("VmSize:"):
                return int(line.split()[1]) * 1024
    return 0


def _world_readable_interpreter() -> bool:
    """Whether a user without privileges can read this interpreter's files."""
    for root in {sys.prefix, sys.base_prefix, sys.exec_prefix}:
        path = os.path.realpath(root)
        while True:
            try:
                if not os.stat(path).st_mode & 0o001:
                    return False
            except OSError:
                return False
            parent = os.path.dirname(path)
            if parent == path:
                break
            path = parent
    return True


def _drop_privileges(uid: int, gid: int) -> bool:
    """Root only: become an unprivileged uid (so RLIMIT_NPROC applies, and the grader, the
    zygote and other children cannot be signalled or traced). Keeps CAP_DAC_READ_SEARCH when the
    interpreter's own files would otherwise be unreadable. No new privileges through exec."""
    if os.geteuid() != 0:
        return False
    import ctypes

    libc = ctypes.CDLL(None, use_errno=True)
    keep_read = not _world_readable_interpreter()
    if keep_read:
        libc.prctl(8, 1, 0, 0, 0)                 # PR_SET_KEEPCAPS
    os.setgroups([])
    os.setresgid(gid, gid, gid)
    os.setresuid(uid, uid, uid)
    if keep_read:
        header = (ctypes.c_uint32 * 2)(0x20080522, 0)             # _LINUX_CAPABILITY_VERSION_3
        read_search = 1 << 2                                       # CAP_DAC_READ_SEARCH
        data = (ctypes.c_uint32 * 6)(read_search, read_search, 0, 0, 0, 0)
        libc.capset(header, data)
    libc.prctl(38, 1, 0, 0, 0)                    # PR_SET_NO_NEW_PRIVS
    return True


def _hide_paths(paths, tmpdir: str) -> list:
    """Root only, best effort: a private mount namespace in which each folder of `paths` is an
    empty read-only tmpfs, so the kit's files (the reference!) cannot be read by path either.
    When a folder holds something the child needs (the interpreter, its temp folder), the kit's
    own sub-folders in it are hidden instead. Returns what was hidden."""
    if os.geteuid() != 0 or not paths:
        return []
    import ctypes

    libc = ctypes.CDLL(None, use_errno=True)
    libc.mount.argtypes = [ctypes.c_char_p, ctypes.c_char_p, ctypes.c_char_p, ctypes.c_ulong, ctypes.c_char_p]
    if libc.unshare(0x00020000) != 0:                                   # CLONE_NEWNS
        return []
    if libc.mount(b"none", b"/", None, 0x4000 | (1 << 18), None) != 0:  # MS_REC | MS_PRIVATE
        return []
    needed = CHILD_PATH + [sys.prefix, sys.base_prefix, sys.exec_prefix, sys.executable, tmpdir]
    hidden = _private_temp(libc, tmpdir, needed)          # first: the kit may lie in the temp folder
    hidden += _private_home(libc, needed + [tmpdir])
    targets = []
    for path in paths:
        path = os.path.realpath(path)
        if any(_inside(n, path) for n in needed):
            targets += [os.path.join(path, n) for n in KIT_FOLDERS]
        else:
            targets.append(path)
    for target in targets:
        if not os.path.isdir(target) or any(_inside(n, target) for n in needed):
            continue
        flags = 1 | 2 | 4 | 8                                            # RDONLY NOSUID NODEV NOEXEC
        if libc.mount(b"tmpfs", target.encode(), b"tmpfs", flags, b"size=4k,mode=0555") == 0:
            hidden.append(target)
    return hidden


def _private_temp(libc, tmpdir: str, needed: list) -> list:
    """The machine's temp folder holds other children's folders (other students' code being
    graded), test folders and whatever else runs here: give the child an empty one, with only
    what it needs bound back at the same paths: its own folder, and the interpreter's files
    when they live there (a virtualenv made in /tmp)."""
    tmpdir = os.path.realpath(tmpdir)
    temp = os.path.dirname(os.path.dirname(tmpdir))          # <temp>/attnkit-sandbox-*/child-*
    return _emptied(libc, temp, needed + [tmpdir], "size=1m,mode=1777")


def _private_home(libc, needed: list) -> list:
    """The grader's home folder (an instructor's other courses, keys, notes): empty, but for
    what the child needs from it (an interpreter installed there, as pyenv does). This matters
    most where the child keeps CAP_DAC_READ_SEARCH to read such an interpreter."""
    home = os.path.realpath(os.path.expanduser("~"))
    return _emptied(libc, home, needed, "size=1m,mode=0755")


def _emptied(libc, folder: str, needed: list, options: str) -> list:
    """Mount an empty tmpfs over `folder` and bind back, at the same paths, the outermost of
    the `needed` paths that lie inside it. Nothing is done when `folder` is `/` or lies inside
    something needed."""
    if folder in ("/", "") or not os.path.isdir(folder):
        return []
    real = [os.path.realpath(n) for n in needed if n and os.path.exists(n)]
    if any(_inside(folder, n) for n in real):
        return []
    inside = sorted({n for n in real if _inside(n, folder) and n != folder})
    keep = [n for n in inside if not any(m != n and _inside(n, m) for m in inside)]   # outermost only
    fds = {n: os.open(n, os.O_PATH | os.O_CLOEXEC) for n in keep}
    try:
        if libc.mount(b"tmpfs", folder.encode(), b"tmpfs", 2 | 4, options.encode()) != 0:   # NOSUID NODEV
            return []
        for path, fd in fds.items():
            if os.path.isdir(f"/proc/self/fd/{fd}"):
                os.makedirs(path, mode=0o755, exist_ok=True)
            else:
                os.makedirs(os.path.dirname(path), mode=0o755, exist_ok=True)
                open(path, "a").close()
            if libc.mount(f"/proc/self/fd/{fd}".encode(), path.encode(), None, 4096 | 0x4000, None) != 0:
                os._exit(EXIT_INTERNAL)    # MS_BIND | MS_REC failed: do not run half set up
    finally:
        for fd in fds.values():
            os.close(fd)
    return [folder]


def _parent_death_signal(zygote_pid: int) -> None:
    try:
        import ctypes

        ctypes.CDLL(None, use_errno=True).prctl(1, signal.SIGKILL, 0, 0, 0)   # PR_SET_PDEATHSIG
    except Exception:  # noqa: BLE001
        pass
    if os.getppid() != zygote_pid:
        os._exit(EXIT_INTERNAL)


class Child:
    def __init__(self, zygote: Zygote, sess_fd: int, cap_fd: int):
        self.zygote_pid = os.getppid()
        self.pid = os.getpid()
        # Signals: the zygote's SIGCHLD wake-up is not ours; writes past RLIMIT_FSIZE fail, not kill.
        signal.set_wakeup_fd(-1)
        signal.signal(signal.SIGCHLD, signal.SIG_DFL)
        signal.signal(signal.SIGXFSZ, signal.SIG_IGN)
        signal.signal(signal.SIGINT, signal.default_int_handler)
        signal.signal(signal.SIGTERM, signal.SIG_DFL)
        os.setsid()
        # File descriptors: 0 = /dev/null, 1 and 2 = the capture file, 3 = the session socket.
        zygote.ctrl.detach()
        devnull = os.open(os.devnull, os.O_RDWR)
        os.dup2(devnull, 0)
        os.dup2(cap_fd, 1)
        os.dup2(cap_fd, 2)
        os.dup2(sess_fd, 3, inheritable=False)
        os.closerange(4, max(4, resource.getrlimit(resource.RLIMIT_NOFILE)[0]))
        self.sock = socket.socket(fileno=3)
        self.sock.setblocking(True)

    # -------------------------------------------------------------- setup

    def run(self) -> None:
        header, blobs = PROTOCOL.recv_frame(self.sock, max_bytes=1 << 31, max_header=1 << 31)
        if header.get("op") != "init":
            os._exit(EXIT_INTERNAL)
        init = {k: PROTOCOL.decode(v, blobs) for k, v in header.items()}
        self.stem = init["stem"]
        self.filename = init["filename"]
        self.path = init["path"]
        tmp = init["tmpdir"]
        limits = init["limits"]
        self.memory_mb = limits["memory_mb"]

        try:
            _hide_paths(init.get("hide") or [], tmp)
        except Exception:  # noqa: BLE001 - best effort
            pass
        os.chdir(tmp)
        os.environ["HOME"] = tmp
        os.environ["TMPDIR"] = tmp
        import tempfile

        tempfile.tempdir = tmp

        rl = resource
        rl.setrlimit(rl.RLIMIT_CORE, (0, 0))
        cpu = int(limits["cpu_seconds"])
        rl.setrlimit(rl.RLIMIT_CPU, (cpu, cpu + 1))
        out = int(limits["output_bytes"])
        rl.setrlimit(rl.RLIMIT_FSIZE, (out, out))
        space = _vm_size() + int(limits["memory_mb"]) * 1024 * 1024
        rl.setrlimit(rl.RLIMIT_AS, (space, space))
        if init.get("uid") is not None:
            try:
                _drop_privileges(int(init["uid"]), int(init["gid"]))
            except Exception:  # noqa: BLE001 - best effort: stay as we are
                pass
        try:
            procs = int(limits["max_processes"])
            rl.setrlimit(rl.RLIMIT_NPROC, (procs, procs))
        except (ValueError, OSError):
            pass
        _parent_death_signal(self.zygote_pid)

        # Imports: the temp folder, stdlib and site-packages; the guard in front of everything.
        sys.path[:] = [tmp] + CHILD_PATH
        sys.path_importer_cache.clear()
        provided = dict(init.get("provided") or {})
        self.guard = _ImportGuard(self.stem, self.filename, provided, init["stems"], init.get("blocked") or ())
        sys.meta_path.insert(0, self.guard)
        package = types.ModuleType(PROVIDED_PACKAGE)
        package.__path__ = []
        package.__package__ = PROVIDED_PACKAGE
        package.__spec__ = importlib.machinery.ModuleSpec(PROVIDED_PACKAGE, None, is_package=True)
        sys.modules[PROVIDED_PACKAGE] = package
        for name in list(sys.modules):
            if name.startswith(PRIVATE_PREFIX):
                del sys.modules[name]
        sys.modules["__main__"] = types.ModuleType("__main__")
        sys.argv = [self.path]
        sys.dont_write_bytecode = True

        # What the student prints goes to the capture file (a capped tail of it reaches messages).
        self.stdout = io.TextIOWrapper(io.BufferedWriter(_CaptureWriter(1, out), 8192), encoding="utf-8",
                                       errors="backslashreplace")
        self.stderr = io.TextIOWrapper(io.BufferedWriter(_CaptureWriter(2, out), 8192), encoding="utf-8",
                                       errors="backslashreplace", line_buffering=True)
        sys.stdout = sys.__stdout__ = self.stdout
        sys.stderr = sys.__stderr__ = self.stderr
        sys.stdin = sys.__stdin__ = open(0, closefd=False)

        reply = self.import_module(init["source"])
        self.reply(reply)
        if reply["status"] != "ok":
            os._exit(0)
        self.serve()

    def import_module(self, source: str) -> dict:
        self.module = types.ModuleType(self.stem)
        self.module.__file__ = self.path
        self.module.__spec__ = importlib.util.spec_from_file_location(self.stem, self.path)
        self.module.__loader__ = self.module.__spec__.loader
        sys.modules[self.stem] = self.module
        try:
            code = compile(source, self.path, "exec", dont_inherit=True)
        except SyntaxError as err:
            kind = type(err).__name__
            where = f" ({self.filename}, line {err.lineno})" if err.lineno else ""
            return {"status": "not_run", "message": f"{kind}: {err.msg}{where}"}
        except (ValueError, MemoryError) as err:
            return {"status": "not_run", "message": f"{self.filename} cannot be compiled: {_text(err)}"}
        try:
            exec(code, self.module.__dict__)
        except BaseException as err:  # noqa: BLE001 - SystemExit, KeyboardInterrupt... at import
            sys.modules.pop(self.stem, None)
            if _is_memory_error(err):
                return {"status": "not_run",
                        "message": f"importing {self.filename} exceeded the memory limit of {self.memory_mb} MB"
                                   f" ({self.describe(err)})"}
            return {"status": "not_run", "message": self.describe(err, at_import=True)}
        return {"status": "ok"}

    # -------------------------------------------------------------- calls

    def serve(self) -> None:
        while True:
            if os.getpid() != self.pid:
                os._exit(0)
            try:
                header, blobs = PROTOCOL.recv_frame(self.sock, max_bytes=1 << 31, max_header=1 << 31)
            except PROTOCOL.ProtocolError:
                os._exit(0)
            try:
                reply = self.handle(header, blobs)
            except MemoryError:
                reply = {"status": "memory", "message": f"exceeded the memory limit of {self.memory_mb} MB"}
            except Exception as err:  # noqa: BLE001 - a malformed request or a bug here: say so
                reply = {"status": "crashed", "message": f"internal error in the sandbox child ({_text(err)})"}
            reply["seq"] = header.get("seq")
            self.reply(reply)

    def reply(self, reply: dict) -> None:
        if os.getpid() != self.pid:
            os._exit(0)   # a process the student forked came back here: only the child answers
        for stream in (self.stdout, self.stderr):
            try:
                stream.flush()
            except BaseException:  # noqa: BLE001
                pass
        value = reply.pop("value", None)
        try:
            frame = PROTOCOL.message(reply, {"value": value})
        except MemoryError:
            frame = PROTOCOL.message({"status": "memory",
                                      "message": f"exceeded the memory limit of {self.memory_mb} MB"})
        except Exception as err:  # noqa: BLE001
            frame = PROTOCOL.message({"status": "bad_return", "message": f"the answer could not be sent ({_text(err)})"})
        try:
            self.sock.sendall(frame)
        except OSError:
            os._exit(0)

    def handle(self, header: dict, blobs: list) -> dict:
        op = header.get("op")
        kind = header.get("returns")
        if op == "attribute":
            name = header["name"]
            value = getattr(self.module, name, _MISSING)
            if value is _MISSING:
                return {"status": "missing", "message": f"{self.filename} defines no {name}"}
            return self.convert(value, kind)
        args = PROTOCOL.decode(header.get("args", []), blobs, _make_tensor)
        kwargs = PROTOCOL.decode(header.get("kwargs", {}), blobs, _make_tensor)
        if op == "call":
            name = header["function"]
            fn = getattr(self.module, name, _MISSING)
            if fn is _MISSING:
                return {"status": "missing", "message": f"{self.filename} defines no function {name}"}
            if not callable(fn):
                return {"status": "missing",
                        "message": f"{name} in {self.filename} is a {CONVERT.type_name(fn)}, not a function"}
            try:
                value = fn(*args, **kwargs)
            except BaseException as err:  # noqa: BLE001
                return self.raised(err)
            return self.convert(value, kind)
        if op == "module":
            return self.call_module(header, blobs, args, kwargs, kind)
        return {"status": "bad_return", "message": f"unknown request {op!r}"}

    def call_module(self, header: dict, blobs: list, args, kwargs, kind) -> dict:
        import torch

        name = header["class_name"]
        cls = getattr(self.module, name, _MISSING)
        if cls is _MISSING:
            return {"status": "missing", "message": f"{self.filename} defines no class {name}"}
        init_args = PROTOCOL.decode(header.get("init_args", []), blobs, _make_tensor)
        init_kwargs = PROTOCOL.decode(header.get("init_kwargs", {}), blobs, _make_tensor)
        state = PROTOCOL.decode(header.get("state", {}), blobs, _make_tensor)
        try:
            obj = cls(*init_args, **init_kwargs)
        except BaseException as err:  # noqa: BLE001
            return self.raised(err)
        if not isinstance(obj, torch.nn.Module):
            return {"status": "bad_return",
                    "message": f"returned {CONVERT.type_name(obj)} from {name}(...), expected a torch.nn.Module "
                               f"({name} must subclass torch.nn.Module)"}
        try:
            with torch.no_grad():
                for key, array in state.items():
                    target = _state_tensor(obj, key)
                    if target is None:
                        return {"status": "bad_return",
                                "message": f"returned a {name} without the parameter {key}, expected one "
                                           f"(it is needed to load the test weights)"}
                    if tuple(target.shape) != tuple(array.shape):
                        return {"status": "bad_return",
                                "message": f"returned a {name} whose {key} has shape {tuple(target.shape)}, "
                                           f"expected {tuple(array.shape)}"}
                    target.copy_(torch.from_numpy(array).to(target.dtype))
            torch.nn.Module.eval(obj)
            value = obj(*args, **kwargs)
        except BaseException as err:  # noqa: BLE001
            return self.raised(err)
        return self.convert(value, kind)

    def convert(self, value, kind) -> dict:
        try:
            plain, dtype = CONVERT.convert(value, kind)
        except CONVERT.BadReturn as err:
            return {"status": "bad_return", "message": err.message}
        except MemoryError:
            raise
        except BaseException as err:  # noqa: BLE001 - the student's object misbehaved while converted
            return {"status": "bad_return", "message": f"returned a value that could not be converted "
                                                       f"({CONVERT._exc_text(err)})"}
        return {"status": "ok", "value": plain, "dtype": dtype}

    def raised(self, err: BaseException) -> dict:
        if _is_memory_error(err):
            return {"status": "memory",
                    "message": f"exceeded the memory limit of {self.memory_mb} MB ({self.describe(err)})"}
        return {"status": "raised", "message": self.describe(err), "exception": CONVERT.type_name(err)}

    def describe(self, err: BaseException, at_import: bool = False) -> str:
        """"ZeroDivisionError: division by zero (attention.py, line 12, in softmax)"."""
        name = CONVERT.type_name(err)
        text = _text(err)
        if isinstance(err, SystemExit):
            what = "module" if at_import else "function"
            text = f"{text} (the {what} called sys.exit)" if text else f"(the {what} called sys.exit)"
        where = None
        tb = err.__traceback__
        while tb is not None:
            if tb.tb_frame.f_code.co_filename == self.path:
                where = (tb.tb_lineno, tb.tb_frame.f_code.co_name)
            tb = tb.tb_next
        if where is None and isinstance(err, SyntaxError) and err.filename == self.path and err.lineno:
            where = (err.lineno, "<module>")
        message = f"{name}: {text}" if text else name
        if where is not None:
            line, func = where
            at = f", in {func}" if func != "<module>" else ""
            message += f" ({self.filename}, line {line}{at})"
        return message


_MISSING = object()


def _text(err: BaseException) -> str:
    try:
        text = str(err)
    except BaseException:  # noqa: BLE001
        text = "<the exception could not be printed>"
    return text if len(text) <= 500 else text[:497] + "..."


def _is_memory_error(err: BaseException) -> bool:
    if isinstance(err, MemoryError):
        return True
    if type(err).__name__ in ("RuntimeError", "OutOfMemoryError"):
        text = _text(err).lower()
        return "can't allocate memory" in text or "not enough memory" in text or "out of memory" in text
    return False


def _make_tensor(array, dtype: str):
    import torch

    tensor = torch.from_numpy(array)
    target = getattr(torch, dtype, None)
    if isinstance(target, torch.dtype) and tensor.dtype != target:
        tensor = tensor.to(target)
    return tensor


def _state_tensor(module, key: str):
    import torch

    obj = module
    for part in key.split("."):
        try:
            obj = getattr(obj, part)
        except BaseException:  # noqa: BLE001
            return None
    return obj if isinstance(obj, torch.Tensor) else None


# ====================================================================== start-up

def main() -> None:
    global PROTOCOL, CONVERT, CHILD_PATH
    global TEMP_ROOT
    ctrl_fd = int(sys.argv[1])
    TEMP_ROOT = sys.argv[2] if len(sys.argv) > 2 else None
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    _strip_kit_from_imports()
    PROTOCOL = _load_private("protocol", "protocol.py")
    CONVERT = _load_private("convert", "convert.py")

    import numpy  # noqa: F401
    import torch

    torch.set_num_threads(1)
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.figure  # noqa: F401
    import matplotlib.pyplot  # noqa: F401
    import math  # noqa: F401
    import tempfile  # noqa: F401
    import traceback  # noqa: F401

    CHILD_PATH = _child_sys_path()
    _set_subreaper()
    gc.collect()
    gc.freeze()
    Zygote(ctrl_fd).serve()


PROTOCOL = CONVERT = None
CHILD_PATH: list = []
TEMP_ROOT: str | None = None   # the runner's folder of children's folders; removed when we exit

if __name__ == "__main__":
    main()
