"""How a child starts: forked by the zygote, placed in its cgroup before its worker runs, under
its own init (pid 1 of its namespaces); a fork that failed is asked for once more."""

from __future__ import annotations

import os
import time

from autograder.sandbox import Sandbox

SOURCE = "import os\n\ndef pid():\n    return os.getpid()\n"


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


def test_each_child_runs_under_its_own_init_and_its_signal_is_reported(course):
    """The zygote forks a monitor per child, which unshares and forks the init: the student's code
    runs as pid 2 under pid 1 of its own namespace, and a worker killed by a signal is reported as
    that signal."""
    source = ("import os, signal\nimport numpy as np\n"
              "def where():\n    return np.array([os.getpid(), os.getppid()])\n"
              "def die():\n    os.kill(os.getpid(), signal.SIGTERM)\n")
    with Sandbox(course.limits) as sandbox:
        with sandbox.session("attention", source, "attention.py") as session:
            answer = session.call("where", [], {}, returns="array")
            if not sandbox.isolation.full:
                return
            assert answer.status == "ok" and list(answer.value) == [2, 1]
            died = session.call("die", [], {}, returns="array")
            assert died.status == "crashed" and "signal 15" in died.message, died


def _in_group(child) -> bool:
    """Whether the child's first process and every process under it are listed in its cgroup."""
    listed = set(child.cgroup.pids())
    return bool(listed) and {child.pid, *_descendants(child.pid)} <= listed


def test_every_child_is_in_its_cgroup_before_its_worker_starts(course):
    """The zygote writes each new child into its cgroup before the child's gate opens: the worker
    the child forks is born there."""
    with Sandbox(course.limits) as sandbox:
        if sandbox.cgroups is None or not sandbox.isolation.full:
            return
        for _ in range(3):
            with sandbox.session("attention", SOURCE, "attention.py") as s:
                assert s.call("pid", returns="array").status == "ok"
                assert s._child.worker and _in_group(s._child)


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
        child = sandbox._fork(z)
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
