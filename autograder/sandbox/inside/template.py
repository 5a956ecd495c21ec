"""A zygote's imports, done once and forked for each sandbox's zygote of that kind.

A class run starts a sandbox per lane, and one more for each core a sleeping submission lends
(grading/local_grading.py): each wants a torch zygote, whose imports cost about 1.7 core-seconds
before its jail. A template does those imports once (zygote.py's `main`, up to the jail), then
forks, for each sandbox, a zygote that enters its own jail with its own config (its private
uid) and serves as any zygote does. It never enters a jail, never forks a child for student
code and never runs a torch op.

Control socket (SOCK_SEQPACKET, one JSON message per packet):
    grader -> template  {"op": "spawn", "config": {...}} + fds: the zygote's control socket, its stderr
                        {"op": "exit"}
    template -> grader  {"event": "ready"}
                        {"event": "spawned", "pid": p} + fd: a pidfd of it (the grader's way to
                            watch and kill a process that is not its child)
                        {"event": "spawn_failed", "message": ...}
"""

import json
import os
import select
import signal
import socket
from collections.abc import Callable
from typing import NoReturn


def serve(ctrl_fd: int, become_zygote: Callable[[int, dict], NoReturn], kernel) -> NoReturn:
    """Forks a zygote per "spawn" until the grader says "exit" or goes away; reaps the zygotes
    that exit as they do. `kernel`: inside/kernel.py, as the zygote loaded it."""
    ctrl = socket.socket(fileno=ctrl_fd)
    ctrl.setblocking(True)
    wake_r, wake_w = kernel.wake_on_child_exit()
    _send(ctrl, {"event": "ready", "pid": os.getpid()})
    while True:
        readable, _, _ = select.select([ctrl, wake_r], [], [])
        if wake_r in readable:
            kernel.drain(wake_r)
            for _exited in kernel.reaped():    # the grader saw them go through their pidfds
                pass
        if ctrl not in readable:
            continue
        try:
            data, fds, _flags, _addr = socket.recv_fds(ctrl, 65536, 4)
        except OSError:
            data, fds = b"", []
        if not data:
            os._exit(0)
        try:
            msg = json.loads(data.decode("utf-8"))
        except ValueError:
            msg = {}
        if msg.get("op") != "spawn" or len(fds) != 2 or not isinstance(msg.get("config"), dict):
            for fd in fds:
                os.close(fd)
            if msg.get("op") == "exit":
                os._exit(0)
            _send(ctrl, {"event": "spawn_failed", "message": "expected a config and two file descriptors"})
            continue
        _spawn(ctrl, fds[0], fds[1], msg["config"], lambda fd, config: _as_zygote(fd, config, (wake_r, wake_w),
                                                                                become_zygote))


def _as_zygote(zygote_ctrl: int, config: dict, wake: tuple[int, int],
               become_zygote: Callable[[int, dict], NoReturn]) -> NoReturn:
    """In the forked process: none of the template's signal handling, then the zygote's start."""
    signal.set_wakeup_fd(-1)
    signal.signal(signal.SIGCHLD, signal.SIG_DFL)
    for fd in wake:
        os.close(fd)
    become_zygote(zygote_ctrl, config)


def _spawn(ctrl: socket.socket, zygote_ctrl: int, stderr: int, config: dict,
           become_zygote: Callable[[int, dict], NoReturn]) -> None:
    try:
        pid = os.fork()
    except OSError as err:
        os.close(zygote_ctrl)
        os.close(stderr)
        _send(ctrl, {"event": "spawn_failed", "message": str(err)})
        return
    if pid == 0:
        try:
            ctrl.close()                  # the template's socket is not the zygote's to hold
            os.setsid()                   # as a zygote the grader starts itself (start_new_session)
            os.dup2(stderr, 2)
            os.close(stderr)
            become_zygote(zygote_ctrl, config)
        except BaseException as err:  # noqa: BLE001 - said on the zygote's stderr, which the grader shows
            try:
                os.write(2, f"the sandbox server could not start: {type(err).__name__}: {err}\n".encode())
            except BaseException:  # noqa: BLE001
                pass
        finally:
            os._exit(3)
    os.close(zygote_ctrl)
    os.close(stderr)
    try:
        pidfd = os.pidfd_open(pid)       # a zombie at worst: only `kernel.reaped`, after this, frees its pid
    except OSError as err:         # a zygote the grader cannot watch is none of its
        try:
            os.kill(pid, signal.SIGKILL)
        except OSError:
            pass
        _send(ctrl, {"event": "spawn_failed", "message": f"pidfd_open: {err}"})
        return
    try:
        socket.send_fds(ctrl, [json.dumps({"event": "spawned", "pid": pid}).encode("utf-8")], [pidfd])
    except OSError:
        os._exit(0)                       # the grader is gone: so are we
    finally:
        os.close(pidfd)


def _send(ctrl: socket.socket, msg: dict) -> None:
    try:
        ctrl.sendall(json.dumps(msg).encode("utf-8"))
    except OSError:
        os._exit(0)

