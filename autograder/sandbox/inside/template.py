"""The zygotes' template: the process that imported what a kind of zygote needs (numpy, torch,
matplotlib), once for the grader's process, and forks a zygote for each Sandbox that asks. The
fork then builds its own jail (its private uid, its namespaces: jail.py) and serves as that
Sandbox's zygote, so a class's lanes, and a zygote started again, pay a fork instead of the
imports. The template never builds a jail and never forks a child for student code.

Control socket (SOCK_SEQPACKET, one JSON message per packet):
    grader -> template  {"op": "spawn", "id": n, "config": {...}} + fds: the new zygote's end of
                            its control socket, and its stderr file
                        {"op": "exit"}
    template -> grader  {"event": "ready"}
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
from collections.abc import Callable
from typing import NoReturn

KERNEL = None    # kernel.py, set by the zygote's script

EXIT_INTERNAL = 70      # a fork that could not become a zygote (said in its stderr file)


def serve(ctrl_fd: int, become: Callable[[int, dict], NoReturn]) -> NoReturn:
    """Answers spawn requests until the grader says "exit" or goes away; `become(fd, config)`
    turns a fork into a zygote served on `fd`."""
    ctrl = socket.socket(fileno=ctrl_fd)
    ctrl.setblocking(True)
    wake_r, wake_w = KERNEL.wake_on_child_exit()

    def send(msg: dict) -> None:
        try:
            ctrl.sendall(json.dumps(msg).encode("utf-8"))
        except OSError:
            os._exit(0)

    send({"event": "ready"})
    while True:
        readable, _, _ = select.select([ctrl, wake_r], [], [])
        if wake_r in readable:
            KERNEL.drain(wake_r)
        for pid, status in KERNEL.reaped():
            send({"event": "exited", "pid": pid, "code": os.waitstatus_to_exitcode(status)})
        if ctrl not in readable:
            continue
        try:
            data, fds, _flags, _addr = socket.recv_fds(ctrl, 65536, 4)
        except OSError:
            data, fds = b"", []
        try:
            msg = json.loads(data.decode("utf-8")) if data else {"op": "exit"}
        except ValueError:
            msg = {}
        if msg.get("op") == "spawn" and len(fds) == 2:
            send(_spawn(msg, fds, ctrl, (wake_r, wake_w), become))
            continue
        for fd in fds:
            os.close(fd)
        if msg.get("op") == "exit":
            # The zygotes go on serving their Sandboxes: each has its own socket to the grader.
            os._exit(0)


def _spawn(msg: dict, fds: list[int], ctrl: socket.socket, wake: tuple[int, int],
           become: Callable[[int, dict], NoReturn]) -> dict:
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
            for fd in wake:
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
