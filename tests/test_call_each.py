"""Calls made together. One function called anew with several arguments in one request
(Session.call_each): the scaling checks' many small runs; the outcomes are those of the calls
made one after another, up to the first that does not answer; a child's malformed answer is
refused."""

from __future__ import annotations

import textwrap

import pytest

from autograder.sandbox import Limits, Sandbox
from autograder.sandbox.inside import protocol
from autograder.sandbox.session import _one_answer_each

# The wall backstop far off: a hang starved by a loaded machine still meets its CPU limit first.
LIMITS = Limits(call_timeout=1.0, import_timeout=5.0, memory_mb=512, cpu_seconds=20, max_processes=64,
                output_kb=256, wall_factor=30)

COUNTING = textwrap.dedent("""
    import os
    import numpy as np

    made = []

    def twice(x):
        made.append(x)
        if x == 3:
            raise ValueError("three is not allowed")
        if x == 5:
            while True:
                pass
        if x == 6:
            os._exit(0)
        print("called with", x)
        return np.array([2.0 * x])

    def half(x):
        made.append(-x)
        return np.array([x / 2.0])

    def calls_made():
        return np.array(made, dtype=float)

    not_a_function = 7
""")


@pytest.fixture(scope="module")
def sandbox():
    with Sandbox(LIMITS) as box:
        yield box


def _each(session, xs):
    return session.call_each("twice", [{"x": x} for x in xs], returns="array")


def test_every_call_answers_in_order_as_separate_calls_do(sandbox):
    with sandbox.session("attention", COUNTING, "attention.py") as s:
        together = _each(s, [1, 2, 4])
        apart = [s.call("twice", [], {"x": x}, returns="array") for x in (1, 2, 4)]
        assert [o.status for o in together] == ["ok"] * 3
        assert [o.value.tolist() for o in together] == [o.value.tolist() for o in apart] == [[2.0], [4.0], [8.0]]
        assert s.call("calls_made", [], {}, returns="array").value.tolist() == [1, 2, 4, 1, 2, 4]
        assert "called with 4" in together[-1].output and together[0].output == ""


def test_the_calls_stop_at_the_first_that_raises(sandbox):
    with sandbox.session("attention", COUNTING, "attention.py") as s:
        outcomes = _each(s, [1, 3, 4])
        assert [o.status for o in outcomes] == ["ok", "raised"]
        assert "three is not allowed" in outcomes[1].message and outcomes[1].error.type == "ValueError"
        assert s.call("calls_made", [], {}, returns="array").value.tolist() == [1, 3]   # 4 never called


def test_a_missing_function_and_a_value_that_is_not_one(sandbox):
    with sandbox.session("attention", COUNTING, "attention.py") as s:
        (missing,) = s.call_each("nothing_here", [{"x": 1}, {"x": 2}], returns="array")
        assert missing.status == "missing" and "defines no function nothing_here" in missing.message
        (not_callable,) = s.call_each("not_a_function", [{"x": 1}], returns="array")
        assert not_callable.status == "missing" and "not a function" in not_callable.message


def test_a_call_that_hangs_stops_the_request_and_is_not_made_again(sandbox):
    with sandbox.session("attention", COUNTING, "attention.py") as s:
        (hung,) = _each(s, [1, 5, 2])
        assert hung.status == "timeout"
        (again,) = _each(s, [1])
        assert again.status == "timeout" and "not run again" in again.message
        assert s.call("calls_made", [], {}, returns="array").value.tolist() == []    # a fresh child


@pytest.mark.parametrize("answers, values, asked, ok", [
    ([{"status": "ok"}] * 3, [1, 2, 3], 3, True),
    ([{"status": "ok"}, {"status": "raised"}], [1, None], 3, True),
    ([{"status": "ok"}] * 2, [1, 2], 3, False),          # stopped early without a failure
    ([{"status": "raised"}, {"status": "ok"}], [None, 2], 3, False),   # went on after a failure
    ([{"status": "ok"}] * 4, [1, 2, 3, 4], 3, False),     # more answers than calls
    ([{"status": "ok"}] * 3, [1, 2], 3, False),           # a value missing
    ([], [], 3, False),
    (["ok", "ok", "ok"], [1, 2, 3], 3, False),
    ({"0": {"status": "ok"}}, [1], 1, False),
])
def test_the_form_of_an_answer_is_checked(answers, values, asked, ok):
    assert _one_answer_each({"status": "calls"}, answers, values, asked) is ok
    assert _one_answer_each({"status": "ok"}, answers, values, asked) is False


def test_a_forged_answer_is_refused_and_its_child_killed(sandbox):
    """The student's code writes an answer of its own on the session socket (fd 3): one "ok" for two
    calls, with the sequence number the grader will use."""
    forged = protocol.message({"status": "calls", "answers": [{"status": "ok", "dtype": "float64"}], "seq": 1},
                              {"value": [[1.0]]})
    source = textwrap.dedent(f"""
        import os
        import numpy as np

        def twice(x):
            os.write(3, {forged!r})
            while True:
                pass
    """)
    with sandbox.session("attention", source, "attention.py") as s:
        (refused,) = _each(s, [1, 2])
        assert refused.status == "bad_return" and "not one answer per call" in refused.message
        assert not s._child.alive
