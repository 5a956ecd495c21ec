"""Grader side: the zygotes' templates (inside/template.py). One process per kind of zygote (what
it imports) and grader process imports numpy, torch or matplotlib once, and forks a zygote for
each Sandbox that asks; the fork jails itself with that Sandbox's settings. A class's lanes, and a
zygote started again after one died, cost a fork instead of the imports.

A spawned zygote is its template's child, not the grader's: `Spawned` stands for it where a
subprocess.Popen stood (pid, poll, wait, kill, returncode), from what the template reports.
"""

from __future__ import annotations

import atexit
import itertools
import json
import os
import select
import signal
import socket
import subprocess
import sys
import tempfile
import threading
import time

from autograder.judge.threads import one_thread
from autograder.sandbox.interpreter import for_zygote

# What a zygote imports, which its template decides; the rest of its config is its Sandbox's.
IMPORT_KEYS = ("torch", "matplotlib")
NEVER_FORKED = 70     # a Spawned's return code when no zygote came of the request (as a failed fork's)
ANSWER_POLL_S = 0.005
ZYGOTE_PATH = os.path.join(os.path.dirname(os.path.abspath(__file__)), "inside", "zygote.py")
_ENV_KEEP = {"PATH", "HOME", "LANG", "LANGUAGE", "TZ", "LD_LIBRARY_PATH", "XDG_CACHE_HOME", "MPLCONFIGDIR"}


def wait_or_kill(proc, grace: float = 2.0) -> None:
    """A process asked to exit (a zygote): waited for `grace` seconds, then killed."""
    try:
        proc.wait(timeout=grace)
    except subprocess.TimeoutExpired:
        proc.kill()
        proc.wait()


def template_launch(imports: dict) -> tuple[list[str], dict]:
    """(argv, environment) of the template for `imports`: a clean interpreter running
    inside/zygote.py with this interpreter's view (its import path, prefixes) and the kept part
    of the environment. A template serves a zygote only when both are what it would get now."""
    env = {k: v for k, v in os.environ.items() if k in _ENV_KEEP or k.startswith("LC_")}
    env["MPLBACKEND"] = "Agg"
    one_thread(env)
    return [sys.executable, "-I", ZYGOTE_PATH, json.dumps({**imports, **for_zygote()})], env


def start_zygote_script(launch: tuple[list[str], dict], ctrl: socket.socket, stderr) -> subprocess.Popen:
    """The template's interpreter (`template_launch`), with its end of the control socket."""
    argv, env = launch
    return subprocess.Popen(
        [*argv[:3], str(ctrl.fileno()), *argv[3:]],
        pass_fds=[ctrl.fileno()], stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=stderr, env=env,
        cwd="/", start_new_session=True)


def read_events(sock: socket.socket, timeout: float, handle) -> bool:
    """`handle(event)` for every JSON object ready on a control socket (a template's, a zygote's),
    waiting up to `timeout` for the first; returns whether the other end is gone."""
    wait = timeout
    while True:
        try:
            readable, _, _ = select.select([sock], [], [], max(0.0, wait))
            data = sock.recv(65536) if readable else None
        except (OSError, ValueError):
            return True
        if data is None:
            return False
        if not data:
            return True
        try:
            msg = json.loads(data.decode("utf-8"))
        except ValueError:
            msg = None
        if isinstance(msg, dict):
            handle(msg)
        wait = 0.0


def file_tail(f, limit: int = 2000) -> str:
    """The last `limit` bytes of a process's stderr file, printable."""
    try:
        size = os.fstat(f.fileno()).st_size
        data = os.pread(f.fileno(), limit, max(0, size - limit))
    except (OSError, ValueError):
        return ""
    text = data.decode("utf-8", "replace")
    return "".join(ch if ch.isprintable() or ch in "\n\t" else "?" for ch in text).strip()


class Template:
    """One template process and its control socket, shared by the Sandboxes of the grader's
    threads (every exchange under `lock`)."""

    def __init__(self, launch: tuple[list[str], dict]) -> None:
        ours, theirs = socket.socketpair(socket.AF_UNIX, socket.SOCK_SEQPACKET)
        self.stderr = tempfile.TemporaryFile()
        try:
            self.proc = start_zygote_script(launch, theirs, self.stderr)
        finally:
            theirs.close()
        self.sock = ours
        self.lock = threading.Lock()
        self.dead = False
        self.asked_to_exit = False
        self.missing: dict | None = None             # the module it could not import, and why
        self.answers: dict[int, int | str] = {}      # spawn request -> pid, or why it failed
        self.exited: dict[int, int] = {}             # pid of a zygote it forked -> exit code
        self.unwanted: set[int] = set()              # spawn requests to kill as soon as answered
        self._ids = itertools.count(1)

    def alive(self) -> bool:
        if not self.dead and self.proc.poll() is not None:
            with self.lock:
                self.pump(0)      # its last reports first
                self.dead = True
        return not self.dead

    def spawn(self, config: dict, zygote_end: socket.socket, stderr) -> Spawned:
        """Asks for a zygote served on `zygote_end` (the template's copy is closed once it has
        forked), with `config` its Sandbox's settings; does not wait."""
        with self.lock:
            request = next(self._ids)
            data = json.dumps({"op": "spawn", "id": request, "config": config}).encode("utf-8")
            try:
                socket.send_fds(self.sock, [data], [zygote_end.fileno(), stderr.fileno()])
            except OSError as err:
                self.dead = True
                self.answers[request] = f"the sandbox template is gone ({err})"
        return Spawned(self, request)

    def pump(self, timeout: float) -> None:
        """Reads every report that is ready, waiting up to `timeout` for the first. Called with
        `lock` held, or where no other thread can use this template."""
        if not self.dead:
            self.dead = read_events(self.sock, timeout, self._handle)

    def _handle(self, msg: dict) -> None:
        event = msg.get("event")
        if event == "missing":
            self.missing = msg
        elif event == "spawned":
            request, pid = msg.get("id"), int(msg["pid"])
            self.answers[request] = pid
            if request in self.unwanted:
                self.unwanted.discard(request)
                _kill(pid)
        elif event == "spawn_failed":
            self.answers[msg.get("id")] = str(msg.get("message", "fork failed"))
        elif event == "exited":
            self.exited[int(msg["pid"])] = int(msg.get("code", -1))

    def stderr_tail(self) -> str:
        return file_tail(self.stderr)

    def ask_to_exit(self) -> None:
        """Tells it to exit, without waiting (the zygotes it forked go on serving their Sandboxes)."""
        if not self.asked_to_exit:
            self.asked_to_exit = True
            try:
                self.sock.send(json.dumps({"op": "exit"}).encode("utf-8"))
            except OSError:
                pass

    def close(self, grace: float = 2.0) -> None:
        """Told to exit, waited for."""
        self.ask_to_exit()
        self.sock.close()
        wait_or_kill(self.proc, grace)
        self.dead = True
        self.stderr.close()


class Spawned:
    """A zygote forked by a template, as a subprocess.Popen would show it."""

    def __init__(self, template: Template, request: int) -> None:
        self.template, self.request = template, request
        self.returncode: int | None = None

    @property
    def missing(self) -> dict | None:
        return self.template.missing

    def stderr_tail(self) -> str:
        return self.template.stderr_tail()

    def _answer(self) -> int | str | None:
        t = self.template
        with t.lock:
            t.pump(0)
            answer = t.answers.get(self.request)
        if answer is None and not t.alive():
            answer = t.answers.get(self.request) or "the sandbox template exited before it forked"
        return answer

    @property
    def pid(self) -> int:
        """Its pid once the template has answered (waited for up to a minute: it may still be
        importing torch); -1 for one that never came."""
        deadline = time.monotonic() + 60.0
        while (answer := self._answer()) is None and time.monotonic() < deadline:
            time.sleep(ANSWER_POLL_S)      # not waiting on the socket: other lanes read it too
        return answer if isinstance(answer, int) else -1

    def poll(self) -> int | None:
        if self.returncode is not None:
            return self.returncode
        answer = self._answer()
        if answer is None:
            return None
        if isinstance(answer, str):
            code = self.template.proc.returncode if self.template.dead else None
            self.returncode = code if code else NEVER_FORKED
        elif answer in self.template.exited:
            self.returncode = self.template.exited[answer]
        elif self.template.dead and not _exists(answer):     # reparented: its end went unreported
            self.returncode = -signal.SIGKILL
        return self.returncode

    def wait(self, timeout: float | None = None) -> int:
        deadline = None if timeout is None else time.monotonic() + timeout
        while self.poll() is None:
            if deadline is not None and time.monotonic() >= deadline:
                raise subprocess.TimeoutExpired("zygote", timeout)
            time.sleep(ANSWER_POLL_S)
        return self.returncode

    def kill(self) -> None:
        if self.poll() is not None:
            return
        with self.template.lock:
            answer = self.template.answers.get(self.request)
            if answer is None:
                self.template.unwanted.add(self.request)
        if isinstance(answer, int):
            _kill(answer)


def _kill(pid: int) -> None:
    try:
        os.kill(pid, signal.SIGKILL)
    except OSError:
        pass


def _exists(pid: int) -> bool:
    """Whether `pid` still runs: a zombie nobody reaps (an init that does not) has ended."""
    try:
        with open(f"/proc/{pid}/stat", "rb") as f:
            state = f.read().rsplit(b")", 1)[1].split()[0]
    except (OSError, IndexError):
        return False
    return state not in (b"Z", b"X")


_TEMPLATES: dict[str, Template] = {}
_LOCK = threading.Lock()


def spawn_zygote(config: dict, zygote_end: socket.socket, stderr) -> Spawned:
    """A zygote of `config` forked from the template of its imports (started now if none runs)."""
    launch = template_launch({k: config[k] for k in IMPORT_KEYS if k in config})
    own = {k: v for k, v in config.items() if k not in IMPORT_KEYS}
    key = json.dumps(launch, sort_keys=True)
    with _LOCK:
        template = _TEMPLATES.get(key)
        if template is None or not template.alive():
            if template is not None:
                template.close(0.0)
            template = _TEMPLATES[key] = Template(launch)
    return template.spawn(own, zygote_end, stderr)


@atexit.register
def close_templates() -> None:
    """Every template told to exit and waited for: none is left running after a class run or
    the grader's process."""
    with _LOCK:
        templates = list(_TEMPLATES.values())
        _TEMPLATES.clear()
    for template in templates:      # all asked before any is waited for: they end together
        template.ask_to_exit()
    for template in templates:
        template.close()
