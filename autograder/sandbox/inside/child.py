"""Child side: the worker -- one stem of one submission (see start.py for how it starts).

It reads the init frame, sets limits, drops every capability, executes the submission (one
source, or notebook cells in order, each under its own name) and answers requests until the
grader closes the socket. A provided module's functions send requests the other way.

Loaded inside the zygote from its file path (see zygote.py): standard library, numpy and,
lazily, torch only.
"""

from __future__ import annotations

import io
import os
import resource
import signal
import socket
import sys
import types

EXIT_INTERNAL = 114    # the child could not be set up (as start.py)
_MISSING = object()
_BUILTIN_ERRORS = {"ValueError": ValueError, "TypeError": TypeError, "IndexError": IndexError,
                   "KeyError": KeyError, "ZeroDivisionError": ZeroDivisionError, "RuntimeError": RuntimeError,
                   "ArithmeticError": ArithmeticError, "AttributeError": AttributeError}

M = types.SimpleNamespace()   # sibling modules and zygote facts, set by the zygote: see configure()


def configure(**kwargs) -> None:
    vars(M).update(kwargs)


# ====================================================================== the worker

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


def _vm_size() -> int:
    try:
        with open("/proc/self/status") as f:
            for line in f:
                if line.startswith("VmSize:"):
                    return int(line.split()[1]) * 1024
    except OSError:
        pass
    return 0


class Worker:
    def __init__(self, sock: socket.socket, layers: dict):
        self.sock, self.layers = sock, dict(layers)
        self.pid = os.getpid()
        self.files: dict[str, int | None] = {}    # compiled filenames of the student's code -> cell
        import threading

        self.main_thread = threading.get_ident()
        self.busy = True     # the grader is waiting for an answer (import, then each call): proxies may talk
        # Requests the grader sent ahead (several calls in one write), read while waiting for a
        # provided function's answer behind them: served in order, before the socket is read again.
        self.requests: list[tuple[dict, list]] = []

    # -------------------------------------------------------------- setup

    def run(self) -> None:
        P = M.PROTOCOL
        header, blobs = P.recv_frame(self.sock, max_bytes=1 << 31, max_header=1 << 31)
        if header.get("op") != "init":
            os._exit(EXIT_INTERNAL)
        init = {k: P.decode(v, blobs) for k, v in header.items()}
        self.stem, self.filename = init["stem"], init["filename"]
        limits = init["limits"]
        self.memory_mb = limits["memory_mb"]
        tmp = "/tmp" if self.layers.get("private_tmp") else init["tmpdir"]
        self.path = os.path.join(tmp, f"{self.stem}.py")
        cells = init.get("cells")
        source = "\n".join(c["source"] for c in cells) if cells is not None else init["source"]
        with open(self.path, "w", encoding="utf-8", errors="surrogateescape") as f:
            f.write(source)
        os.chdir(tmp)
        os.environ.update(HOME=tmp, TMPDIR=tmp, MPLCONFIGDIR=tmp)
        import tempfile

        tempfile.tempdir = tmp
        self._limits(limits, init)
        self._imports(init)
        self._streams(int(limits["output_bytes"]))
        reply = self.import_cells(cells) if cells is not None else self.import_source(source)
        reply["layers"] = self.layers
        self.reply(reply)
        if reply["status"] != "ok":
            os._exit(0)
        self.serve()

    def _limits(self, limits: dict, init: dict) -> None:
        rl = resource
        rl.setrlimit(rl.RLIMIT_CORE, (0, 0))
        cpu = int(limits["cpu_seconds"])
        rl.setrlimit(rl.RLIMIT_CPU, (cpu, cpu + 1))
        out = int(limits["output_bytes"])
        rl.setrlimit(rl.RLIMIT_FSIZE, (out, out))
        space = _vm_size() + int(limits["memory_mb"]) * 1024 * 1024
        rl.setrlimit(rl.RLIMIT_AS, (space, space))
        if M.JAILED:
            M.JAIL.drop_privileges(M.LAST_CAP)
            self.layers["capabilities"] = False
            self.layers["seccomp"] = M.JAIL.install_seccomp(M.SECCOMP)
        elif init.get("uid") is not None:
            uid = int(init["uid"])
            os.setgroups([])
            os.setresgid(uid, uid, uid)
            os.setresuid(uid, uid, uid)
            M.KERNEL.prctl(M.KERNEL.PR_SET_NO_NEW_PRIVS, 1)
        if init.get("nproc"):
            procs = int(limits["max_processes"])
            try:
                rl.setrlimit(rl.RLIMIT_NPROC, (procs, procs))
            except (ValueError, OSError):
                pass

    def _imports(self, init: dict) -> None:
        sys.path[:] = [os.path.dirname(self.path)] + list(M.CHILD_PATH)
        sys.path_importer_cache.clear()
        self.guard = M.GUARD.ImportGuard(self.stem, self.filename, init.get("provided") or {}, init["stems"],
                                         init.get("blocked") or (), self.call_provided)
        M.GUARD.install(self.guard)
        sys.modules["__main__"] = types.ModuleType("__main__")
        sys.argv = [self.path]
        sys.dont_write_bytecode = True

    def _streams(self, out: int) -> None:
        """What the student prints goes to the capture file (a capped tail of it reaches messages)."""
        self.stdout = io.TextIOWrapper(io.BufferedWriter(_CaptureWriter(1, out), 8192), encoding="utf-8",
                                       errors="backslashreplace")
        self.stderr = io.TextIOWrapper(io.BufferedWriter(_CaptureWriter(2, out), 8192), encoding="utf-8",
                                       errors="backslashreplace", line_buffering=True)
        sys.stdout = sys.__stdout__ = self.stdout
        sys.stderr = sys.__stderr__ = self.stderr
        sys.stdin = sys.__stdin__ = open(0, closefd=False)
        signal.signal(signal.SIGXFSZ, signal.SIG_IGN)   # writes past RLIMIT_FSIZE fail, not kill
        signal.signal(signal.SIGINT, signal.default_int_handler)

    # -------------------------------------------------------------- executing the submission

    def _module(self) -> None:
        import importlib.util

        self.module = types.ModuleType(self.stem)
        self.module.__file__ = self.path
        self.module.__spec__ = importlib.util.spec_from_file_location(self.stem, self.path)
        self.module.__loader__ = self.module.__spec__.loader
        sys.modules[self.stem] = self.module

    def _failed(self, err: BaseException, reason: str) -> dict:
        sys.modules.pop(self.stem, None)
        info = M.ERRORS.error_info(err, self.files, at_import=True)
        message = M.ERRORS.sentence(info, self.filename)
        if M.ERRORS.is_memory_error(err):
            reason = "memory"
            message = f"importing {self.filename} exceeded the memory limit of {self.memory_mb} MB ({message})"
        return {"status": "not_run", "reason": reason, "message": message, "error": info}

    def import_source(self, source: str) -> dict:
        self._module()
        self.files = {self.path: None}
        try:
            code = compile(source, self.path, "exec", dont_inherit=True)
        except (SyntaxError, ValueError, MemoryError) as err:
            return self._failed(err, "syntax")
        try:
            exec(code, self.module.__dict__)
        except BaseException as err:  # noqa: BLE001 - SystemExit, KeyboardInterrupt... at import
            return self._failed(err, "raised")
        return {"status": "ok"}

    def import_cells(self, cells: list) -> dict:
        """The notebook's cells run as Jupyter's Run All runs them, by the loop check.py's child
        runs too (the judge's notebook.run_cells): a cell that raises is skipped (and reported)."""
        self._module()
        try:
            skipped = M.NOTEBOOK.run_cells(cells, self.module.__dict__, self.path, self.files)
        except BaseException as err:  # noqa: BLE001 - only memory running out ends the run
            return self._failed(err, "memory")
        sys.modules[self.stem] = self.module
        return {"status": "ok", "skipped": skipped}

    # -------------------------------------------------------------- provided modules

    def call_provided(self, stem: str, name: str, args: tuple, kwargs: dict):
        """A provided function's call: sent to the grader, which answers with its own result."""
        P = M.PROTOCOL
        import threading

        if os.getpid() != self.pid or threading.get_ident() != self.main_thread or not self.busy:
            raise RuntimeError(f"the kit-provided {stem}.{name} can only be called while the grader runs your "
                               f"code, from its main thread")
        torch = sys.modules.get("torch")

        def plain(x, depth=0):
            if depth > 20:
                raise TypeError("arguments nested too deeply")
            if torch is not None and isinstance(x, torch.Tensor):
                return P.TensorArg(x.detach().cpu().numpy(), str(x.dtype).rpartition(".")[2])
            if isinstance(x, (list, tuple)):
                return type(x)(plain(v, depth + 1) for v in x) if type(x) in (list, tuple) else list(x)
            return x

        try:
            payload = {"args": [plain(a) for a in args], "kwargs": {str(k): plain(v) for k, v in kwargs.items()}}
            frame = P.message({"op": "provided", "stem": stem, "name": name}, payload)
        except TypeError as err:
            raise TypeError(f"{stem}.{name} (kit-provided) takes arrays, tensors and numbers: {err}") from None
        self.sock.sendall(frame)
        while True:
            header, blobs = P.recv_frame(self.sock, max_bytes=1 << 31, max_header=1 << 31)
            if "op" not in header:       # the answer (a request has an op)
                break
            self.requests.append((header, blobs))
        if header.get("status") == "ok":
            return P.decode(header.get("value"), blobs, _make_tensor)
        kind = _BUILTIN_ERRORS.get(header.get("type"), RuntimeError)
        raise kind(str(header.get("message", "")))

    # -------------------------------------------------------------- calls

    def serve(self) -> None:
        P = M.PROTOCOL
        while True:
            if os.getpid() != self.pid:
                os._exit(0)
            self.busy = False
            try:
                header, blobs = self.requests.pop(0) if self.requests else \
                    P.recv_frame(self.sock, max_bytes=1 << 31, max_header=1 << 31)
            except P.ProtocolError:
                os._exit(0)
            self.busy = True
            try:
                reply = self.handle(header, blobs)
            except MemoryError:
                reply = {"status": "memory", "message": f"exceeded the memory limit of {self.memory_mb} MB"}
            except Exception as err:  # noqa: BLE001 - a malformed request or a bug here: say so
                reply = {"status": "crashed", "message": f"internal error in the sandbox child "
                                                         f"({M.ERRORS.text_of(err)})"}
            reply["seq"] = header.get("seq")
            self.reply(reply)

    def reply(self, reply: dict) -> None:
        P = M.PROTOCOL
        if os.getpid() != self.pid:
            os._exit(0)   # a process the student forked came back here: only the worker answers
        for stream in (getattr(self, "stdout", None), getattr(self, "stderr", None)):
            try:
                stream.flush()
            except BaseException:  # noqa: BLE001
                pass
        value = reply.pop("value", None)
        try:
            frame = P.message(reply, {"value": value})
        except MemoryError:
            frame = P.message({"status": "memory", "message": f"exceeded the memory limit of {self.memory_mb} MB"})
        except Exception as err:  # noqa: BLE001
            frame = P.message({"status": "bad_return",
                               "message": f"gave an answer that could not be sent ({M.ERRORS.text_of(err)})"})
        try:
            self.sock.sendall(frame)
        except OSError:
            os._exit(0)

    def handle(self, header: dict, blobs: list) -> dict:
        P = M.PROTOCOL
        op = header.get("op")
        kind = header.get("returns")
        if op == "module":     # before its arguments are decoded: a missing class must not cost a torch import
            return self.call_module(header, blobs, kind)
        if op == "attribute":
            name = header["name"]
            value = getattr(self.module, name, _MISSING)
            if value is _MISSING:
                return {"status": "missing", "message": f"{self.filename} defines no {name}"}
            return self.convert(value, kind)
        args = P.decode(header.get("args", []), blobs, _make_tensor)
        kwargs = P.decode(header.get("kwargs", {}), blobs, _make_tensor)
        if op == "call":
            fn, missing = self.function(header["function"])
            if missing is not None:
                return missing
            # one array passed several times is one array here too; read-only when asked (judge/arguments.py)
            args, kwargs = M.ARGUMENTS.handed(args, kwargs, header.get("same", ()), bool(header.get("read_only")))
            try:
                value = fn(*args, **kwargs)
            except BaseException as err:  # noqa: BLE001
                return self.raised(err)
            if header.get("echo"):     # the answer, then the array arguments as the call left them
                return self.echoed(value, M.ARGUMENTS.after(args), kind)
            return self.convert(value, kind)
        if op == "calls":
            return self.call_each(header["function"], P.decode(header.get("calls", []), blobs, _make_tensor), kind)
        return {"status": "bad_return", "message": f"was asked an unknown request {op!r}"}

    def call_each(self, name: str, calls: list, kind) -> dict:
        """One function called anew with each of `calls` ({"args", "kwargs"}) in turn, up to the
        first call that does not answer a value of the kind: one answer per call made, their
        values together (one request for a check's many small runs: each costs a round trip)."""
        fn, missing = self.function(name)
        if missing is not None:
            return {"status": "calls", "answers": [missing], "value": [None]}
        answers, values = [], []
        for call in calls:
            try:
                value = fn(*call["args"], **call["kwargs"])
            except BaseException as err:  # noqa: BLE001
                answers.append(self.raised(err))
                values.append(None)
                break
            answer = self.convert(value, kind)
            values.append(answer.pop("value", None))
            answers.append(answer)
            if answer["status"] != "ok":
                break
        return {"status": "calls", "answers": answers, "value": values}

    def function(self, name: str):
        """(the module's function `name`, None), or (None, the answer that says it has none)."""
        fn = getattr(self.module, name, _MISSING)
        if fn is _MISSING:
            return None, {"status": "missing", "message": f"{self.filename} defines no function {name}"}
        if not callable(fn):
            return None, {"status": "missing",
                          "message": f"{name} in {self.filename} is a {M.CONVERT.type_name(fn)}, not a function"}
        return fn, None

    def call_module(self, header: dict, blobs: list, kind) -> dict:
        P = M.PROTOCOL
        name = header["class_name"]
        cls = getattr(self.module, name, _MISSING)
        if cls is _MISSING:     # said before torch is imported: a file without the class may not use torch
            return {"status": "missing", "message": f"{self.filename} defines no class {name}"}
        import torch  # noqa: F401 - here: a torch that cannot load is not the student's call's error

        args = P.decode(header.get("args", []), blobs, _make_tensor)
        kwargs = P.decode(header.get("kwargs", {}), blobs, _make_tensor)
        init_args = P.decode(header.get("init_args", []), blobs, _make_tensor)
        init_kwargs = P.decode(header.get("init_kwargs", {}), blobs, _make_tensor)
        state = P.decode(header.get("state", {}), blobs, _make_tensor)
        how = header.get("how") or {}      # the tensors handed as the judge's arguments.py says
        try:
            value = M.MODULE.forward(cls, name, init_args, init_kwargs, state, args, kwargs, how)
        except M.MODULE.CannotLoad as err:
            return {"status": "bad_return", "message": err.message}
        except BaseException as err:  # noqa: BLE001
            return self.raised(err)
        if how.get("echo"):     # the answer, then the tensors as forward left them
            return self.echoed(value[0], value[1], kind)
        return self.convert(value, kind)

    def convert(self, value, kind) -> dict:
        return M.CONVERT.reply(value, kind)

    def echoed(self, value, left: tuple, kind) -> dict:
        """The answer (kind[1]) and the arguments as left (kind[2]), each converted on its own: a
        wrong answer is said as one answer, not as an item of the pair."""
        answer = self.convert(value, kind[1])
        if answer.get("status") != "ok":
            return answer
        arrays = self.convert(left, kind[2])
        if arrays.get("status") != "ok":
            return arrays
        return {"status": "ok", "value": (answer["value"], arrays["value"]),
                "dtype": [answer["dtype"], arrays["dtype"]]}

    def raised(self, err: BaseException) -> dict:
        info = M.ERRORS.error_info(err, self.files)
        message = M.ERRORS.sentence(info, self.filename)
        if M.ERRORS.is_memory_error(err):
            return {"status": "memory", "message": f"exceeded the memory limit of {self.memory_mb} MB ({message})"}
        return {"status": "raised", "message": message, "exception": info["type"], "error": info}


def _make_tensor(array, dtype: str):
    import torch

    tensor = torch.from_numpy(array)
    target = getattr(torch, dtype, None)
    if isinstance(target, torch.dtype) and tensor.dtype != target:
        tensor = tensor.to(target)
    return tensor
