"""From a zygote's second child on, the sandbox forks the next child while the last one works
(autograder/sandbox/ahead.py): the next session starts in it, and a child forked
ahead that died meanwhile is replaced, never used."""

from __future__ import annotations

import os
import signal
import time

import pytest

from autograder.sandbox import Sandbox

SOURCE = "import os\n\ndef pid():\n    return os.getpid()\n"


def _session_child(sandbox: Sandbox):
    """The pid of the child the next session runs in, as the grader knows it, and the session's answer."""
    with sandbox.session("attention", SOURCE, "attention.py") as s:
        pid = s._child.pid
        answer = s.call("pid", returns="array")
    return pid, answer


@pytest.mark.speedup("fork_ahead")
def test_the_next_session_runs_in_the_child_forked_ahead(course):
    with Sandbox(course.limits) as sandbox:
        first, _ = _session_child(sandbox)
        assert not sandbox._ahead.waiting               # a zygote's first child forks nothing ahead
        second, answer = _session_child(sandbox)
        assert answer.status == "ok", answer
        ((ahead,),) = sandbox._ahead.waiting.values()   # forked while the second one worked
        third, answer = _session_child(sandbox)
        assert answer.status == "ok", answer
        assert len({first, second, third}) == 3
        assert third == ahead.pid
    assert not sandbox._ahead.waiting                   # closed with the sandbox


@pytest.mark.speedup("fork_ahead")
def test_a_child_forked_ahead_that_died_is_not_used(course):
    with Sandbox(course.limits) as sandbox:
        _session_child(sandbox)
        _session_child(sandbox)
        ((ahead,),) = sandbox._ahead.waiting.values()
        os.kill(ahead.pid, signal.SIGKILL)
        time.sleep(0.5)                                 # the zygote reaps it and says so
        pid, answer = _session_child(sandbox)
        assert answer.status == "ok", answer
        assert pid != ahead.pid


def _waiting(sandbox: Sandbox) -> list[int]:
    return [c.pid for children in sandbox._ahead.waiting.values() for c in children]


@pytest.mark.speedup("fork_ahead")
def test_topped_up_between_gradings_no_child_is_forked_while_one_runs(course):
    """A watcher forks the next re-grade's children while the student edits (`fork_ahead_when_idle`):
    as many as the last grading took, and then none during a grading."""
    with Sandbox(course.limits) as sandbox:
        _session_child(sandbox)
        _session_child(sandbox)
        sandbox.fork_ahead_when_idle()        # the last round took two children of the numpy zygote
        ready = _waiting(sandbox)
        assert len(ready) == 2
        forked = []
        fork_now = sandbox._fork_now
        sandbox._fork_now = lambda z: forked.append(z) or fork_now(z)
        used = [_session_child(sandbox)[0], _session_child(sandbox)[0]]
        assert used == ready and not forked   # the grading ran in them and forked nothing itself
        assert not _waiting(sandbox)
        sandbox.fork_ahead_when_idle()
        assert len(_waiting(sandbox)) == 2 and len(forked) == 2
    assert not sandbox._ahead.waiting


@pytest.mark.speedup("fork_ahead")
def test_a_child_forked_ahead_is_jailed_before_its_first_frame(course):
    """Once in its cgroup (its gate opened by the zygote), a child forked ahead builds its jail and starts
    its worker, which waits for the file: the next session's import starts in a ready process."""
    with Sandbox(course.limits) as sandbox:
        _session_child(sandbox)
        _session_child(sandbox)
        ((ahead,),) = sandbox._ahead.waiting.values()
        deadline = time.monotonic() + 5
        while time.monotonic() < deadline and len(_descendants(ahead.pid)) < 1:
            time.sleep(0.01)     # the init forks its worker once it is in its cgroup
        if not sandbox.isolation.full:
            return
        # the child the zygote cloned is pid 1 of its namespace, and its worker (pid 2 there) is
        # started before any frame was sent
        (worker,) = _descendants(ahead.pid)
        assert _pid_inside(ahead.pid) == 1 and _pid_inside(worker) == 2
        pid, answer = _session_child(sandbox)
        assert pid == ahead.pid and answer.status == "ok", answer


def _pid_inside(pid: int) -> int:
    """The process's pid in its own (innermost) PID namespace."""
    with open(f"/proc/{pid}/status") as f:
        return int(next(line for line in f if line.startswith("NSpid:")).split()[-1])


def _descendants(pid: int) -> list[int]:
    found, todo = [], [pid]
    while todo:
        parent = todo.pop()
        try:
            with open(f"/proc/{parent}/task/{parent}/children") as f:
                kids = [int(k) for k in f.read().split()]
        except OSError:
            kids = []
        found += kids
        todo += kids
    return found


@pytest.mark.speedup("clone")
def test_a_zygote_that_cannot_clone_makes_each_child_through_a_monitor(course):
    """The fallback (another architecture, a zygote with a thread, a kernel that refuses the raw
    clone): a monitor forked per child unshares and forks the init, and the child is graded and
    isolated as a cloned one is, a worker's own signal reported as that signal."""
    source = ("import os, signal\nimport numpy as np\n"
              "def where():\n    return np.array([os.getpid(), os.getppid()])\n"
              "def die():\n    os.kill(os.getpid(), signal.SIGTERM)\n")
    for monitors in (False, True):
        with Sandbox(course.limits) as sandbox:
            sandbox.zygotes.monitors = monitors
            with sandbox.session("attention", source, "attention.py") as session:
                answer = session.call("where", [], {}, returns="array")
                child = session._child
                if not sandbox.isolation.full:
                    return
                assert answer.status == "ok" and list(answer.value) == [2, 1]     # the worker, under its init
                if monitors:     # monitor -> init (pid 1 inside) -> worker
                    (init,) = _descendants(child.pid)[:1]
                    assert child.worker == init != child.pid and _pid_inside(init) == 1
                else:            # the cloned init is the child itself
                    assert child.worker == child.pid and _pid_inside(child.pid) == 1
                    assert len(_descendants(child.pid)) == 1
                died = session.call("die", [], {}, returns="array")
                assert died.status == "crashed" and "signal 15" in died.message, died


def _in_group(child) -> bool:
    """Whether the child's first process and every process under it are listed in its cgroup."""
    listed = set(child.cgroup.pids())
    return bool(listed) and {child.pid, *_descendants(child.pid)} <= listed


def test_every_child_is_in_its_cgroup_before_its_worker_starts(course):
    """The zygote writes each new child into its cgroup before the child's gate opens: the worker
    the child forks is born there, for the first child of a zygote and for those forked ahead."""
    with Sandbox(course.limits) as sandbox:
        if sandbox.cgroups is None or not sandbox.isolation.full:
            return
        for _ in range(3):
            with sandbox.session("attention", SOURCE, "attention.py") as s:
                assert s.call("pid", returns="array").status == "ok"
                assert s._child.worker and _in_group(s._child)
        ((ahead,),) = sandbox._ahead.waiting.values()
        deadline = time.monotonic() + 5
        while time.monotonic() < deadline and not _descendants(ahead.pid):
            time.sleep(0.01)
        assert _in_group(ahead)


def test_where_the_zygote_cannot_place_a_child_the_grader_does(course, monkeypatch):
    """A move the kernel refuses to the zygote (a kernel that checks the writer, not the opener)
    leaves the child's gate shut: it runs nothing until the grader has placed it and said "go"."""
    from autograder.sandbox.cgroups import ChildCgroup

    # /dev/full refuses every write: the zygote's move fails as a refused one would
    monkeypatch.setattr(ChildCgroup, "procs_files", lambda self: [os.open("/dev/full", os.O_WRONLY)])
    with Sandbox(course.limits) as sandbox:
        if sandbox.cgroups is None or not sandbox.isolation.full:
            return
        z = sandbox.zygotes.get((False, False))
        child = sandbox._fork_now(z)
        pid, placed = z.fork_answer(child.fork_request)
        assert placed is False
        time.sleep(0.3)
        assert not _descendants(pid)              # shut: no worker, no jail, nothing of its own
        child.fork_request = None                 # answered above: now as _settle does with it
        child.pid = pid
        assert child.cgroup.add(pid)
        z.go(pid)
        deadline = time.monotonic() + 5
        while time.monotonic() < deadline and not _descendants(pid):
            time.sleep(0.01)
        assert _descendants(pid) and _in_group(child)
        sandbox.discard(child)
        with sandbox.session("attention", SOURCE, "attention.py") as s:   # _settle's own fallback
            assert s.call("pid", returns="array").status == "ok"
            assert _in_group(s._child)


def test_a_fork_that_failed_is_asked_for_once_more_then_said(course, monkeypatch):
    """The grader reads the zygote's answer to a fork only when it needs it: a fork that failed
    (no memory, no pids left) shows at the import's answer, and the child is asked for once more,
    as a failed fork always was; twice failed, the import says the sandbox could not start it."""
    from autograder.sandbox.zygote_process import _Zygote, _ZygoteDied

    answer = _Zygote.fork_answer
    for failures, status in ((1, "ok"), (2, "crashed")):
        left = [failures]

        def failing(self, request, timeout=30.0):
            if left[0] and timeout > 0:
                left[0] -= 1
                answer(self, request, timeout)        # the child exists; as far as the grader knows, not
                raise _ZygoteDied("fork failed: [Errno 11] Resource temporarily unavailable")
            return answer(self, request, timeout)

        monkeypatch.setattr(_Zygote, "fork_answer", failing)
        with Sandbox(course.limits) as sandbox:
            with sandbox.session("attention", SOURCE, "attention.py") as s:
                outcome = s.import_outcome
                assert outcome.status == ("ok" if status == "ok" else "not_run"), outcome
                if status == "ok":
                    assert s.call("pid", returns="array").status == "ok"
                else:
                    assert "the sandbox could not start a process (fork failed" in outcome.message, outcome
                    assert outcome.reason == "sandbox"
