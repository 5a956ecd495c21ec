"""Pictures and words that say what they show: an output matrix is drawn as an
output (position by feature), weights as weights (query position by key position); code in the
kit's hints renders as code in the Markdown and HTML feedback while a student's text stays
escaped; a hidden check is described by one sentence, the same in every output."""

from __future__ import annotations

import dataclasses
import io
import re

import numpy as np
import pytest
from rich.console import Console

from autograder.checks import check_ids
from autograder.config import DEFAULT_COURSE, load_course
from autograder.nbgrader.cells import report_lines
from autograder.reports.feedback import feedback_markdown
from autograder.reports.feedback_html import feedback_html
from autograder.reports.gradescope import to_gradescope
from autograder.reports.pictures import picture_data, render
from autograder.reports.table import print_report
from autograder.results import HIDDEN_CHECK_NOTE, CheckResult, ExerciseResult, SubmissionResult

rng = np.random.default_rng(0)
OUTPUT = rng.normal(size=(2, 5, 12))                       # (batch, seq, d_model)
WEIGHTS = rng.dirichlet(np.ones(5), size=(2, 3, 5))       # (batch, heads, seq, seq)


@pytest.fixture(scope="module")
def course():
    return load_course(DEFAULT_COURSE, known_checks=check_ids())


def _labels(svg: str) -> list[str]:
    return re.findall(r">([^<>]+)</text>", svg)


# ---------------------------------------------------------------- pictures

@pytest.mark.parametrize("check_id, answer, expected, kind, shape", [
    # the multi-head output alone: an output, not weights
    ("multihead.multi_head_attention.output", OUTPUT, OUTPUT + 1, "output", (5, 12)),
    ("causal_mask.causal_attention.output", OUTPUT[0], OUTPUT[0] + 1, "output", (5, 12)),
    # (output, weights): the weights
    ("multihead.multi_head_attention.mask", (OUTPUT, WEIGHTS), (OUTPUT, WEIGHTS[::-1]), "weights", (5, 5)),
    ("multihead.multi_head_attention.weights", WEIGHTS, WEIGHTS[::-1], "weights", (5, 5)),
    ("attention.scaled_dot_product_attention.single", (OUTPUT[0], WEIGHTS[0, 0]), (OUTPUT[0], WEIGHTS[1, 0]),
     "weights", (5, 5)),
    # four parts, the weights third
    ("causal_mask.causal_attention.no_future", (OUTPUT[0], OUTPUT[0], WEIGHTS[0, 0], WEIGHTS[0, 1]),
     (OUTPUT[0], OUTPUT[0], WEIGHTS[1, 0], WEIGHTS[1, 1]), "weights", (5, 5)),
    # hand answers: the weights, said by no compare
    ("hand_computation.part_a.weights", WEIGHTS[0, 0, :3, :3], WEIGHTS[1, 0, :3, :3], "weights", (3, 3)),
])
def test_a_picture_draws_what_the_check_compares(check_id, answer, expected, kind, shape):
    visual = picture_data(check_id, answer, expected)
    assert visual["kind"] == kind
    assert np.array(visual["student"]).shape == shape
    labels = _labels(render(visual))
    if kind == "output":
        assert {"your output", "expected output", "position", "feature"} <= set(labels)
        assert not {"query position", "key position", "your weights"} & set(labels)
    else:
        assert {"your weights", "expected weights", "query position", "key position"} <= set(labels)


def test_an_output_of_either_sign_is_coloured_around_zero():
    """An output is not a probability: -2 and 2 get different colours (weights clip below 0)."""
    picture = render(picture_data("multihead.multi_head_attention.output", np.array([[[-2.0, 2.0]]]),
                                  np.array([[[2.0, -2.0]]])))
    fills = re.findall(r'<rect x="[^"]+" y="[^"]+" width="[^"]+" height="[^"]+" fill="(#[0-9a-f]{6})"', picture)
    assert len(set(fills[:2])) == 2
    assert "-2" in _labels(picture)                     # the colour bar's lowest value


# ---------------------------------------------------------------- Markdown

def _one_failed(hint: str, message: str, hidden: bool = False) -> SubmissionResult:
    check = CheckResult("scaling.scaling_experiment.seed", "scaling", "the seed decides the numbers", "failed",
                        0.0, 1.0, message=message, hint=hint, hidden=hidden)
    return SubmissionResult("sam", (ExerciseResult("scaling", "Scaling", (check,), graded_file="scaling.py"),), 7)


def test_code_in_a_hint_renders_as_code_and_a_message_stays_verbatim(course):
    hint = "Make one generator from `seed` inside the function, not <b>outside</b>."
    message = "got `rm -rf` and <script>x</script>"
    result = _one_failed(hint, message)
    markdown = feedback_markdown(result, course)
    assert "Hint: Make one generator from `seed` inside the function, not \\<b\\>outside\\</b\\>." in markdown
    page = feedback_html(result, course)
    assert "<code>seed</code>" in page and "`seed`" not in page
    assert "&lt;b&gt;outside&lt;/b&gt;" in page and "<b>outside" not in page
    # the message (student output) is a code block: its backticks and tags shown as typed
    assert "got `rm -rf` and &lt;script&gt;x&lt;/script&gt;" in page and "<script>" not in page


# ---------------------------------------------------------------- hidden checks

def test_every_output_says_the_same_of_a_hidden_check(course):
    result = _one_failed("A hidden check failed: try a seed of your own.", "secret value 0.123", hidden=True)
    terminal = io.StringIO()
    print_report(result, Console(file=terminal, width=200, color_system=None), show_hidden=False)
    said = {"terminal": terminal.getvalue(),
            "markdown": feedback_markdown(result, course),
            "html": feedback_html(result, course),
            "gradescope": "{name}\n{output}".format(**to_gradescope(result)["tests"][0]),
            "nbgrader cell": "\n".join(report_lines(result.checks, course))}
    for where, text in said.items():
        assert HIDDEN_CHECK_NOTE in text, where
        assert "secret value" not in text and "after grading" not in text, where
        assert "the seed decides the numbers" in text, where              # the title is shown
    shown = dataclasses.replace(course, show_hidden=True)
    assert "secret value" in feedback_markdown(result, shown) and HIDDEN_CHECK_NOTE not in \
        feedback_markdown(result, shown)


def test_a_count_of_one_is_said_in_the_singular():
    """A student who plots one line against d reads "found 1 line", not "1 lines" (one plural
    rule for every count: judge/words.py)."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    from autograder.judge.convert import describe_figure
    from autograder.judge.properties import figure_problems

    dims = [4, 16, 64]
    fig, ax = plt.subplots()
    ax.plot(dims, [1.0, 2.0, 4.0])           # one line, no label: what the student drew
    said = " ".join(figure_problems(describe_figure(fig), {d: {} for d in dims}))
    plt.close(fig)
    assert "found 1 line," in said and "1 lines" not in said, said
