"""One mistake, one hint, one picture: a softmax on the wrong axis fails 8 checks of attention;
the student reads its hint once, not once per check, with the checks it explains listed under it,
in the terminal, the Markdown and HTML feedback and Gradescope's output."""

from __future__ import annotations

import io
import re
import shutil

import pytest
from rich.console import Console

from autograder.checks import check_ids
from autograder.config import DEFAULT_COURSE, KIT_ROOT, load_course
from autograder.reports.feedback import feedback_markdown
from autograder.reports.feedback_html import feedback_html
from autograder.reports.gradescope import to_gradescope
from autograder.reports.table import print_report
from autograder.reports.causes import causes
from autograder.grading.course_session import GradingSession

WRONG_AXIS = KIT_ROOT / "tests" / "corpus" / "attention" / "buggy" / "softmax_wrong_axis.py"


@pytest.fixture(scope="module")
def graded(tmp_path_factory):
    folder = tmp_path_factory.mktemp("wrong-axis")
    shutil.copy(WRONG_AXIS, folder / "attention.py")
    course = load_course(DEFAULT_COURSE, known_checks=check_ids())
    with GradingSession(course).start() as session:
        result = session.grade(folder, stems=("attention",), student="sam")
    return result, course


def _hint(result) -> str:
    named = [c for c in result.checks if "softmax_wrong_axis" in c.misconceptions]
    assert len(named) >= 6, [c.check_id for c in result.checks if not c.passed]
    return named[0].hint.split(". ")[0]        # its first sentence, as every renderer prints it


def test_the_failed_checks_have_one_cause(graded):
    result, _ = graded
    found = causes(result.exercise("attention").checks)
    big = [c for c in found if "softmax_wrong_axis" in c.first.misconceptions]
    assert len(big) == 1 and len(big[0].checks) >= 6


def test_the_terminal_tells_the_hint_once(graded):
    result, course = graded
    out = io.StringIO()
    print_report(result, Console(file=out, width=200, color_system=None), show_hidden=course.show_hidden)
    text = out.getvalue()
    assert text.count(_hint(result)) == 1, text
    assert re.search(r"1 mistake -> \d+ checks", text)


def test_the_feedback_pages_tell_it_once_with_one_picture(graded):
    result, course = graded
    markdown = feedback_markdown(result, course)
    assert markdown.count(_hint(result)) == 1 and "The checks it explains:" in markdown
    html = feedback_html(result, course)
    assert html.count("<svg") <= len(causes(result.exercise("attention").checks))


def test_gradescope_gives_the_hint_once(graded):
    result, course = graded
    outputs = [t["output"] for t in to_gradescope(result, show_hidden=course.show_hidden)["tests"]]
    assert sum(o.count(_hint(result)) for o in outputs) == 1
    assert sum("The same cause as" in o for o in outputs) >= 5
