"""The class report and the feedback pages as a browser shows them.

Rendered from jinja2 templates with autoescape on: hostile student text (folder and file names,
exception messages, printed output, hints, plot labels) is found as text in the DOM headless
Chromium builds, never as an element or attribute. And the report reads at a glance at 1400 and
800 px wide: no label of a chart outside its picture, text drawn at a readable size, the page
using its width, the heat map at its natural size, a header saying when, with which kit and
which course. Screenshots go to $ATTNKIT_SCREENSHOTS when it is set, to look at them.
"""

from __future__ import annotations

import dataclasses
import re
import subprocess
from html.parser import HTMLParser
from pathlib import Path

import pytest
from PIL import Image

from autograder.reports.class_summary import StudentRow
from autograder.reports.finish import finish_run
from autograder.results import CheckResult, ExerciseResult, SubmissionResult
from tests.test_report import COURSE, _chromium, _result, _shots, chromium_probe, small_class

HOSTILE = ("<script>alert(1)</script>", '"><img src=x onerror=alert(1)>', "{{7*7}}")


def _hostile_result(name: str, text: str) -> SubmissionResult:
    """A result in which every text a student controls is `text`: the folder and file names, an
    exception message with printed output, a hint, an intake note and the labels of a plot."""
    figure = {"kind": "figure", "dims": [4, 16],
              "student_lines": [{"label": f"{text} $\\frac{{$", "x": [4, 16], "y": [1.0, 2.0]}],
              "expected": {"4": {"std_unscaled": 1.0, "std_scaled": 0.5},
                           "16": {"std_unscaled": 2.0, "std_scaled": 0.5}}}
    exercises = []
    for stem, ex in COURSE.exercises.items():
        checks = []
        for i, (cid, cfg) in enumerate(ex.checks.items()):
            if stem == "scaling" and i == 0:
                checks.append(CheckResult(cid, stem, cid, "failed", 0.0, cfg.points, f"printed: {text}",
                                          hint=f"look at {text}", visual=figure))
            elif stem == "attention":
                checks.append(CheckResult(cid, stem, cid, "error", 0.0, cfg.points,
                                          f"ValueError: {text}\nprinted: {text}", reason="raised"))
            else:
                checks.append(CheckResult(cid, stem, cid, "passed", cfg.points, cfg.points))
        exercises.append(ExerciseResult(stem, ex.title, tuple(checks), graded_file=f"{text}.py",
                                        note=f"{text}/x.py was graded as {stem}.py", flags=("renamed",)))
    return SubmissionResult(name, tuple(exercises), COURSE.seed, COURSE.assignment, 2.0)


class _Dom(HTMLParser):
    """The elements, attributes and text of a DOM Chromium dumped."""

    def __init__(self):
        super().__init__(convert_charrefs=True)
        self.elements: list[tuple[str, dict]] = []
        self.text: list[str] = []

    def handle_starttag(self, tag, attrs):
        self.elements.append((tag, dict(attrs)))

    def handle_data(self, data):
        self.text.append(data)


def _dom(page: Path, tmp_path: Path) -> _Dom:
    run = subprocess.run([_chromium(), "--headless", "--no-sandbox", "--disable-gpu", "--no-first-run",
                          f"--user-data-dir={tmp_path / 'chromium-profile'}", "--dump-dom", page.as_uri()],
                         capture_output=True, text=True, timeout=120)
    assert "<body" in run.stdout, run.stderr[-2000:]
    dom = _Dom()
    dom.feed(run.stdout)
    return dom


def test_pages_are_rendered_from_templates_with_autoescape():
    from autograder.reports.templating import environment

    env = environment()
    assert env.autoescape is True
    assert {"report.html.j2", "feedback.html.j2"} <= set(env.list_templates())


def test_hostile_student_text_is_text_in_the_rendered_dom(tmp_path):
    course = dataclasses.replace(COURSE, hints="diagnose")
    # a folder name holds no "/": the student is named by the text with "/" made "_" (still a tag)
    results = [_hostile_result(text.replace("/", "_"), text) for text in HOSTILE]
    finish_run(tmp_path, results, course)
    pages = [(tmp_path / "report.html", HOSTILE)] + [(tmp_path / "feedback" / f"{r.student}.html", (text,))
                                                     for r, text in zip(results, HOSTILE)]
    for page, shown in pages:
        dom = _dom(page, tmp_path)
        tags = [tag for tag, _ in dom.elements]
        assert "script" not in tags, page.name
        assert not [a for _, attrs in dom.elements for a in attrs if a.startswith("on")], page.name
        images = [attrs.get("src", "") for tag, attrs in dom.elements if tag == "img"]
        assert all(src.startswith("data:image/png;base64,") for src in images), (page.name, images)
        text = "".join(dom.text)
        for hostile in shown + tuple(r.student for r in results if page.name == "report.html"):
            assert hostile in text, (page.name, hostile)     # shown as typed, not run, not evaluated
    for r, hostile in zip(results, HOSTILE):
        feedback = _dom(tmp_path / "feedback" / f"{r.student}.html", tmp_path)
        labels = [t for t in feedback.text if hostile in t and "frac" in t]
        assert labels == [f"{hostile} $\\frac{{$"], labels   # the plot's legend, drawn as text
        assert sum(tag == "figure" for tag, _ in feedback.elements) == 1


# ====================================================================== at a glance

MEASURE = """<script>
window.addEventListener('load', () => {
  const clipped = [], sizes = [];
  for (const svg of document.querySelectorAll('figure svg')) {
    const box = svg.getBoundingClientRect();
    const scale = box.width / (svg.viewBox.baseVal.width || box.width);
    for (const t of svg.querySelectorAll('text')) {
      if (!t.textContent.trim()) continue;
      const r = t.getBoundingClientRect();
      if (r.left < box.left - 1 || r.right > box.right + 1 || r.top < box.top - 1 || r.bottom > box.bottom + 1)
        clipped.push(t.textContent.trim());
      sizes.push(parseFloat(getComputedStyle(t).fontSize) * scale);
    }
  }
  const main = document.querySelector('main') || document.body;
  const heat = document.querySelector('svg.heat');
  const cells = heat && heat.querySelector('image').getBoundingClientRect();
  const out = document.createElement('pre');
  out.id = 'attnkit-measure';
  out.textContent = JSON.stringify({clipped, smallest: Math.min(...sizes), texts: sizes.length,
    main: main.getBoundingClientRect().width, inner: window.innerWidth,
    overflow: document.documentElement.scrollWidth - window.innerWidth,
    heat: heat ? [heat.getBoundingClientRect().width, heat.viewBox.baseVal.width] : null,
    cells: cells ? [cells.left + window.scrollX, cells.top + window.scrollY, cells.width, cells.height] : null});
  document.body.appendChild(out);
});
</script>"""


def _measure(page: Path, tmp_path: Path, width: int, screenshot: Path) -> dict:
    return chromium_probe(page, MEASURE, "attnkit-measure", tmp_path, screenshot=screenshot,
                          flags=("--hide-scrollbars", f"--window-size={width},3000"))[0]


@pytest.mark.parametrize("width", [1400, 800])
def test_the_report_reads_at_a_glance(tmp_path, width):
    # a name in wide characters and one with accents: each label is measured, never clipped
    finish_run(tmp_path, small_class() + [_result("学生番号一二三四五六七八", {"attention": "passed"}),
                                          _result("Ñandú Łukasiewicz-Wójcik", {"attention": "failed"})], COURSE)
    seen = _measure(tmp_path / "report.html", tmp_path, width, _shots(tmp_path) / f"report-{width}.png")
    assert seen["texts"] > 50
    assert seen["clipped"] == [], seen["clipped"]             # every chart label inside its picture
    assert seen["smallest"] >= 10, seen                       # px on screen
    assert seen["main"] >= 0.85 * seen["inner"], seen         # the page uses its width
    assert seen["overflow"] <= 0, seen                        # only the heat map scrolls, inside its box
    assert seen["heat"][0] >= seen["heat"][1], seen           # shown at its size, never shrunk


def test_the_heat_map_shows_each_students_checks_in_their_colours(tmp_path):
    """Looked at as a person sees it: in the screenshot, the middle of every cell has the colour
    of that student's status for that check in the summary (a pixel per cell, drawn large
    without smoothing)."""
    from autograder.reports.report_figures import COLOURS

    summary = finish_run(tmp_path, small_class(), COURSE)
    shot = _shots(tmp_path) / "report-heat-1400.png"
    seen = _measure(tmp_path / "report.html", tmp_path, 1400, shot)
    rows = [r for r in summary["rows"] if r.checks]
    columns = max(len(r.checks) for r in rows)
    left, top, width, height = seen["cells"]
    assert width == pytest.approx(16 * columns, abs=1) and height == pytest.approx(16 * len(rows), abs=1)
    with Image.open(shot) as image:
        pixels = image.convert("RGB")
        for i, row in enumerate(rows):
            for j, code in enumerate(row.checks):
                x, y = left + (j + 0.5) * width / columns, top + (i + 0.5) * height / len(rows)
                want = tuple(round(255 * c) for c in COLOURS[code])
                got = pixels.getpixel((round(x), round(y)))
                assert max(abs(a - b) for a, b in zip(got, want)) <= 6, (row.student, j, code, got, want)
    assert len({code for r in rows for code in r.checks}) >= 4    # the class shows most statuses


def _texture_class(students: int, columns: int) -> list[StudentRow]:
    """Summary rows of a class too large to name: the first half passed the even columns and failed
    the odd ones, the second half raised on every third column and left the others unimplemented;
    the last column alternates passed and failed from one student to the next."""
    rows = []
    for i in range(students):
        first = i < students // 2
        cells = [("P" if j % 2 == 0 else "F") if first else ("E" if j % 3 == 0 else "N") for j in range(columns)]
        cells[-1] = "P" if i % 2 == 0 else "F"
        rows.append(StudentRow(f"s{i:04d}", 1.0, ("attention",), (1.0,), 0.1, "".join(cells)))
    return rows


@pytest.mark.parametrize("scale", [1, 2])
def test_a_large_classs_heat_map_keeps_its_columns_sharp_and_averages_its_rows(tmp_path, scale):
    """Looked at as a person sees it, at a laptop's pixel ratio and a phone's: 1,600 students are a
    texture 800 px tall (two students a pixel row). Each column is CELL px wide with its own colour
    up to its edges (drawn without smoothing: nothing of the neighbour column bleeds in), and a
    column whose students alternate passed and failed shows the mean of the two colours (the rows
    are averaged, not picked one in two)."""
    from autograder.reports.report_figures import CELL, COLOURS, heat_map

    students, columns = 1600, 9
    rows = _texture_class(students, columns)
    checks = [{"check_id": f"attention.c{j}", "exercise": "attention"} for j in range(columns)]
    page = tmp_path / "heat.html"
    page.write_text(f"<!doctype html><html><body style='margin:0'><figure>{heat_map(rows, checks)}</figure>"
                    "</body></html>", encoding="utf-8")
    shot = _shots(tmp_path) / f"report-heat-texture-x{scale}.png"
    seen = chromium_probe(page, MEASURE, "attnkit-measure", tmp_path, screenshot=shot,
                          screenshot_flags=("--hide-scrollbars", "--window-size=600,1000",
                                            f"--force-device-scale-factor={scale}"))[0]
    left, top, width, height = seen["cells"]
    assert (width, height) == (CELL * columns, 800)

    def colour(code):
        return tuple(round(255 * c) for c in COLOURS[code])

    with Image.open(shot) as image:
        pixels = image.convert("RGB")
        for half, y in (("first", top + height / 4), ("second", top + 3 * height / 4)):
            for j in range(columns - 1):
                want = colour(rows[0 if half == "first" else -1].checks[j])
                for x in (left + CELL * j + 1, left + CELL * j + CELL / 2, left + CELL * (j + 1) - 1.5):
                    got = pixels.getpixel((int(x * scale), int(y * scale)))
                    assert max(abs(a - b) for a, b in zip(got, want)) <= 6, (half, j, x, got, want)
            mean = tuple((a + b) / 2 for a, b in zip(colour("P"), colour("F")))
            got = pixels.getpixel((int((left + CELL * (columns - 0.5)) * scale), int(y * scale)))
            assert max(abs(a - b) for a, b in zip(got, mean)) <= 6, (half, got, mean)


def test_the_report_says_when_with_which_kit_and_course_and_what_each_cause_is(tmp_path):
    from autograder.reports.class_summary import course_sha256, kit_version

    summary = finish_run(tmp_path, small_class(), COURSE)
    page = (tmp_path / "report.html").read_text(encoding="utf-8")
    assert re.fullmatch(r"\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\+00:00", summary["generated"])
    assert f'<time datetime="{summary["generated"]}">' in page
    assert summary["kit_version"] == kit_version() and f"attnkit {kit_version()}" in page
    assert summary["course_sha256"] == course_sha256(COURSE) and course_sha256(COURSE) in page
    assert course_sha256(dataclasses.replace(COURSE, seed=COURSE.seed + 1)) != course_sha256(COURSE)
    no_scaling = next(m for m in summary["misconceptions"] if m["id"] == "no_scaling")
    assert no_scaling["description"] == "left out the division by sqrt(d_k)"
    assert no_scaling["count"] == 2 and no_scaling["exercises"] == ["attention", "scaling"]   # students, not checks
    assert sum(no_scaling["checks"].values()) > 2
    assert "left out the division by √dₖ" in page           # the description as prose: its maths as it reads
    settings = page.split('<section id="settings">', 1)[1].split("</section>", 1)[0]
    assert "{" not in settings and "'" not in settings and "rtol 1e-05, atol 1e-08" in settings
    assert "<td>memory</td><td>2048 MB</td>" in settings


def test_the_contract_describes_each_misconception_id_as_the_report_does():
    from autograder.checks.contract import MISCONCEPTIONS

    root = Path(__file__).resolve().parents[1]
    table = (root / "docs" / "contract.md").read_text(encoding="utf-8").split("## Misconception ids", 1)[1]
    rows = dict(re.findall(r"^\| ([a-z_0-9]+) \| (.*) \|$", table, flags=re.M))
    rows.pop("id")
    assert rows == MISCONCEPTIONS
