"""The helper process of bounded.py and its children: each child parses one upload's bytes within
its limits and answers in JSON.

Started by the grader (bounded.py) from a clean interpreter that imports only the parsers; a child
is a fork of it, so the parsers' imports and first uses are done once.
"""

from __future__ import annotations

import gc
import json
import os
import resource
import signal
import socket

from autograder.intake import archives, load
from autograder.intake.archives import MAX_MEMBER_BYTES
from autograder.intake.bounded import HEADER, MAX_REQUEST, ParseLimits

# What a child may run: op -> function. The function takes the request's JSON arguments and
# returns JSON-ready data.
OPS = {
    "archive": archives.unpacked_here,
    "notebook": load.notebook_here,
    "python": load.python_here,
}


def serve(ctrl_fd: int) -> None:
    """The helper: one child per connection handed over on `ctrl_fd`, until the grader closes it."""
    _warm()
    # A child that collected garbage would touch, and so copy, every page the helper's objects are
    # on: they are left out of its collections.
    gc.collect()
    gc.freeze()
    # children are reaped as they end, so that their CPU time is the helper's, and the grader's
    signal.signal(signal.SIGCHLD, _reap)
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    ctrl = socket.socket(fileno=ctrl_fd)
    ctrl.sendall(b"r")
    while True:
        try:
            msg, fds, _, _ = socket.recv_fds(ctrl, 1, 4)
        except InterruptedError:
            continue
        except OSError:
            return
        if not msg:
            return
        for fd in fds[1:]:
            os.close(fd)
        if not fds:
            continue
        try:
            pid = os.fork()
        except OSError:
            pid = -1          # the grader reads the connection's end and says so
        if pid == 0:
            ctrl.close()
            signal.signal(signal.SIGCHLD, signal.SIG_DFL)
            _child(fds[0])
        os.close(fds[0])


def _reap(*_) -> None:
    try:
        while os.waitpid(-1, os.WNOHANG)[0] > 0:
            pass
    except ChildProcessError:
        pass


def _warm() -> None:
    """What every child would otherwise do first, done once in the helper (a fork shares it):
    IPython's transformer made, the tokenizer's and the compiler's first use."""
    cell = {"cell_type": "code", "metadata": {}, "source": "%matplotlib inline\n!ls\nx = 1\nx?"}
    notebook = {"nbformat": 4, "nbformat_minor": 5, "metadata": {},
                "cells": [cell, dict(cell, source="%%time\ny = 2")]}
    try:
        load.notebook_here(json.dumps(notebook), "warm.ipynb", "warm")
    except Exception:  # noqa: BLE001 - a child that needs it meets the error and says so
        pass


def _child(fd: int) -> None:
    """Reads one request, works within its limits, answers, and exits."""
    status, sock = 0, None
    try:
        sock = socket.socket(fileno=fd)
        sock.sendall(HEADER.pack(os.getpid()))
        size = HEADER.unpack(_read(sock, HEADER.size))[0]
        if size > MAX_REQUEST:
            raise ValueError("request too large")
        request = json.loads(_read(sock, size))
        _limit(ParseLimits(**request["limits"]))
        try:
            answer = {"value": OPS[request["op"]](*request["args"])}
        except MemoryError:
            answer = {"over": "memory"}
        data = json.dumps(answer, ensure_ascii=False, allow_nan=False).encode()
        sock.sendall(HEADER.pack(len(data)) + data)
    except MemoryError:
        status = 3
    except BaseException as err:  # noqa: BLE001 - said to the grader, which counts it as its own failure
        try:
            data = json.dumps({"failed": f"{type(err).__name__}: {err}"[:500]}).encode()
            if sock is not None:
                sock.sendall(HEADER.pack(len(data)) + data)
        except BaseException:  # noqa: BLE001
            status = 4
    finally:
        os._exit(status)


def _read(sock: socket.socket, n: int) -> bytes:
    chunks, got = [], 0
    while got < n:
        chunk = sock.recv(min(n - got, 1 << 20))
        if not chunk:
            raise EOFError
        chunks.append(chunk)
        got += len(chunk)
    return b"".join(chunks)


def _limit(limits: ParseLimits) -> None:
    """This child's limits: its CPU time (SIGXCPU ends it, even inside one long C call), its address
    space above what it maps now, its wall time (SIGALRM), no core files, and files no larger than
    an archive's member may be."""
    try:
        with open("/proc/self/statm", "rb") as fh:
            mapped = int(fh.read().split()[0]) * resource.getpagesize()
        cap = mapped + limits.memory_mb * 1024 * 1024
        resource.setrlimit(resource.RLIMIT_AS, (cap, cap))
    except (OSError, ValueError):
        pass        # no /proc (macOS: a student's own `attnkit check`): CPU and wall time still hold
    resource.setrlimit(resource.RLIMIT_CPU, (limits.cpu_seconds, limits.cpu_seconds + 1))
    resource.setrlimit(resource.RLIMIT_CORE, (0, 0))
    resource.setrlimit(resource.RLIMIT_FSIZE, (MAX_MEMBER_BYTES + (1 << 16),) * 2)
    signal.signal(signal.SIGXCPU, signal.SIG_DFL)
    signal.signal(signal.SIGALRM, signal.SIG_DFL)
    signal.alarm(int(limits.wall_seconds) + 1)
