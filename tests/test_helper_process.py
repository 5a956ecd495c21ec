"""The one mechanism of the grader's helper processes (autograder/sandbox/helper_process.py): a helper never
starts another, and nothing of one outlives its grader.

A grader here is a separate Python process, as `attnkit grade` is: its import path holds a folder
of this test's own (`marker`), which every helper it starts carries in its command line, so the
helpers of this test are counted without touching anyone else's.
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import textwrap
import time
from pathlib import Path
from typing import Iterator

import pytest

from autograder.config import KIT_ROOT

# A helper module of the test's: its operations ask for more work the way the kit's do (the parse
# helper's `read` asks for each archive and notebook), through a Helper of their own module and of
# another's.
TOY_HELPER = r'''
import os, time
from autograder.sandbox import helper_process

SELF = helper_process.Helper("toy_helper")
OTHER = helper_process.Helper("autograder.intake.parse_helper")

def pid():
    return [os.getpid(), os.getppid()]

def ask_again():
    """In a child: asks its own helper's work (a fork of this child) and another helper's (refused:
    a child never starts a helper)."""
    mine = SELF.run("pid", [], LIMITS).value
    try:
        OTHER.run("python", [{}, "x = 1", "x.py"], LIMITS)
        other = "done"
    except helper_process.Unavailable as err:
        other = str(err)
    return {"me": os.getpid(), "mine": mine, "other": other}

def sleep(seconds, started):
    open(started, "w").close()
    time.sleep(seconds)
    return os.getpid()

def started_elsewhere():
    """In a child: a Python started from it (not a fork) that asks for a helper's work."""
    import subprocess, sys
    code = ("import sys; sys.path[:0] = %r\n"
            "import toy_helper\n"
            "from autograder.sandbox import helper_process\n"
            "try:\n"
            "    toy_helper.SELF.run('pid', [], toy_helper.LIMITS); print('started')\n"
            "except helper_process.Unavailable as err:\n"
            "    print(err)\n") % (sys.path[:2],)
    return subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60).stdout

def warm():
    SELF.run("pid", [], LIMITS)      # a warm-up that asks for work: done in the helper itself

LIMITS = helper_process.Limits(cpu_seconds=5, memory_mb=256, wall_seconds=30.0)
OPS = {"pid": pid, "ask_again": ask_again, "sleep": sleep, "started_elsewhere": started_elsewhere}
'''


@pytest.fixture
def marker(tmp_path) -> Iterator[Path]:
    folder = tmp_path / "helper-test-marker"
    folder.mkdir()
    (folder / "toy_helper.py").write_text(TOY_HELPER, encoding="utf-8")
    yield folder
    # Whatever the test left (a grader, its helpers, helpers started from helpers where that is
    # still possible) is stopped first, so that nothing forks on while it is killed.
    for sig in (signal.SIGSTOP, signal.SIGKILL):
        for pid in processes_naming(folder):
            try:
                os.kill(pid, sig)
            except OSError:
                pass


def processes_naming(folder: Path) -> list[int]:
    """The processes whose command line names `folder` (a test's graders and their helpers)."""
    found = []
    for entry in os.listdir("/proc"):
        if entry.isdigit() and int(entry) != os.getpid():
            try:
                if str(folder).encode() in Path("/proc", entry, "cmdline").read_bytes():
                    found.append(int(entry))
            except OSError:
                pass
    return found


def helpers_of(marker: Path) -> list[int]:
    """The pids of the helper servers this test's graders started: each leads a session of its own,
    which the children it forks share."""
    found = []
    for entry in os.listdir("/proc"):
        if not entry.isdigit():
            continue
        try:
            argv = Path("/proc", entry, "cmdline").read_bytes().replace(b"\0", b" ")
            session = int(Path("/proc", entry, "stat").read_text().rsplit(")", 1)[1].split()[3])
        except (OSError, ValueError, IndexError):
            continue
        if b"autograder.sandbox.helper_server" in argv and str(marker).encode() in argv and session == int(entry):
            found.append(int(entry))
    return found


def alive(pid: int) -> bool:
    try:
        state = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0]
    except OSError:
        return False
    return state != "Z"


def grader(marker: Path, body: str) -> subprocess.Popen:
    """A grader process running `body` with `toy_helper` importable; it prints what `body` prints."""
    code = f"import sys; sys.path[:0] = [{str(marker)!r}, {str(KIT_ROOT)!r}]\n" + textwrap.dedent(body)
    return subprocess.Popen([sys.executable, "-c", code], stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                            text=True, cwd=str(marker))


def first_line(run: subprocess.Popen, marker: Path, seconds: float = 90.0) -> tuple[str, list[int]]:
    """The grader's first line of output, and the helper servers it has once that line is out.
    Fails at once when a second helper server appears (helpers starting helpers multiply), or when
    no line comes in time."""
    import select

    deadline = time.monotonic() + seconds
    while True:
        servers = helpers_of(marker)
        assert len(servers) <= 1, f"the grader has {len(servers)} helper servers of one module"
        if select.select([run.stdout], [], [], 0.2)[0]:
            return run.stdout.readline(), helpers_of(marker)
        assert run.poll() is None, run.stderr.read()[-3000:]
        assert time.monotonic() < deadline, "the grader said nothing in time"


def test_a_helpers_child_asking_for_work_forks_itself_and_starts_no_helper(marker):
    run = grader(marker, """
        import json, toy_helper
        print(json.dumps(toy_helper.SELF.run("ask_again", [], toy_helper.LIMITS).value), flush=True)
        import time; time.sleep(1.0)
    """)
    line, servers = first_line(run, marker)
    out, err = run.communicate(timeout=60)
    assert line, err[-3000:]
    answer = json.loads(line)
    # the child's own request ran in a fork of that child, not in a helper
    assert answer["mine"][1] == answer["me"], answer
    assert "never starts a helper" in answer["other"] or "cannot do" in answer["other"], answer
    assert len(servers) == 1, servers       # the grader's one helper, nothing started from inside it


def test_the_parse_helper_reads_a_submission_without_starting_another_helper(marker, tmp_path):
    """The parse helper's own warm-up and a child that forks for an archive and a notebook (the
    path that once started helpers from helpers without end)."""
    import io
    import json as json_module
    import tarfile

    folder = tmp_path / "student"
    folder.mkdir()
    buf = io.BytesIO()
    with tarfile.open(fileobj=buf, mode="w:gz") as tf:
        data = (KIT_ROOT / "solutions" / "attention.py").read_bytes()
        info = tarfile.TarInfo("attention.py")
        info.size = len(data)
        tf.addfile(info, io.BytesIO(data))
    (folder / "work.tar.gz").write_bytes(buf.getvalue())
    cell = {"cell_type": "code", "metadata": {}, "execution_count": None, "outputs": [],
            "source": (KIT_ROOT / "solutions" / "scaling.py").read_text()}
    (folder / "scaling.ipynb").write_text(json_module.dumps(
        {"nbformat": 4, "nbformat_minor": 5, "metadata": {}, "cells": [cell]}))
    run = grader(marker, f"""
        from pathlib import Path
        from autograder.intake import staging
        from autograder.intake.students import Student
        with staging.read(Path({str(folder)!r}), Student("s", Path({str(folder)!r})), ("attention", "scaling")) as found:
            print(sorted(type(v).__name__ for v in found.sources.values()), flush=True)
        import time; time.sleep(1.0)
    """)
    line, servers = first_line(run, marker)
    out, err = run.communicate(timeout=120)
    assert line.strip() == "['SourceFile', 'SourceFile']", err[-3000:]
    assert len(servers) == 1, servers


def children_of(pid: int) -> list[int]:
    return [int(p) for p in Path(f"/proc/{pid}/task/{pid}/children").read_text().split()]


def ended(pids: list[int], seconds: float = 10.0) -> list[int]:
    """Those of `pids` still alive after waiting up to `seconds` for them to end."""
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline and any(alive(p) for p in pids):
        time.sleep(0.1)
    return [p for p in pids if alive(p)]


@pytest.mark.parametrize("killed", ["grader", "grader-whose-fork-holds-the-control-socket", "helper"])
def test_a_grader_killed_leaves_no_helper_and_no_child_of_one(marker, tmp_path, killed):
    """Killed in the middle of a request: the helper and the child working on it end. Also when a
    fork of the grader (as a tool it forks would be) keeps the helper's control socket open, so that
    the helper never reads its end: it sees its grader gone. And a helper killed (out of memory, by
    an operator) takes its children with it."""
    socket_held = killed == "grader-whose-fork-holds-the-control-socket"
    started = tmp_path / "started"
    run = grader(marker, f"""
        import os, threading, time, toy_helper
        threading.Thread(target=lambda: toy_helper.SELF.run("sleep", [60, {str(started)!r}], toy_helper.LIMITS),
                         daemon=True).start()
        while not os.path.exists({str(started)!r}):
            time.sleep(0.05)
        if {socket_held!r} and os.fork() == 0:
            time.sleep(60)
            os._exit(0)
        print("ready", flush=True)
        time.sleep(120)
    """)
    line, servers = first_line(run, marker)
    assert line.strip() == "ready", run.stderr.read()[-3000:]
    assert len(servers) == 1, servers
    children = children_of(servers[0])
    assert children, "the request in flight has no child"
    if killed == "helper":
        os.kill(servers[0], signal.SIGKILL)
        assert not ended(children), "a helper's child outlived it"
        assert run.poll() is None
        return
    run.send_signal(signal.SIGKILL)
    run.wait()
    assert not ended([*servers, *children]), "a helper or its child outlived its grader"


def test_a_process_a_helpers_child_starts_cannot_start_a_helper(marker):
    run = grader(marker, """
        import toy_helper
        print(repr(toy_helper.SELF.run("started_elsewhere", [], toy_helper.LIMITS).value), flush=True)
    """)
    out, err = run.communicate(timeout=120)
    assert "never starts a helper" in out, (out, err[-3000:])
    assert "started" not in out.replace("starts", "")
