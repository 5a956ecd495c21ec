"""A check run beside the others (alongside.py): where a student waits, the scaling figure's call
goes to a second child of the same file before the experiment's calls start, and the hidden run
with other dims after it, once the figure's answer is read. The grades must be exactly those of
the ordinary path, for right, wrong, raising and broken files alike."""

from __future__ import annotations

import textwrap
import time
from pathlib import Path

import numpy as np
import pytest

from autograder.grading.alongside import first_call
from autograder.checks import CHECKS
from autograder.config import KIT_ROOT
from autograder.grading.submission import grade_submission
from autograder.sandbox import Limits, Reason, Sandbox

FIGURE = "scaling.plot_scaling.figure"
LIMITS = Limits(call_timeout=1.0, import_timeout=2.0, memory_mb=512, cpu_seconds=20, max_processes=64,
                output_kb=256)

EXPERIMENT = (KIT_ROOT / "solutions" / "scaling.py").read_text().split("def plot_scaling")[0]

FIGURES = {
    "right": None,                     # the solution's own figure
    "unlabelled": """
        def plot_scaling(results):
            d = sorted(results)
            fig, ax = plt.subplots()
            ax.plot(d, [results[k]["std_unscaled"] for k in d]); ax.plot(d, [results[k]["std_scaled"] for k in d])
            return fig
    """,
    "raises": """
        def plot_scaling(results):
            return results[999]["std_scaled"]
    """,
    "returns_none": """
        def plot_scaling(results):
            plt.plot(sorted(results), [1, 2, 3, 4])
    """,
    "exits": """
        def plot_scaling(results):
            import os
            os._exit(3)
    """,
    "uses_provided": """
        from attention import softmax

        def plot_scaling(results):
            d = sorted(results)
            w = softmax(np.array([[1.0, 2.0]]))          # answered by the grader while the call is ahead
            fig, ax = plt.subplots()
            ax.plot(d, [results[k]["std_unscaled"] for k in d], label=f"unscaled {w[0, 0]:.2f}")
            ax.plot(d, [results[k]["std_scaled"] for k in d], label="scaled")
            ax.set_xlabel("d"); ax.set_ylabel("std"); ax.legend()
            return fig
    """,
    "import_fails": """
        raise RuntimeError("this file cannot be imported")
    """,
}


def _folder(tmp_path: Path, name: str) -> Path:
    folder = tmp_path / name
    folder.mkdir()
    figure = FIGURES[name]
    text = (KIT_ROOT / "solutions" / "scaling.py").read_text() if figure is None \
        else EXPERIMENT + textwrap.dedent(figure)
    (folder / "scaling.py").write_text(text)
    return folder


def _graded(course, folder: Path, ahead: bool):
    with Sandbox(course.limits) as sandbox:
        sandbox.interactive = ahead
        spawned = []
        begin = sandbox.begin_spawn
        sandbox.begin_spawn = lambda *a, **k: spawned.append(a[0]) or begin(*a, **k)
        ex = grade_submission(folder, course, sandbox, stems=("scaling",)).exercise("scaling")
    return [(c.check_id, c.status, c.score, c.message, c.hint, c.misconceptions) for c in ex.checks], len(spawned)


@pytest.mark.parametrize("name", sorted(FIGURES))
def test_a_figure_run_beside_the_others_grades_as_the_ordinary_path_does(course, tmp_path, name):
    beside, children = _graded(course, _folder(tmp_path, name), ahead=True)
    ordinary, alone = _graded(course, tmp_path / name, ahead=False)
    assert beside == ordinary
    # the second child was used, not only opened; alone, a figure that ends its child costs a new one
    # for the hidden check graded after the visible ones (grading.submission._visible_first)
    assert (children, alone) == (2, 2 if name == "exits" else 1)
    figure = next(r for r in beside if r[0] == FIGURE)
    assert (figure[1] == "passed") is (name in ("right", "uses_provided")), figure


@pytest.mark.speedup("alongside")
def test_the_hidden_run_with_other_dims_is_made_beside_after_the_figure(course, tmp_path, monkeypatch):
    """Both alongside checks' first calls go to the second child, the visible figure's first; the
    main child makes neither."""
    from autograder.checks.scaling import OTHER
    from autograder.sandbox.session import Session

    asked = []
    call, ahead = Session.call, Session.call_ahead
    monkeypatch.setattr(Session, "call", lambda self, fn, args=(), kwargs=None, **k: asked.append(
        ("main", fn, (kwargs or {}).get("dims"))) or call(self, fn, args, kwargs, **k))
    monkeypatch.setattr(Session, "call_ahead", lambda self, fn, args=(), kwargs=None, **k: asked.append(
        ("beside", fn, (kwargs or {}).get("dims"))) or ahead(self, fn, args, kwargs, **k))
    graded, _ = _graded(course, _folder(tmp_path, "right"), ahead=True)
    assert all(status == "passed" for _, status, *_ in graded), graded
    beside = [(fn, dims) for where, fn, dims in asked if where == "beside"]
    assert beside == [("plot_scaling", None), ("scaling_experiment", OTHER["dims"])]
    assert ("main", "scaling_experiment", OTHER["dims"]) not in asked
    assert ("main", "plot_scaling", None) not in asked


def test_the_first_call_of_a_check_is_learnt_without_making_it():
    figure = next(c for c in CHECKS["scaling"] if c.id == FIGURE)
    results = {4: {}}
    assert first_call(figure, {"results": results}) == ("plot_scaling", (results,), {})
    constant = next(c for c in CHECKS["hand_computation"])    # reads an attribute: not a call
    assert first_call(constant, constant.inputs(np.random.default_rng(0))) is None


SLOW = """
import time

def f(x):
    return x * 2

def spin(x):
    while True:
        pass

def nap(x):
    time.sleep(0.6)
    return x
"""


@pytest.mark.speedup("calls_ahead")
def test_a_call_sent_ahead_is_read_once_and_only_for_its_own_arguments(sandbox):
    with sandbox.session("attention", SLOW, "attention.py", deferred=True) as s:
        assert s.call_ahead("f", [np.arange(3.0)])
        assert s.call_ahead("f", [np.arange(4.0)])              # queued behind the first, not sent yet
        assert len(s._queued) == 1
        assert s.collect("f", [np.arange(5.0)]) is None          # other arguments: not a call ahead
        got = s.collect("f", [np.arange(4.0)])                   # the first is read and kept, then this one
        assert got.status == "ok" and np.array_equal(got.value, [0.0, 2.0, 4.0, 6.0])
        got = s.collect("f", [np.arange(3.0)])
        assert got.status == "ok" and np.array_equal(got.value, [0.0, 2.0, 4.0])
        assert s.collect("f", [np.arange(3.0)]) is None          # read once
        assert s.call("f", [np.ones(2)]).status == "ok"          # the child goes on serving


@pytest.mark.speedup("calls_ahead")
def test_a_call_queued_ahead_is_sent_only_once_the_one_before_is_answered(sandbox):
    """A child never holds a call before it has answered the ones before it: a hidden check's
    inputs never reach a child that still owes a visible check its answer (alongside.py)."""
    with sandbox.session("attention", SLOW, "attention.py", deferred=True) as s:
        assert s.call_ahead("nap", [np.ones(2)])
        assert s.call_ahead("f", [np.ones(2)])
        s.poll_ahead()                                           # nap still sleeping: nothing read
        assert s._ahead[0] == "nap" and len(s._queued) == 1
        deadline = time.monotonic() + 10
        while s._ahead[0] == "nap" and time.monotonic() < deadline:
            time.sleep(0.05)
            s.poll_ahead()                                       # read once it has arrived, f sent then
        assert s._ahead[0] == "f" and not s._queued
        assert s.collect("nap", [np.ones(2)]).status == "ok"
        assert s.collect("f", [np.ones(2)]).status == "ok"


@pytest.mark.speedup("calls_ahead")
def test_a_call_ahead_is_read_while_the_grader_waits_for_another_child(sandbox):
    """The second child's answer is read when it comes, during a wait for the first child, and the
    call queued behind it sent then: it works while the first child does (not once the check that
    asked for it is graded)."""
    with sandbox.session("attention", SLOW, "attention.py", deferred=True) as beside, \
            sandbox.session("attention", SLOW, "attention.py") as main:
        assert beside.call_ahead("f", [np.ones(2)])
        assert beside.call_ahead("f", [np.arange(3.0)])          # queued: sent once the first is read
        assert main.call("nap", [np.ones(2)]).status == "ok"     # 0.6 s: f answers meanwhile
        assert not beside._queued                                # the first read, the second sent (and read)
        assert np.array_equal(beside.collect("f", [np.ones(2)]).value, [2.0, 2.0])
        assert np.array_equal(beside.collect("f", [np.arange(3.0)]).value, [0.0, 2.0, 4.0])


@pytest.mark.speedup("calls_ahead")
def test_a_child_beside_that_dies_while_another_is_awaited_costs_that_one_nothing(sandbox):
    with sandbox.session("attention", SLOW + "\ndef bye(x):\n    import os\n    os._exit(3)\n",
                         "attention.py", deferred=True) as beside, \
            sandbox.session("attention", SLOW, "attention.py") as main:
        assert beside.call_ahead("bye", [np.ones(2)])
        assert beside.call_ahead("f", [np.ones(2)])
        got = main.call("nap", [np.ones(2)])
        assert got.status == "ok" and np.array_equal(got.value, [1.0, 1.0]), got
        assert main.restarts == 0                                # its child answered, undisturbed
        died = beside.collect("bye", [np.ones(2)])
        assert (died.status, died.reason) == ("crashed", Reason.EXIT) and "code 3" in died.message, died
        assert beside.collect("f", [np.ones(2)]) is None         # left to its caller, as before


def test_the_time_spent_reading_a_child_beside_is_not_the_awaited_request_s():
    """Reading the second child's answer may wait for the rest of it (its provided calls answered
    meanwhile): that wall time is not held against the request the grader was waiting for."""
    from autograder.sandbox.exchange import Deadline

    class Sleeping:                      # a child that has used no CPU: only the wall rules can end it
        def cpu_seconds(self) -> float:
            return 0.0

    waited = Deadline(Sleeping(), 0.2, Limits(), None)
    time.sleep(0.6)
    assert waited.expired() == "wall"    # 0.6 s idle against a 0.2 s limit
    aside = Deadline(Sleeping(), 0.2, Limits(), None)
    aside.aside(lambda: time.sleep(0.6))
    assert aside.expired() is None       # the same 0.6 s, spent reading another child


@pytest.mark.speedup("calls_ahead")
def test_calls_queued_behind_one_that_ends_its_child_are_left_to_their_callers(sandbox):
    with sandbox.session("attention", SLOW + "\ndef bye(x):\n    import os\n    os._exit(3)\n",
                         "attention.py", deferred=True) as s:
        assert s.call_ahead("bye", [np.ones(2)])
        assert s.call_ahead("f", [np.ones(2)])
        assert s.collect("bye", [np.ones(2)]).status == "crashed"
        assert s.collect("f", [np.ones(2)]) is None              # not sent to a restarted child
        assert s.call("f", [np.ones(2)]).status == "ok"          # the caller makes it, in a fresh child


@pytest.mark.speedup("calls_ahead")
def test_a_call_ahead_that_never_returns_times_out_from_when_it_is_read(sandbox):
    with sandbox.session("attention", SLOW, "attention.py", deferred=True) as s:
        assert s.call_ahead("spin", [np.ones(2)])
        got = s.collect("spin", [np.ones(2)])
        assert got.status == "timeout", got
        assert s.call("spin", [np.ones(2)]).message.startswith("not run again")


@pytest.mark.speedup("calls_ahead")
def test_waiting_elsewhere_does_not_count_against_a_call_ahead(sandbox):
    """The grader may read the answer long after the call finished: wall time it spent on other
    checks is not the child's."""
    import time

    with sandbox.session("attention", SLOW, "attention.py", deferred=True) as s:
        assert s.call_ahead("nap", [np.ones(2)])
        time.sleep(1.5)                                          # longer than the 1 s call limit
        assert s.collect("nap", [np.ones(2)]).status == "ok"


def test_a_file_that_cannot_be_imported_sends_nothing_ahead(sandbox):
    with sandbox.session("attention", "raise ValueError('no')\n", "attention.py", deferred=True) as s:
        assert not s.call_ahead("f", [np.ones(2)])
        assert s.import_outcome.status == "not_run" and "ValueError" in s.import_outcome.message


def test_a_deferred_import_never_waited_for_is_stopped_when_the_session_closes(sandbox):
    """The main file failed to import, so the second child was never used: it must not live on."""
    import time

    with sandbox.session("attention", "import time\ntime.sleep(60)\n", "attention.py", deferred=True) as s:
        pid = s._starting.child.pid
    for _ in range(100):
        try:
            with open(f"/proc/{pid}/stat") as f:
                if f.read().rsplit(")", 1)[1].split()[0] in ("Z", "X"):
                    break
        except (FileNotFoundError, ProcessLookupError):     # gone between the open and the read too
            break
        time.sleep(0.02)
    else:
        raise AssertionError(f"the child {pid} of an unused deferred session is still running")
