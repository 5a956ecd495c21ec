"""A submission's next stem starts importing in its own child while the grader checks the current
one (Sandbox.open_ahead, autograder/sandbox/ahead.py SessionsAhead; grade_submission opens each
stem one ahead): the session asked for later is that child, only for the same file, and every
session nobody asked for is closed (so the cores stay busy and a check answers sooner)."""

from __future__ import annotations

import dataclasses
import os
import shutil
import time
from pathlib import Path

import pytest

from autograder.grading.submission import grade_submission
from autograder.sandbox import Sandbox

SOLUTIONS = Path(__file__).resolve().parent.parent / "solutions"

# Imported: the time it was imported at. `slow()`: the time it returns at, after a second's wait
# (room for a child opened ahead to import its file even on a crowded machine).
STARTED = "import time\nSTARTED = time.time()\n\ndef started():\n    return STARTED\n"
SLOW = "import time\n\ndef slow():\n    time.sleep(1.0)\n    return time.time()\n"


def _alive(pid: int) -> bool:
    try:
        with open(f"/proc/{pid}/stat", "rb") as f:
            return f.read().rsplit(b")", 1)[1].split()[0] != b"Z"
    except OSError:
        return False


def _warmed(sandbox: Sandbox) -> Sandbox:
    """The numpy zygote started and ready: a stem is opened ahead only on a warm zygote."""
    sandbox.isolation
    return sandbox


@pytest.mark.speedup("open_ahead")
def test_the_next_stem_imports_while_the_current_one_is_checked(course):
    with Sandbox(course.limits) as sandbox:
        _warmed(sandbox).open_ahead("causal_mask", STARTED, "causal_mask.py", {})
        with sandbox.session("attention", SLOW, "attention.py") as current:
            finished = current.call("slow", returns="array")
        with sandbox.session("causal_mask", STARTED, "causal_mask.py") as upcoming:
            imported = upcoming.call("started", returns="array")
        assert finished.status == imported.status == "ok", (finished, imported)
        # the order of two events on the machine's clock: the next file was imported before the
        # current call returned (opened only when asked for, it would be imported after)
        assert float(imported.value) < float(finished.value)


@pytest.mark.speedup("open_ahead")
def test_a_session_opened_ahead_for_other_contents_is_not_used(course):
    with Sandbox(course.limits) as sandbox:
        _warmed(sandbox).open_ahead("causal_mask", "def which():\n    return 1\n", "causal_mask.py", {})
        opened = sandbox._sessions_ahead._open["causal_mask"]
        with sandbox.session("causal_mask", "def which():\n    return 2\n", "causal_mask.py") as s:
            assert s is not opened
            assert s.call("which", returns="array").value == 2
        assert opened._closed and not sandbox._sessions_ahead._open


@pytest.mark.speedup("open_ahead")
def test_sessions_nobody_asked_for_are_closed(course):
    with Sandbox(course.limits) as sandbox:
        _warmed(sandbox).open_ahead("causal_mask", STARTED, "causal_mask.py", {})
        opened = sandbox._sessions_ahead._open["causal_mask"]
        opened.import_outcome                          # its child has imported the file
        pid = opened._child.pid
        sandbox.drop_ahead()
        assert opened._closed and not sandbox._sessions_ahead._open
        deadline = time.monotonic() + 5
        while _alive(pid) and time.monotonic() < deadline:
            time.sleep(0.05)
        assert not _alive(pid)


def test_a_graded_submission_leaves_no_session_open_and_grades_the_same(course, tmp_path):
    """One stem missing (nothing to open ahead for it), the others graded as without sessions
    opened ahead: the same scores, and nothing left open afterwards."""
    folder = tmp_path / "student"
    shutil.copytree(SOLUTIONS, folder, ignore=shutil.ignore_patterns("__pycache__", "causal_mask.py"))
    with Sandbox(course.limits) as sandbox:
        ahead = grade_submission(folder, course, sandbox)
        assert not sandbox._sessions_ahead._open
    with Sandbox(course.limits) as sandbox:
        sandbox.open_ahead = None                      # the sandbox as it was: each stem opened when asked
        plain = grade_submission(folder, course, sandbox)

    def scores(result):
        return [(e.stem, [(c.check_id, c.status, c.score) for c in e.checks]) for e in result.exercises]

    assert scores(ahead) == scores(plain)
    assert {e.stem: e.score for e in ahead.exercises}["causal_mask"] == 0
    assert os.path.isdir(folder)


@pytest.mark.speedup("open_ahead")
def test_a_stem_imported_ahead_is_not_timed_by_when_its_answer_is_read(course, tmp_path):
    """attention imports ahead, in a moment, while hand_computation's import sleeps until its
    3 s limit; attention's answer is read only then. It finished long before: it keeps its marks
    (judged by the wall clock at reading, it would 'not finish within 3 s' and lose them all)."""
    import dataclasses

    shutil.copy(SOLUTIONS / "attention.py", tmp_path / "attention.py")
    (tmp_path / "hand_computation.py").write_text("import time\nwhile True:\n    time.sleep(0.01)\n")
    course = dataclasses.replace(course, limits=dataclasses.replace(course.limits, import_timeout=3.0))
    with Sandbox(course.limits) as sandbox:
        result = grade_submission(tmp_path, course, _warmed(sandbox), stems=("hand_computation", "attention"))
    assert result.exercise("hand_computation").checks[0].reason == "timeout"
    attention = result.exercise("attention")
    assert attention.score == attention.max_score, [(c.check_id, c.message) for c in attention.checks]


@pytest.mark.speedup("open_ahead")
def test_a_stem_whose_zygote_is_still_warming_is_not_opened_ahead(course):
    """Opening it would wait for that zygote to be ready, and the stems before it, on a warm
    zygote, would be checked only after that wait: it is opened when its turn comes instead, and
    ahead once its zygote is ready."""
    plotting = "import matplotlib\n\ndef backend():\n    return 1\n"
    with Sandbox(course.limits) as sandbox:
        sandbox.prepare([plotting])                    # its zygote starts warming, nobody waits
        zygote = sandbox.zygotes.by_needs[(False, True)]
        sandbox.open_ahead("scaling", plotting, "scaling.py", {})
        assert not sandbox._sessions_ahead.holds("scaling")
        assert not zygote.ready                        # the call did not wait for it
        zygote.wait_ready(60)
        sandbox.open_ahead("scaling", plotting, "scaling.py", {})
        assert sandbox._sessions_ahead.holds("scaling")
        with sandbox.session("scaling", plotting, "scaling.py") as s:
            assert s.call("backend", returns="array").value == 1
