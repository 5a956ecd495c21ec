"""From a zygote's second child on, the sandbox forks the next child while the last one works
(autograder/sandbox/ahead.py): the next session starts in it, and a child forked
ahead that died meanwhile is replaced, never used (issue 23.1)."""

from __future__ import annotations

import os
import signal
import time

from autograder.sandbox import Sandbox

SOURCE = "import os\n\ndef pid():\n    return os.getpid()\n"


def _session_child(sandbox: Sandbox):
    """The pid of the child the next session runs in, as the grader knows it, and the session's answer."""
    with sandbox.session("attention", SOURCE, "attention.py") as s:
        pid = s._child.pid
        answer = s.call("pid", returns="array")
    return pid, answer


def test_the_next_session_runs_in_the_child_forked_ahead(course):
    with Sandbox(course.limits) as sandbox:
        first, _ = _session_child(sandbox)
        assert not sandbox._ahead.waiting               # a zygote's first child forks nothing ahead
        second, answer = _session_child(sandbox)
        assert answer.status == "ok", answer
        (ahead,) = sandbox._ahead.waiting.values()      # forked while the second one worked
        third, answer = _session_child(sandbox)
        assert answer.status == "ok", answer
        assert len({first, second, third}) == 3
        assert third == ahead.pid
    assert not sandbox._ahead.waiting                   # closed with the sandbox


def test_a_child_forked_ahead_that_died_is_not_used(course):
    with Sandbox(course.limits) as sandbox:
        _session_child(sandbox)
        _session_child(sandbox)
        (ahead,) = sandbox._ahead.waiting.values()
        os.kill(ahead.pid, signal.SIGKILL)
        time.sleep(0.5)                                 # the zygote reaps it and says so
        pid, answer = _session_child(sandbox)
        assert answer.status == "ok", answer
        assert pid != ahead.pid
