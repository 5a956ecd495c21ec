"""The zygotes' template: the process that imported what a kind of zygote needs (numpy, torch,
matplotlib), once for the grader's process, and forks a zygote for each Sandbox that asks. The
fork then builds its own jail (its private uid, its namespaces: jail.py) and serves as that
Sandbox's zygote, so a class's lanes, and a zygote started again, pay a fork instead of the
imports. The template never builds a jail and never forks a child for student code.

Control socket (SOCK_SEQPACKET, one JSON message per packet):
    grader -> template  {"op": "spawn", "id": n, "config": {...}} + fds: the new zygote's end of
                            its control socket, and its stderr file
                        {"op": "exit"}
    template -> grader  {"event": "missing", "module": m, "error": e}   (an import failed: it exits)
                        {"event": "ready"}
                        {"event": "spawned", "id": n, "pid": p}
                        {"event": "spawn_failed", "id": n, "message": "..."}
                        {"event": "exited", "pid": p, "code": c}

Loaded inside the zygote's script from its file path: standard library only, plus kernel.py.
"""

import json
import os
import select
import signal
import socket
import threading
import time
from collections.abc import Callable
from typing import NoReturn

KERNEL = None    # kernel.py, set by the zygote's script

EXIT_INTERNAL = 70      # a fork that could not become a zygote (said in its stderr file)
THREAD_EXIT_WAIT_S = 1.0

Request = tuple[bytes, list[int]]     # a packet and the fds it carried


def watch_while_importing(ctrl_fd: int) -> Callable[[], list[Request]]:
    """During the slow imports, a thread reads the grader's requests: "exit", or the grader gone,
    ends the process at once; a spawn waits. Returns a function that stops the thread, waits for
    it to be gone (a fork's jail unshares a user namespace, which needs a single-threaded
    process) and returns the requests it read."""
    stop_r, stop_w = os.pipe()
    sock = socket.socket(fileno=os.dup(ctrl_fd))
    waiting: list[Request] = []

    def watch() -> None:
        while True:
            readable, _, _ = select.select([sock, stop_r], [], [])
            if stop_r in readable:
                return
            try:
                data, fds, _flags, _addr = socket.recv_fds(sock, 65536, 4)
            except OSError:
                data, fds = b"", []
            if not data or _op(data) == "exit":
                os._exit(0)
            waiting.append((data, fds))

    thread = threading.Thread(target=watch, daemon=True)
    thread.start()

    def stop() -> list[Request]:
        os.write(stop_w, b"x")
        thread.join()
        for fd in (stop_r, stop_w):
            os.close(fd)
        sock.close()
        # join() returns when the thread's Python code is done, before the kernel has removed its
        # task: an unshare(CLONE_NEWUSER) in between fails with EINVAL (seen under load, as a
        # normal user). Wait for the task to go, bounded: past that, the jail says why it failed.
        deadline = time.monotonic() + THREAD_EXIT_WAIT_S
        while _threads() > 1 and time.monotonic() < deadline:
            time.sleep(0.0002)
        return waiting

    return stop


def _threads() -> int:
    """This process's threads (tasks), as the kernel counts them; 1 where /proc cannot tell."""
    try:
        return len(os.listdir("/proc/self/task"))
    except OSError:
        return 1


def _op(data: bytes) -> object:
    try:
        msg = json.loads(data.decode("utf-8"))
    except ValueError:
        return None
    return msg.get("op") if isinstance(msg, dict) else None


def serve(ctrl_fd: int, become: Callable[[int, dict], NoReturn], waiting: list[Request] = ()) -> NoReturn:
    """Answers spawn requests (first those read while importing) until the grader says "exit" or
    goes away; `become(fd, config)` turns a fork into a zygote served on `fd`."""
    ctrl = socket.socket(fileno=ctrl_fd)
    ctrl.setblocking(True)
    wake = KERNEL.wake_on_child_exit()

    def send(msg: dict) -> None:
        try:
            ctrl.sendall(json.dumps(msg).encode("utf-8"))
        except OSError:
            os._exit(0)

    send({"event": "ready"})
    pending = list(waiting)
    while pending:
        data, fds = pending.pop(0)
        # A fork keeps nothing of the requests after its own (another Sandbox's socket, its stderr).
        _answer(data, fds, ctrl, wake, become, send, [fd for _, more in pending for fd in more])
    while True:
        readable, _, _ = select.select([ctrl, wake[0]], [], [])
        if wake[0] in readable:
            KERNEL.drain(wake[0])
        for pid, status in KERNEL.reaped():
            send({"event": "exited", "pid": pid, "code": os.waitstatus_to_exitcode(status)})
        if ctrl in readable:
            try:
                data, fds, _flags, _addr = socket.recv_fds(ctrl, 65536, 4)
            except OSError:
                data, fds = b"", []
            _answer(data, fds, ctrl, wake, become, send)


def _answer(data: bytes, fds: list[int], ctrl: socket.socket, wake: tuple[int, int],
            become: Callable[[int, dict], NoReturn], send: Callable[[dict], None], others: list[int] = ()) -> None:
    try:
        msg = json.loads(data.decode("utf-8")) if data else {"op": "exit"}
    except ValueError:
        msg = {}
    if not isinstance(msg, dict):
        msg = {}
    if msg.get("op") == "spawn" and len(fds) == 2:
        send(_spawn(msg, fds, ctrl, [*wake, *others], become))
        return
    for fd in fds:
        os.close(fd)
    if msg.get("op") == "exit":
        # The zygotes go on serving their Sandboxes: each has its own socket to the grader.
        os._exit(0)


def _spawn(msg: dict, fds: list[int], ctrl: socket.socket, drop: list[int],
           become: Callable[[int, dict], NoReturn]) -> dict:
    """The fork for one spawn request: `drop` are the template's descriptors it must not keep."""
    zygote_fd, stderr_fd = fds
    config = msg.get("config") if isinstance(msg.get("config"), dict) else {}
    try:
        pid = os.fork()
    except OSError as err:
        os.close(zygote_fd)
        os.close(stderr_fd)
        return {"event": "spawn_failed", "id": msg.get("id"), "message": f"fork: {err}"}
    if pid == 0:
        try:
            # Nothing of the template's stays: its socket, its wake-up pipe, its stderr.
            signal.set_wakeup_fd(-1)
            signal.signal(signal.SIGCHLD, signal.SIG_DFL)
            ctrl.close()
            for fd in drop:
                os.close(fd)
            os.dup2(stderr_fd, 2)
            os.close(stderr_fd)
            os.setsid()        # its own session, as the grader starts a process it may kill whole
            become(zygote_fd, config)
        except BaseException as err:  # noqa: BLE001 - said in its stderr file
            try:
                os.write(2, f"the sandbox server could not start: {type(err).__name__}: {err}\n".encode())
            except BaseException:  # noqa: BLE001
                pass
        os._exit(EXIT_INTERNAL)
    os.close(zygote_fd)
    os.close(stderr_fd)
    return {"event": "spawned", "id": msg.get("id"), "pid": pid}
