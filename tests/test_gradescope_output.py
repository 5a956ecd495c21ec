"""Gradescope's outputs read as the feedback page reads: Markdown (`output_format`
"md"), code in a hint as code instead of literal backticks, and whatever came from the submission
(its error text, its file names) shown as typed, never as Markdown or HTML."""

from __future__ import annotations

import re

import markdown_it

from autograder.reports.gradescope import to_gradescope
from autograder.results import CheckResult, ExerciseResult, SubmissionResult

HINT = "The mask was applied after the softmax: fill `scores[mask == 0]` with a large negative number first."
MESSAGE = "softmax raised ValueError: `axis` 3 is out of bounds <script>alert(1)</script> **not bold**"


def _result(note: str = "") -> SubmissionResult:
    wrong = CheckResult("attention.softmax.rows", "attention", "rows sum to 1", "error", 0.0, 1.0, MESSAGE, HINT,
                        ("mask_after_softmax",), reason="raised")
    right = CheckResult("attention.softmax.axis", "attention", "another axis", "passed", 1.0, 1.0)
    return SubmissionResult("sam", (ExerciseResult("attention", "Attention", (wrong, right), note=note),), seed=7)


def _html(text: str) -> str:
    return markdown_it.MarkdownIt("commonmark").render(text)


def test_outputs_are_markdown_with_code_as_code():
    data = to_gradescope(_result())
    assert data["output_format"] == data["test_output_format"] == "md"
    wrong = data["tests"][0]
    assert wrong["output_format"] == "md"
    page = _html(wrong["output"])
    assert "<code>scores[mask == 0]</code>" in page and "`scores" not in page     # the hint's code, as code
    assert "<strong>Hint:</strong>" in page


def test_what_the_submission_said_is_shown_as_typed():
    page = _html(to_gradescope(_result())["tests"][0]["output"])
    assert "<script>" not in page and "<strong>not bold</strong>" not in page
    block = re.search(r"<pre><code[^>]*>(.*?)</code></pre>", page, re.S).group(1)
    assert block.strip() == MESSAGE.replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;")


def test_notes_about_the_files_are_escaped_paragraphs():
    data = to_gradescope(_result(note="*Attention*.py was graded as attention.py"))
    page = _html(data["output"])
    assert "<em>" not in page and "*Attention*.py was graded as attention.py" in page
    assert page.count("<p>") == 2                                                   # the seed, the note
