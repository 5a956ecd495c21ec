"""The warm sandbox server ("zygote"): imports what children need once, enters the jail
(jail.py), then forks one child per session (child.py). It never runs student code, never
runs a torch op (OpenMP pools and fork do not mix), and is single-threaded: one select loop
over the control socket and a SIGCHLD wake-up pipe.

Run by the grader as `python -I zygote.py <control fd> <config JSON>`: a clean interpreter (no
kit, no PYTHONPATH, no cwd on sys.path). The config says what to import besides numpy
(torch, matplotlib: each costs start-up time, so only the zygotes of stems that need them do).
The process that imported them is the template (template.py): it forks a zygote for each
Sandbox that asks, with that Sandbox's settings (the private uid to become as root, the jail's);
the fork enters the jail and serves as below.

Control socket (SOCK_SEQPACKET, one JSON message per packet):
    grader -> zygote  {"op": "fork", "id": n} + fds: session socket, capture file, and the
                          child's cgroup.procs files the grader opened (none without cgroups)
                      {"op": "go", "pid": p}      (the grader placed p itself: it may start)
                      {"op": "exit"}
    zygote -> grader  {"event": "ready", "pid": p, "layers": {...}}
                      {"event": "forked", "id": n, "pid": p, "placed": true | false | null}
                      {"event": "fork_failed", ...}
                      {"event": "exit", "pid": p, "code": c, "signal": s}

A new child is placed in its cgroup before it does anything (its gate: start.py).

Nothing here may import the kit: its sibling modules are loaded from their file paths under
private names, and removed from sys.modules in each child before student code runs.
"""

import errno
import importlib.util
import json
import os
import select
import signal
import socket
import sys
from collections.abc import Callable
from typing import NoReturn

HERE = os.path.dirname(os.path.abspath(__file__))
KIT_ROOT = os.path.dirname(os.path.dirname(os.path.dirname(HERE)))
PRIVATE_PREFIX = "_attnkit_sandbox"

# One BLAS and OpenMP thread: the grader's environment for it says so (judge/threads.py; the
# jail's unshare(CLONE_NEWUSER) needs a single-threaded process).
os.environ["MPLBACKEND"] = "Agg"


def _load_private(name: str, folder: str = HERE):
    spec = importlib.util.spec_from_file_location(f"{PRIVATE_PREFIX}_{name}", os.path.join(folder, f"{name}.py"))
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module
    spec.loader.exec_module(module)
    return module


def _load_judge(*names: str) -> list:
    """Modules of the judge (autograder/judge/: kit-free, the grader's and check.py's), loaded from
    its folder as a package of a private name, so that their imports of one another work and
    nothing of the kit becomes importable. Loaded before the jail hides the folder."""
    folder = os.path.join(os.path.dirname(os.path.dirname(HERE)), "judge")
    name = f"{PRIVATE_PREFIX}_judge"
    if name not in sys.modules:
        spec = importlib.util.spec_from_file_location(name, os.path.join(folder, "__init__.py"),
                                                      submodule_search_locations=[folder])
        package = importlib.util.module_from_spec(spec)
        sys.modules[name] = package
        spec.loader.exec_module(package)
    return [importlib.import_module(f"{name}.{module}") for module in names]


# ====================================================================== the zygote

class Zygote:
    def __init__(self, ctrl_fd: int):
        self.ctrl = socket.socket(fileno=ctrl_fd)
        self.ctrl.setblocking(True)
        self.children: dict = {}   # pid -> request id
        self.pid = os.getpid()
        self.layers: dict = {}
        self.modules: dict = {}    # name -> [version, file] of what it imported for the children
        self.gates: dict[int, int] = {}  # pid -> its gate's write end, until the grader says "go"
        self.inits: set[int] = set()     # children that are the init of their namespaces

    def serve(self) -> None:
        wake_r, wake_w = self.wake = KERNEL.wake_on_child_exit()
        self.send({"event": "ready", "pid": os.getpid(), "layers": self.layers, "modules": self.modules})
        while True:
            readable, _, _ = select.select([self.ctrl, wake_r], [], [])
            if wake_r in readable:
                KERNEL.drain(wake_r)
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
                    if msg.get("op") == "go":
                        self.go(msg)
                    elif msg.get("op") == "exit":
                        self.shutdown()
            self.reap()

    def send(self, msg: dict) -> None:
        try:
            self.ctrl.sendall(json.dumps(msg).encode("utf-8"))
        except OSError:
            self.shutdown()

    def reap(self) -> None:
        for pid, status in KERNEL.reaped():
            if pid in self.children:
                del self.children[pid]
                gate = self.gates.pop(pid, None)
                if gate is not None:
                    os.close(gate)
                code, sig = CHILD.exit_status(status, pid in self.inits)
                self.inits.discard(pid)
                self.send({"event": "exit", "pid": pid, "code": code, "signal": sig})
            # anything else is an orphan of a child, reparented to us (we are a subreaper)

    def fork(self, msg: dict, fds: list) -> None:
        request = msg.get("id")
        if len(fds) < 2:
            for fd in fds:
                os.close(fd)
            self.send({"event": "fork_failed", "id": request, "message": "expected two file descriptors"})
            return
        sess_fd, cap_fd, procs = fds[0], fds[1], fds[2:]
        gate_r, gate_w = os.pipe()
        try:
            pid, layers = self._new_process()
        except OSError as err:
            for fd in (sess_fd, cap_fd, gate_r, gate_w, *procs):
                os.close(fd)
            self.send({"event": "fork_failed", "id": request, "message": str(err)})
            return
        if pid == 0:
            def start() -> None:
                os.close(gate_w)
                self.ctrl.detach()
                CHILD.start(sess_fd, cap_fd, self.pid, gate_r, layers)
            _run_child("start", start)
        for fd in (sess_fd, cap_fd, gate_r):
            os.close(fd)
        placed = CHILD.place(pid, procs) if procs else None
        self.children[pid] = request
        if layers.get("pid"):
            self.inits.add(pid)
        try:
            # its pid (the grader's name for it), and whether it may start now
            os.write(gate_w, f"{pid}\n{'go' if placed is not False else 'wait'}\n".encode())
        except OSError:
            pass                   # it died already: reaped and reported as any child
        if placed is False:
            self.gates[pid] = gate_w
        else:
            os.close(gate_w)
        self.send({"event": "forked", "id": request, "pid": pid, "placed": placed})

    def _new_process(self) -> tuple[int, dict]:
        """(pid, its layers): a child in PID, mount and IPC namespaces of its own, its init; where
        the kernel will not make them (or there is no jail), a plain fork, the worker itself.
        Raises OSError when no process could be made at all."""
        if not self.layers.get("jailed"):
            return os.fork(), {"pid": False, "why": "the zygote has no jail"}
        try:
            return KERNEL.fork_into(JAIL.child_namespaces()), {"pid": True}
        except OSError as err:
            if err.errno in (errno.EAGAIN, errno.ENOMEM):
                raise
            return os.fork(), {"pid": False, "why": str(err)}

    def go(self, msg: dict) -> None:
        """The grader has placed the child in its cgroup itself: its gate opens."""
        gate = self.gates.pop(msg.get("pid"), None)
        if gate is not None:
            try:
                os.write(gate, b"go\n")
            except OSError:
                pass
            os.close(gate)

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
        os._exit(0)


def _set_subreaper() -> None:
    try:
        KERNEL.prctl(KERNEL.PR_SET_CHILD_SUBREAPER, 1)   # orphans of children come back to us
    except Exception:  # noqa: BLE001 - not on Linux: cleanup by process group only
        pass


def _enter_jail(config: dict) -> dict:
    """The jail (jail.py) when asked for and possible; else the layers that hold and why not."""
    if not config.get("jail") or not KERNEL.available():
        why = "isolation was turned off" if not config.get("jail") else "not Linux"
        return {"jailed": False, "why": why, "not_dumpable": _not_dumpable()}
    try:
        layers = JAIL.enter_zygote_jail(config.get("uid"), KIT_ROOT)
    except JAIL.JailError as err:
        if err.step in ("user namespace", "mount namespace") and "disabled" not in err.reason:
            why = JAIL.userns_hint(err)
        else:
            why = str(err)
        if err.step not in ("user namespace", "mount namespace"):
            # Half set up: never serve children from here. The grader shows this line.
            sys.stderr.write(f"the sandbox's jail could not be built: {err}\n")
            sys.stderr.flush()
            os._exit(3)
        return {"jailed": False, "why": why, "not_dumpable": _not_dumpable()}
    layers["jailed"] = True
    return layers


def _not_dumpable() -> bool:
    """Without a jail too: a child of the same uid cannot read the zygote's memory."""
    try:
        KERNEL.prctl(KERNEL.PR_SET_DUMPABLE, 0)
        return True
    except Exception:  # noqa: BLE001 - not Linux
        return False


def main() -> None:
    global PROTOCOL, KERNEL, JAIL, CHILD
    ctrl_fd = int(sys.argv[1])
    config = json.loads(sys.argv[2]) if len(sys.argv) > 2 else {}
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    template = _load_private("template")
    stop_watching = template.watch_while_importing(ctrl_fd)
    paths = _load_private("import_path")
    paths.take_grader_path(config)
    paths.strip_kit_from_imports()
    modules = {"numpy": _import_or_say(ctrl_fd, "numpy")}    # the protocol's framing needs it
    PROTOCOL = _load_private("protocol")
    convert, errors, ipython, notebook, torch_module, arguments = _load_judge(
        "convert", "errors", "ipython_shell", "notebook", "torch_module", "arguments")
    KERNEL = _load_private("kernel")
    JAIL = _load_private("jail")
    JAIL.K, JAIL.VIEW = KERNEL, _load_private("view")
    guard = _load_private("guard")
    worker = _load_private("child")
    # check.py's child runs a notebook's cells with this loop too, and builds a torch module with this code.
    worker.configure(NOTEBOOK=notebook, MODULE=torch_module, ARGUMENTS=arguments)
    CHILD = _load_private("start")
    warm = _load_private("warm_up")

    if config.get("torch", True):
        torch = _import_or_say(ctrl_fd, "torch")
        torch.set_num_threads(1)
        modules["torch"] = torch
    if config.get("matplotlib", True):
        matplotlib = modules["matplotlib"] = _import_or_say(ctrl_fd, "matplotlib")
        matplotlib.use("Agg")
        import matplotlib.figure  # noqa: F401
        import matplotlib.pyplot  # noqa: F401   (its font cache is read here, before the jail)

        warm.quietly(warm.matplotlib_figure)
    warm.quietly(warm.numpy_first_use)
    import math  # noqa: F401
    import tempfile  # noqa: F401
    import traceback  # noqa: F401

    try:
        # compiled once, while the host's libraries are in view
        seccomp = JAIL.seccomp_program(JAIL.import_pyseccomp())
    except Exception:  # noqa: BLE001 - not installed, no libseccomp, or it cannot compile: no filter layer
        seccomp = None
    child_path = paths.child_sys_path(KIT_ROOT)
    waiting = stop_watching()
    prepared = dict(seccomp=seccomp, child_path=child_path, convert=convert, guard=guard, errors=errors,
                    ipython=ipython, worker=worker,
                    modules={name: [str(getattr(m, "__version__", "")), str(getattr(m, "__file__", ""))]
                             for name, m in modules.items()})
    template.KERNEL = KERNEL
    template.serve(ctrl_fd, lambda fd, own: _become_zygote(fd, {**config, **own}, **prepared), waiting)


def _become_zygote(ctrl_fd: int, config: dict, *, seccomp, child_path, convert, guard, errors, ipython,
                   worker, modules) -> NoReturn:
    """In a fork of the template: the jail, then serve."""
    layers = _enter_jail(config)
    layers["seccomp"] = seccomp is not None
    facts = dict(PROTOCOL=PROTOCOL, CONVERT=convert, KERNEL=KERNEL, JAIL=JAIL, GUARD=guard, ERRORS=errors,
                    IPYTHON=ipython,
                    CHILD_PATH=child_path, JAILED=layers["jailed"], LAST_CAP=KERNEL.last_capability(),
                    TMP_MB=int(config.get("tmp_mb", 256)), SECCOMP=seccomp)
    worker.configure(**facts)
    CHILD.configure(WORKER=worker, **facts)
    _set_subreaper()
    zygote = Zygote(ctrl_fd)
    zygote.layers = layers
    zygote.modules = modules
    zygote.serve()
    os._exit(0)


EXIT_MISSING_MODULE = 4


def _import_or_say(ctrl_fd: int, name: str):
    """`name` imported; if it cannot be, the grader is told which module and why (one message on
    the control socket, which it turns into a sentence with the fix) and this process exits."""
    try:
        return importlib.import_module(name)
    except Exception as err:  # noqa: BLE001 - ImportError, or a broken install raising anything
        message = {"event": "missing", "module": name, "error": f"{type(err).__name__}: {err}"[:500]}
        ctrl = socket.socket(fileno=os.dup(ctrl_fd))
        try:
            ctrl.send(json.dumps(message).encode())
            ctrl.setblocking(False)       # recv_fds drops its flags argument
            # A socket closed with requests still unread resets its peer, which then loses this
            # message too: what the grader sent meanwhile is read (and its fds closed) first.
            while True:
                data, fds, _flags, _addr = socket.recv_fds(ctrl, 65536, 8)
                for fd in fds:
                    os.close(fd)
                if not data:
                    break
        except OSError:
            pass
        os._exit(EXIT_MISSING_MODULE)


def _run_child(role: str, body: Callable[[], None]) -> NoReturn:
    """In a process the zygote just made: `body` (which never returns when all goes well); what
    it raises is said in the capture file, and the process ends with the sandbox's internal code."""
    try:
        body()
    except BaseException as err:  # noqa: BLE001 - say why in the capture file
        try:
            os.write(2, f"sandbox {role} failed: {type(err).__name__}: {err}\n".encode())
        except BaseException:  # noqa: BLE001
            pass
    finally:
        os._exit(CHILD.EXIT_INTERNAL)


PROTOCOL = KERNEL = JAIL = CHILD = None

if __name__ == "__main__":
    main()
