"""Every page reads as it should in a browser with no network: a hint's list is a list
on the HTML feedback page, the kit's maths reads as maths (√dₖ, not sqrt(d_k); nbgrader's notebook
maths drawn as MathML, not `$d_k$` waiting for MathJax), the report's descriptions show their
code as code, and its settings table shows the course's choices in the instructor's units with
the sandbox's own settings folded away. Checked in headless Chromium at 1400 and 800 px;
screenshots go to $ATTNKIT_SCREENSHOTS when it is set.
"""

from __future__ import annotations

import dataclasses
from pathlib import Path

import nbformat
import pytest

from autograder.reports.feedback_html import feedback_html
from autograder.reports.finish import finish_run
from autograder.results import CheckResult, ExerciseResult, SubmissionResult
from tests.test_report import COURSE, _chromium, _shots, chromium_probe, small_class

MEASURE = """<script>
window.addEventListener('load', () => {
  const out = document.createElement('pre');
  out.id = 'attnkit-measure';
  const text = document.body.innerText;
  out.textContent = JSON.stringify({
    text, overflow: document.documentElement.scrollWidth - window.innerWidth,
    lists: [...document.querySelectorAll('li li, p + ul li')].map(li => li.innerText),
    maths: [...document.querySelectorAll('math')].map(m => [m.getBoundingClientRect().width,
                                                           m.getBoundingClientRect().height]),
    code: [...document.querySelectorAll('.what code')].map(c => c.innerText),
    folded: [...document.querySelectorAll('#settings details td')].map(td => td.textContent),
    open: [...document.querySelectorAll('#settings > table td')].map(td => td.innerText),
  });
  document.body.appendChild(out);
});
</script>"""


def _seen(page: Path, tmp_path: Path, width: int, name: str) -> dict:
    return chromium_probe(page, MEASURE, "attnkit-measure", tmp_path, screenshot=_shots(tmp_path) / f"{name}-{width}.png",
                          flags=("--hide-scrollbars", f"--window-size={width},2400"))[0]


TWO = ("2 explanations fit your answer equally well (this check cannot tell them apart):\n"
       "- The scores were never divided by sqrt(d_k), so they grow with the dimension.\n"
       "- The mask was accepted but never used: blocked keys still get weight.")


def _result_with_a_listed_hint() -> SubmissionResult:
    checks = tuple(
        CheckResult(cid, "attention", "one sequence: 4 queries, 4 keys, d_k = 4", "failed", 0.0, cfg.points,
                    "3 of 16 entries of weights differ", hint=f"Query 0 gives key 1 weight 0.16. {TWO}",
                    misconceptions=("no_scaling", "mask_ignored")) if i == 3 else
        CheckResult(cid, "attention", cid, "passed", cfg.points, cfg.points)
        for i, (cid, cfg) in enumerate(COURSE.exercises["attention"].checks.items()))
    return SubmissionResult("sam", (ExerciseResult("attention", "Softmax and attention", checks, "attention.py"),),
                            COURSE.seed, COURSE.assignment)


@pytest.mark.parametrize("width", [1400, 800])
def test_the_feedback_page_shows_a_hints_list_as_a_list_and_its_maths_as_maths(tmp_path, width):
    page = tmp_path / "sam.html"
    page.write_text(feedback_html(_result_with_a_listed_hint(), dataclasses.replace(COURSE, hints="diagnose")),
                    encoding="utf-8")
    seen = _seen(page, tmp_path, width, "feedback-list")
    assert seen["lists"][:2] == ["The scores were never divided by √dₖ, so they grow with the dimension.",
                                 "The mask was accepted but never used: blocked keys still get weight."], seen["lists"]
    assert "sqrt(d_k)" not in seen["text"] and "dₖ = 4" in seen["text"]
    assert seen["overflow"] <= 0


@pytest.mark.parametrize("width", [1400, 800])
def test_the_report_shows_code_as_code_and_the_courses_choices_in_its_units(tmp_path, width):
    results = small_class() + [
        SubmissionResult("if", tuple(ExerciseResult(ex.stem, ex.title, tuple(
            CheckResult(c.check_id, c.exercise, c.title, "failed", 0.0, c.max_score, "no", misconceptions=("array_truth_value",))
            if c.exercise == "attention" else c for c in ex.checks)) for ex in small_class()[0].exercises), COURSE.seed)]
    finish_run(tmp_path, results, COURSE)
    seen = _seen(tmp_path / "report.html", tmp_path, width, "report-read")
    assert "if mask:" in seen["code"], seen["code"]                  # `if mask:` in the description: code
    assert "`" not in seen["text"].split("Misconceptions", 1)[1].split("Checks", 1)[0]
    assert "left out the division by √dₖ" in seen["text"]
    shown = " ".join(seen["open"])
    assert "points" in shown and "60 in all" in shown and "10 s" in shown and "2048 MB" in shown
    assert "67108864" not in seen["text"] and "wall factor" not in seen["text"]
    assert "64 MB" in seen["folded"] and "largest answer taken from a child" in seen["folded"]
    assert seen["overflow"] <= 0


@pytest.mark.parametrize("width", [1400, 800])
def test_nbgrader_feedback_draws_the_notebooks_maths_without_a_network(tmp_path, width):
    """The page as `nbgrader generate_feedback` renders it with the course's configuration (its
    feedback template; MathJax's script points to a CDN this machine cannot reach)."""
    import nbgrader
    from nbconvert.exporters import HTMLExporter
    from traitlets.config import Config

    from autograder.nbgrader.preprocessor import configure

    _chromium()
    nb = nbformat.v4.new_notebook(cells=[nbformat.v4.new_markdown_cell(
        "Why divide by $\\sqrt{d_k}$? Each score sums $d_k$ products:\n\n"
        "$$\\operatorname{softmax}\\!\\left(\\frac{Q K^\\top}{\\sqrt{d_k}}\\right) V$$\n\n"
        "Code stays code: `x = $HOME` and a price of $5 and $6 stays text."),
        nbformat.v4.new_markdown_cell("$\\text{<b>bold</b>}$ is not MathML: left as written.")])
    config = Config()
    configure(config)
    formgrader = Path(nbgrader.__file__).parent / "server_extensions" / "formgrader"
    config.HTMLExporter.template_name = "feedback"
    config.HTMLExporter.extra_template_basedirs = [str(formgrader / "templates")]
    config.HTMLExporter.extra_template_paths = [str(formgrader / "static" / "node_modules" / "bootstrap" / "dist" / "css")]
    exporter = HTMLExporter(config=config)
    for preprocessor in config.GenerateFeedback.preprocessors:        # the kit's, after nbgrader's own
        if preprocessor.__module__.startswith("autograder."):
            exporter.register_preprocessor(preprocessor, enabled=True)
    body, _ = exporter.from_notebook_node(
        nb, resources={"nbgrader": {"notebook": "scaling", "score": 0, "max_score": 2, "late_penalty": 0}})
    page = tmp_path / "scaling.html"
    page.write_text(body, encoding="utf-8")
    seen = _seen(page, tmp_path, width, "nbgrader-maths")
    assert "$" not in seen["text"].split("Code stays code")[0], seen["text"]       # no raw LaTeX
    assert "\\sqrt" not in seen["text"] and "d_k" not in seen["text"].split("Code stays code")[0]
    assert len(seen["maths"]) >= 3 and all(w > 0 and h > 0 for w, h in seen["maths"]), seen["maths"]
    assert "x = $HOME" in seen["text"] and "$5 and $6" in seen["text"]
    assert "<b>bold</b>" not in body and "\\text{<b>bold</b>}" in seen["text"]      # not MathML, not HTML
