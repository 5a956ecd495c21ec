"""What a student sees of a hidden check is decided once (CheckResult.for_student) and every
output renders that: the terminal, the Markdown and HTML feedback, Gradescope's results.json, the
nbgrader cell's report and the pytest plugin's failure text."""

from __future__ import annotations

import dataclasses
import io
import json

import pytest
from rich.console import Console

from autograder.nbgrader.cells import report_lines
from autograder.reports.feedback import feedback_markdown
from autograder.reports.feedback_html import feedback_html
from autograder.reports.gradescope import to_gradescope
from autograder.reports.table import print_report
from autograder.results import HIDDEN_CHECK_NOTE, CheckResult, ExerciseResult, SubmissionResult

pytestmark = pytest.mark.quick

SECRET = "entry [3, 1] is 0.7712 where 0.2288 was expected"
HINT = "Try inputs whose rows have very different scales."


def _result() -> SubmissionResult:
    visible = CheckResult("attention.softmax.rows", "attention", "rows sum to one", "passed", 2.0, 2.0)
    hidden = CheckResult("attention.softmax.large", "attention", "large inputs", "failed", 0.0, 1.0,
                         message=SECRET, hint=HINT, misconceptions=("softmax_no_max_shift",), hidden=True,
                         visual={"kind": "weights", "student": [[0.5, 0.5]], "expected": [[0.2, 0.8]]})
    missing = CheckResult("attention.softmax.huge", "attention", "huge inputs", "missing", 0.0, 1.0,
                          message="attention.py has no function named softmax", hidden=True, reason="missing")
    exercise = ExerciseResult("attention", "Attention", (visible, hidden, missing), graded_file="attention.py")
    return SubmissionResult("zoe", (exercise,), seed=1)


def _outputs(course) -> dict[str, str]:
    result = _result()
    console = Console(file=io.StringIO(), width=200, force_terminal=False)
    print_report(result, console, show_hidden=course.show_hidden)
    return {
        "terminal": console.file.getvalue(),
        "markdown": feedback_markdown(result, course),
        "html": feedback_html(result, course),
        "gradescope": json.dumps(to_gradescope(result, show_hidden=course.show_hidden)),
        "nbgrader cell": "\n".join(report_lines(result.checks, course)),
    }


def test_a_hidden_checks_message_reaches_no_output(course):
    for where, text in _outputs(course).items():
        assert "0.7712" not in text, where
        assert HIDDEN_CHECK_NOTE in text, where
        assert "large inputs" in text, where            # its title is shown
        assert "very different scales" in text, where   # and the hint made for it


def test_a_hidden_checks_missing_function_is_said_as_it_is(course):
    """That a function is missing tells nothing of a hidden check's inputs."""
    for where, text in _outputs(course).items():
        assert "no function named softmax" in text, where


def test_with_show_hidden_every_output_shows_the_message(course):
    shown = dataclasses.replace(course, show_hidden=True)
    for where, text in _outputs(shown).items():
        assert "0.7712" in text, where


def test_the_student_view_keeps_the_cause_but_not_the_evidence():
    hidden = _result().checks[1]
    view = hidden.for_student(show_hidden=False)
    assert view.concealed and view.message == HIDDEN_CHECK_NOTE and view.visual is None
    assert view.misconceptions == hidden.misconceptions   # still told with the same mistake's checks
    assert (view.score, view.max_score, view.status, view.hint) == (hidden.score, hidden.max_score, hidden.status,
                                                                     hidden.hint)
    assert hidden.for_student(show_hidden=True) is hidden
    visible = _result().checks[0]
    assert visible.for_student(show_hidden=False) == visible
