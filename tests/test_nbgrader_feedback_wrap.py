"""Long report lines wrap in nbgrader's feedback page, at words, at the width the page
has: rendered by nbgrader's own feedback template (as `nbgrader generate_feedback` configures
nbconvert) and measured in headless Chromium at 800 px. A stream broken at a fixed 100 columns runs
off the edge (wider than the output area at 800 px); the same page with such a stream is measured
too, so the measure is seen to fail."""

from __future__ import annotations

import os
from pathlib import Path

import nbformat
import pytest

from autograder.nbgrader.preprocessor import _write
from tests.test_report import _shots, chromium_probe

REPORT = "\n".join([
    "[FAIL] attention.scaled_dot_product_attention.rectangular - n_q = 3 queries against n_k = 5 keys, "
    "d_k = 4, d_v = 6 (0/1)",
    "    3 of 24 entries of weights differ; the largest difference is at weights[1, 0, 2]: expected 0.3127, "
    "got 0.2876; the output differs where the weights do",
    "    Hint: Position 0 attends to position 3. The scores were not scaled: divide the scores by the square "
    "root of d_k before the softmax, so that the weights do not saturate as d_k grows <b>bold</b> & more.",
    "    " + "x" * 180,
    "score: 0 / 2",
])

MEASURE = """<script>
window.addEventListener('load', () => {
  const reports = [...document.querySelectorAll('.attnkit-report')];
  const out = document.createElement('pre');
  out.id = 'attnkit-measure';
  out.textContent = JSON.stringify({
    overflow: document.documentElement.scrollWidth - window.innerWidth,
    outputs: [...document.querySelectorAll('div.output_subarea, div.output_subarea pre')].map(o => o.scrollWidth - o.clientWidth),
    reports: reports.map(r => ({over: r.scrollWidth - r.clientWidth, lines: r.children.length,
                                height: r.getBoundingClientRect().height,
                                text: [...r.children].map(d => d.textContent)})),
  });
  document.body.appendChild(out);
});
</script>"""


def _feedback_page(outputs_from, tmp_path: Path, name: str) -> Path:
    """A notebook with one graded test cell, rendered as `nbgrader generate_feedback` renders it."""
    import nbgrader
    from nbconvert.exporters import HTMLExporter
    from traitlets.config import Config

    cell = nbformat.v4.new_code_cell('attnkit_tests.run("attention.scaled_dot_product_attention")',
                                     execution_count=3)
    cell.metadata["nbgrader"] = {"grade": True, "solution": False, "locked": True, "schema_version": 3,
                                 "grade_id": "tests_attention_sdpa", "points": 2, "score": 0, "max_score": 2}
    outputs_from(cell)
    nb = nbformat.v4.new_notebook(cells=[cell])
    formgrader = Path(nbgrader.__file__).parent / "server_extensions" / "formgrader"
    config = Config()      # nbgrader.converters.GenerateFeedback's own settings of nbconvert
    config.HTMLExporter.template_name = "feedback"
    config.HTMLExporter.extra_template_basedirs = [str(formgrader / "templates")]
    config.HTMLExporter.extra_template_paths = [str(formgrader / "static" / "node_modules" / "bootstrap" / "dist" / "css")]
    body, _ = HTMLExporter(config=config).from_notebook_node(
        nb, resources={"nbgrader": {"notebook": "attention", "score": 0, "max_score": 2, "late_penalty": 0}})
    page = tmp_path / f"{name}.html"
    page.write_text(body, encoding="utf-8")
    return page


def _measure(page: Path, tmp_path: Path, width: int) -> dict:
    return chromium_probe(page, MEASURE, "attnkit-measure", tmp_path,
                          flags=("--hide-scrollbars", f"--window-size={width},1200"),
                          screenshot=_shots(tmp_path) / f"nbgrader-{page.stem}-{width}.png")[0]


@pytest.mark.parametrize("width", [800, 1400])
def test_the_autograded_report_wraps_at_words_in_the_feedback_page(tmp_path, width):
    seen = _measure(_feedback_page(lambda cell: _write(cell, REPORT, 0.0), tmp_path, "autograded"), tmp_path, width)
    assert seen["overflow"] <= 0 and max(seen["outputs"]) <= 0, seen       # nothing runs off the edge
    (report,) = seen["reports"]
    assert report["over"] <= 0 and report["lines"] == len(REPORT.splitlines()), report
    # every word there, as written (the student's `<b>` is text), on more lines than the report has
    assert [" ".join(t.split()) for t in report["text"]] == [" ".join(t.split()) for t in REPORT.splitlines()]
    assert report["height"] > 1.5 * report["lines"] * 13, report


def test_the_stream_a_test_cell_held_before_ran_off_the_edge(tmp_path):
    """The measure above can fail: the report as a stream, broken at 100 columns, overflows its
    output area at 800 px (nbgrader's page scrolls it sideways)."""
    import textwrap

    broken = "\n".join(part for line in REPORT.splitlines() for part in textwrap.wrap(line, 100))
    page = _feedback_page(lambda cell: setattr(cell, "outputs", [
        nbformat.v4.new_output("stream", name="stdout", text=broken + "\n")]), tmp_path, "stream")
    seen = _measure(page, tmp_path, 800)
    assert max(seen["outputs"]) > 0, seen


def test_the_cell_keeps_the_text_beside_the_html():
    """Anything that shows plain text (nbgrader's formgrader, a terminal) gets the report itself."""
    cell = nbformat.v4.new_code_cell("", execution_count=1)
    _write(cell, REPORT, 1.5)
    shown, score = cell.outputs
    assert shown.output_type == "display_data" and shown.data["text/plain"] == REPORT
    assert "&lt;b&gt;bold&lt;/b&gt; &amp; more" in shown.data["text/html"] and "<b>" not in shown.data["text/html"]
    assert score.output_type == "execute_result" and float(score.data["text/plain"]) == 1.5
    assert os.linesep not in shown.data["text/html"]
