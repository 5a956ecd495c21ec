"""What an instructor reads after a class run: grades.csv, exports, summary.json, report.html and
the feedback pages, all written by reports.finish.finish_run from results.

Results here are built as data (no sandbox): a small class with every kind of outcome, and a
synthetic class of 1,000 students for size and speed. The pages are rendered in headless
Chromium (Debian's `chromium`), which must show every image and log no console error.
"""

from __future__ import annotations

import csv
import dataclasses
import html
import io
import json
import os
import shutil
import subprocess
import time
from dataclasses import replace
from pathlib import Path

import numpy as np
import pytest

from autograder.checks import check_ids
from autograder.config import KIT_ROOT, load_course
from autograder.reports.exports import ExportFormat, export
from autograder.reports.finish import finish_run
from autograder.reports.grades_csv import grades_csv, safe_cell
from autograder.reports.pictures import picture_data
from autograder.results import CheckResult, ExerciseResult, SubmissionResult

COURSE = load_course(KIT_ROOT / "course.yml", known_checks=check_ids())
STEMS = tuple(COURSE.exercises)


def _result(name: str, statuses: dict[str, str], *, duration: float = 1.0, visual: dict | None = None,
            misconceptions: tuple[str, ...] = (), reason: str = "", note: str = "",
            flags: tuple[str, ...] = ()) -> SubmissionResult:
    """A result where each stem's checks all have the status given ("missing" when not listed)."""
    exercises = []
    for stem, ex in COURSE.exercises.items():
        status = statuses.get(stem, "missing")
        checks = []
        for i, (cid, cfg) in enumerate(ex.checks.items()):
            s = status if not (status == "mixed") else ("passed" if i % 2 else "failed")
            checks.append(CheckResult(cid, stem, cid, s, cfg.points if s == "passed" else 0.0, cfg.points,
                                      "" if s == "passed" else f"{cid} went wrong",
                                      misconceptions=misconceptions if s == "failed" else (),
                                      hidden=cfg.hidden, reason=reason if s == "error" else "",
                                      visual=visual if s == "failed" and i == 0 else None))
        exercises.append(ExerciseResult(stem, ex.title, tuple(checks),
                                        graded_file=None if status == "missing" else f"{stem}.py",
                                        note=note if status != "missing" else "", flags=flags))
    return SubmissionResult(name, tuple(exercises), COURSE.seed, COURSE.assignment, duration)


def _weights_visual() -> dict:
    rng = np.random.default_rng(0)
    w = rng.random((4, 4))
    w /= w.sum(-1, keepdims=True)
    return picture_data("attention.scaled_dot_product_attention.single", (None, w), (None, w.T / w.T.sum(-1)[:, None]))


def _scaling_visual() -> dict:
    from reference.scaling import scaling_experiment

    ref = scaling_experiment(dims=(4, 16, 64, 256), n_trials=50)
    student = {d: {k: v * (1.6 if "scaled" in k and "unscaled" not in k else 1.0) for k, v in t.items()}
               for d, t in ref.items()}
    return picture_data("scaling.scaling_experiment.std", student, ref)


def small_class() -> list[SubmissionResult]:
    everything = {s: "passed" for s in STEMS}
    return [
        _result("ada", everything),
        _result("bo", {"hand_computation": "passed", "attention": "failed"}, visual=_weights_visual(),
                misconceptions=("no_scaling",)),
        _result("cy", {"scaling": "failed", "attention": "mixed"}, visual=_scaling_visual(),
                misconceptions=("no_scaling",)),
        _result("=HYPERLINK(\"http://x\",\"click\")", {"attention": "passed"}),
        _result("<script>alert(1)</script>", {"causal_mask": "error"}, reason="timeout", duration=12.5),
        _result("[bold red]rich[/]", {"multihead": "error"}, reason="refused"),
        _result("nobody", {}),
        _result("zed", {"attention": "passed"}, note="hw1/Attention.py was graded as attention.py",
                flags=("subfolder", "renamed")),
    ]


# ====================================================================== grades.csv and exports

def test_grades_csv_tells_not_submitted_from_zero_and_is_spreadsheet_safe():
    results = small_class()
    rows = {r["student"]: r for r in csv.DictReader(io.StringIO(grades_csv(results, STEMS)))}
    full = f"{sum(ex.max_score for ex in results[0].exercises):g}"    # ada has every check right
    assert rows["ada"]["total"] == full
    assert rows["bo"]["attention"] == "0" and rows["bo"]["causal_mask"] == ""
    assert rows["nobody"]["total"] == "" and all(rows["nobody"][s] == "" for s in STEMS)
    assert rows["nobody"]["max_total"] == full
    assert "'=HYPERLINK(\"http://x\",\"click\")" in rows
    # stable order: the same results in another order give the same file
    assert grades_csv(results[::-1], STEMS) == grades_csv(results, STEMS)


@pytest.mark.parametrize("text", ["=1+1", "+1", "-1", "@SUM(A1)", "\tx", "\rx", "\n=1+1", "\n+cmd|' /C calc'!A0",
                                  "\t=1", "\r\n@SUM(A1)", "\r-1", " \n =HYPERLINK(\"http://x\")", "\nx"])
def test_every_formula_start_is_escaped(text):
    assert safe_cell(text) == "'" + text
    assert safe_cell("ada") == "ada" and safe_cell("ada =1") == "ada =1"


@pytest.mark.parametrize("fmt", list(ExportFormat))
def test_a_name_led_by_a_newline_and_a_formula_is_neutralised_everywhere(fmt):
    """A folder name "\n=HYPERLINK(...)" reaches grades.csv and every export quoted, never as a formula."""
    evil = "\n=HYPERLINK(\"http://x\",\"click\")"
    results = [replace(small_class()[0], student=evil)]
    for text in (grades_csv(results, STEMS), export(fmt, results, COURSE)):
        cells = [cell for row in csv.reader(io.StringIO(text.lstrip("\ufeff"))) for cell in row]
        assert "'" + evil in cells and evil not in cells


def test_exports_have_each_platforms_columns():
    results = small_class()
    text = export(ExportFormat.CANVAS, results, COURSE)
    assert text.startswith("\ufeff")           # Excel reads accents right only with a byte order mark
    canvas = list(csv.reader(io.StringIO(text[1:])))
    assert canvas[0] == ["Student", "ID", "SIS User ID", "SIS Login ID", "Section", COURSE.assignment]
    full = f"{sum(ex.max_score for ex in results[0].exercises):g}"    # ada has every check right
    assert canvas[1][0] == "Points Possible" and canvas[1][-1] == full
    by_login = {row[3]: row for row in canvas[2:]}
    assert by_login["ada"][-1] == full and by_login["nobody"][-1] == ""
    moodle = list(csv.reader(io.StringIO(export(ExportFormat.MOODLE, results, COURSE).lstrip("\ufeff"))))
    assert moodle[0] == ["username", *(f"{COURSE.assignment}: {stem}" for stem in STEMS), COURSE.assignment, "email",
                         "idnumber"]
    gradescope = list(csv.DictReader(io.StringIO(export(ExportFormat.GRADESCOPE_CSV, results, COURSE))))
    assert {r["SID"]: r["Total Score"] for r in gradescope}["bo"] == "7"
    assert all(not row[0].startswith(("=", "+", "-", "@")) for row in canvas[2:] + moodle[1:])


# ====================================================================== summary.json

def test_summary_holds_what_the_report_shows(tmp_path):
    summary = finish_run(tmp_path, small_class(), COURSE, exports=("canvas",))
    written = json.loads((tmp_path / "summary.json").read_text())
    assert written == json.loads(json.dumps(summary, default=lambda row: row.to_dict()))
    # a row as docs/report.md describes it, worked out here from the course, not by the kit
    rows = {r["student"]: r for r in written["rows"]}
    hand = sum(cfg.points for cfg in COURSE.exercises["hand_computation"].checks.values())
    letters = {"hand_computation": "P", "attention": "F"}
    assert rows["bo"] == {"student": "bo", "score": hand, "duration_s": 1.0, "feedback": "feedback/bo.html",
                          "exercises": {s: {"hand_computation": hand, "attention": 0.0}.get(s) for s in STEMS},
                          "checks": "".join(letters.get(stem, "M") * len(ex.checks)
                                            for stem, ex in COURSE.exercises.items()), "status": "graded"}
    assert rows["nobody"]["score"] is None and set(rows["nobody"]["exercises"].values()) == {None}
    assert rows["nobody"]["status"] == "not submitted"
    assert set(rows["nobody"]["checks"]) == {"M"}
    assert rows["<script>alert(1)</script>"]["feedback"] == "feedback/%3Cscript%3Ealert%281%29%3C%2Fscript%3E.html"
    assert summary["schema"] == "attnkit-summary/1" and summary["seed"] == COURSE.seed
    assert summary["students"] == 8 and summary["submitted"] == 7
    mis = {m["id"]: m for m in summary["misconceptions"]}
    assert mis["no_scaling"]["students"] == ["bo", "cy"]
    kinds = {(t["student"], t["kind"]) for t in summary["trouble"]}
    assert ("<script>alert(1)</script>", "timed out") in kinds and ("[bold red]rich[/]", "refused") in kinds
    assert summary["slowest"][0]["student"] == "<script>alert(1)</script>"
    att = next(e for e in summary["exercises"] if e["stem"] == "attention")
    assert att["submitted"] == 5 and att["full_marks"] == 3
    check = next(c for c in summary["checks"] if c["check_id"] == "attention.softmax.rows")
    assert check["passed"] == 3 and check["missing"] == 3
    assert any(i["student"] == "zed" and "renamed" in i["flags"] for i in summary["intake"])
    assert (tmp_path / "export-canvas.csv").is_file()


def test_names_are_escaped_in_the_pages(tmp_path):
    finish_run(tmp_path, small_class(), COURSE)
    page = (tmp_path / "report.html").read_text()
    assert "<script>alert(1)</script>" not in page and "&lt;script&gt;alert(1)&lt;/script&gt;" in page
    assert "<script" not in page          # the report runs no script at all
    assert 'href="feedback/%3Cscript%3Ealert%281%29%3C%2Fscript%3E.html"' in page
    feedback = (tmp_path / "feedback" / "<script>alert(1)</script>.html").read_text()
    assert "<script" not in feedback


def test_feedback_pages_are_redrawn_only_when_the_result_changes(tmp_path):
    results = small_class()
    finish_run(tmp_path, results, COURSE)
    page = tmp_path / "feedback" / "bo.html"
    before = page.stat().st_mtime_ns
    finish_run(tmp_path, results, COURSE)
    assert page.stat().st_mtime_ns == before
    finish_run(tmp_path, [_result("bo", {"attention": "passed"})], COURSE)
    assert page.stat().st_mtime_ns != before and "<figure" not in page.read_text()
    # the same result under another course (its JSON made anew, not the last course's) is drawn again
    before = page.stat().st_mtime_ns
    finish_run(tmp_path, [_result("bo", {"attention": "passed"})], dataclasses.replace(COURSE, seed=COURSE.seed + 1))
    assert page.stat().st_mtime_ns != before


# ====================================================================== in a real browser

CHECKER = """<script>
window.__errors = [];
window.addEventListener('error', e => window.__errors.push(String(e.message || e.target && e.target.src)), true);
window.addEventListener('load', () => {
  const imgs = [...document.images];
  const broken = imgs.filter(i => !i.complete || i.naturalWidth === 0).length;
  const cells = [...document.querySelectorAll('svg image')]
    .filter(i => i.href.baseVal.startsWith('data:image/png;base64,') && i.getBBox().width > 0).length;
  const svgs = [...document.querySelectorAll('figure svg')].filter(s => s.getBBox().width > 0).length;
  const out = document.createElement('pre');
  out.id = 'attnkit-check';
  out.textContent = JSON.stringify({images: imgs.length, broken, cells, svgs, errors: window.__errors});
  document.body.appendChild(out);
});
</script>"""


def test_a_report_that_fails_halfway_leaves_the_last_one_whole(tmp_path, monkeypatch):
    """The report and the summary are written as they are made (a large class's pieces are
    never held together): one that fails halfway leaves the last one whole, no part."""
    from autograder.reports import report_html

    finish_run(tmp_path, small_class(), COURSE)
    before = (tmp_path / "report.html").read_bytes()

    def halfway(*args, **kwargs):
        yield "<!doctype html>\n<html><body>"
        raise RuntimeError("the template failed halfway")

    monkeypatch.setattr(report_html, "render_pieces", halfway)
    with pytest.raises(RuntimeError, match="halfway"):
        finish_run(tmp_path, small_class(), COURSE)
    assert (tmp_path / "report.html").read_bytes() == before
    assert json.loads((tmp_path / "summary.json").read_text(encoding="utf-8"))["students"] == len(small_class())
    assert not [p.name for p in tmp_path.iterdir() if p.name.endswith(".tmp")]


def _shots(tmp_path: Path) -> Path:
    """Where screenshots go: $ATTNKIT_SCREENSHOTS (to look at them) or the test's temporary folder."""
    folder = Path(os.environ.get("ATTNKIT_SCREENSHOTS") or tmp_path / "screenshots")
    folder.mkdir(parents=True, exist_ok=True)
    return folder


def _chromium() -> str:
    path = shutil.which("chromium") or shutil.which("chromium-browser")
    if path is None:
        pytest.skip("Debian's chromium is not installed (.ci/run installs it)")
    return path


def chromium_probe(page: Path, script: str, marker: str, tmp_path: Path, *, flags: tuple = (),
                   screenshot: Path | None = None, screenshot_flags: tuple = ()) -> tuple[dict, str]:
    """Load a copy of `page` with `script` before </body> in headless Chromium: the JSON the script
    wrote into <pre id="marker">, and what Chromium logged. A screenshot of the page itself if asked."""
    probe = page.with_name(f".probe-{page.name}")
    probe.write_text(page.read_text(encoding="utf-8").replace("</body>", script + "</body>"), encoding="utf-8")
    base = [_chromium(), "--headless", "--no-sandbox", "--disable-gpu", "--no-first-run",
            f"--user-data-dir={tmp_path / 'chromium-profile'}", *flags]
    try:
        run = subprocess.run(base + ["--virtual-time-budget=10000", "--dump-dom", probe.as_uri()],
                             capture_output=True, text=True, timeout=120)
        if screenshot is not None:
            subprocess.run(base + [*screenshot_flags, f"--screenshot={screenshot}", page.as_uri()],
                           capture_output=True, text=True, timeout=120)
    finally:
        probe.unlink(missing_ok=True)
    found = run.stdout.split(f'<pre id="{marker}">', 1)
    assert len(found) == 2, f"the script did not run: {run.stderr[-2000:]}"
    return json.loads(html.unescape(found[1].split("</pre>", 1)[0])), run.stderr


def _browse(page: Path, tmp_path: Path, screenshot: Path | None = None) -> dict:
    """Load a copy of `page` (with a checker script) in headless Chromium: what it found, and the
    console lines Chromium logged."""
    found, logged = chromium_probe(page, CHECKER, "attnkit-check", tmp_path, flags=("--enable-logging=stderr", "--v=0"),
                                   screenshot=screenshot, screenshot_flags=("--hide-scrollbars", "--window-size=1280,2000"))
    found["console"] = [line for line in logged.splitlines() if "CONSOLE" in line]
    return found


def test_report_and_a_feedback_page_render_in_chromium(tmp_path):
    shots = _shots(tmp_path)
    finish_run(tmp_path, small_class(), COURSE)
    report = _browse(tmp_path / "report.html", tmp_path, shots / "report.png")
    assert report["errors"] == [] and report["console"] == [], report
    assert report["cells"] == 1 and report["broken"] == 0        # the heat map's cells
    assert report["svgs"] >= 4                                    # distribution, exercises, checks, heat map
    for name, pictures in (("bo", 1), ("cy", 1)):
        page = _browse(tmp_path / "feedback" / f"{name}.html", tmp_path, shots / f"feedback-{name}.png")
        assert page["errors"] == [] and page["console"] == [] and page["broken"] == 0, page
        assert page["svgs"] >= pictures, page


def test_a_report_of_1000_students_stays_small_and_fast(tmp_path):
    rng = np.random.default_rng(1)
    kinds = ["passed", "failed", "mixed", "error", "missing", "not_implemented"]
    results = []
    for i in range(1000):
        statuses = {s: kinds[int(rng.integers(len(kinds)))] for s in STEMS}
        results.append(_result(f"student{i:04d}", statuses, duration=float(rng.random() * 20),
                               misconceptions=(("no_scaling",) if i % 7 == 0 else ("softmax_wrong_axis",)),
                               reason="crashed"))
    started = time.perf_counter()
    finish_run(tmp_path, results, COURSE)
    seconds = time.perf_counter() - started
    size = (tmp_path / "report.html").stat().st_size
    print(f"\n1000 students: report.html {size / 1e6:.2f} MB, summary.json "
          f"{(tmp_path / 'summary.json').stat().st_size / 1e6:.2f} MB, finish_run {seconds:.1f} s")
    assert size < 3_000_000
    page = _browse(tmp_path / "report.html", tmp_path, _shots(tmp_path) / "report-1000.png")
    assert page["broken"] == 0 and page["errors"] == [] and page["console"] == []


# ====================================================================== pictures from real grading

@pytest.mark.parametrize("stem, case, check_id, kind", [
    ("attention", "no_scaling", "attention.scaled_dot_product_attention.single", "weights"),
    ("scaling", "no_scaling", "scaling.scaling_experiment.std", "scaling"),
])
def test_a_failed_check_carries_the_data_of_its_picture(tmp_path, stem, case, check_id, kind):
    """Graded for real (sandbox): the student's weights / statistics are the buggy ones, the
    expected ones the reference's, and the feedback page draws them."""
    from autograder.grading.submission import grade_submission
    from autograder.reports.feedback_html import feedback_html
    from autograder.sandbox import Sandbox

    shutil.copy(KIT_ROOT / "tests" / "corpus" / stem / "buggy" / f"{case}.py", tmp_path / f"{stem}.py")
    with Sandbox(COURSE.limits) as sandbox:
        result = grade_submission(tmp_path, COURSE, sandbox, student="bo", stems=(stem,))
    check = next(c for c in result.checks if c.check_id == check_id)
    assert not check.passed and check.visual is not None and check.visual["kind"] == kind
    if kind == "weights":
        student, expected = np.array(check.visual["student"]), np.array(check.visual["expected"])
        assert student.shape == expected.shape and np.allclose(student.sum(-1), 1) and np.allclose(expected.sum(-1), 1)
        assert not np.allclose(student, expected, atol=1e-3)    # unscaled weights are sharper
    else:
        d = str(check.visual["dims"][-1])
        assert check.visual["student"][d]["std_scaled"] > 2 * check.visual["expected"][d]["std_scaled"]
    page = feedback_html(result, COURSE)
    assert page.count("<figure") >= 1 and check_id in page
    assert json.loads(json.dumps(result.to_dict()))       # the picture's data travels as plain JSON


# ====================================================================== names are data on the terminal too

def test_rich_markup_in_names_files_and_messages_is_printed_as_text(tmp_path):
    from rich.console import Console

    from autograder.reports.summary import print_summary
    from autograder.reports.table import print_report

    name = "[bold red]mallory[/bold red][link=http://x]y[/link]"
    result = _result(name, {"attention": "error"}, reason="refused",
                     note="[blink]hw/[red]Attention.py[/red] was graded as attention.py")
    result = type(result)(result.student, tuple(e if e.stem != "attention" else
                                                type(e)(e.stem, e.title, e.checks, "[red]x[/red].py", e.note)
                                                for e in result.exercises), result.seed, result.assignment)
    report, summary = (Console(record=True, width=300, force_terminal=True) for _ in range(2))
    print_report(result, report)
    print_summary([result], COURSE, summary, tmp_path)
    flat = (lambda text: "".join(text.split()))      # a long title wraps
    text = flat(report.export_text())
    assert flat(name) in text and "[red]x[/red].py" in text and flat("[blink]hw/[red]Attention.py[/red]") in text
    assert flat(name) in flat(summary.export_text())


def test_a_hidden_checks_picture_is_shown_only_with_show_hidden():
    from autograder.reports.feedback_html import feedback_html

    hidden = next(cid for ex in COURSE.exercises.values() for cid, cfg in ex.checks.items() if cfg.hidden)
    stem = hidden.split(".")[0]
    result = _result("bo", {stem: "failed"})
    result = type(result)("bo", tuple(
        type(e)(e.stem, e.title, tuple(c if c.check_id != hidden else
                                       type(c)(**{**c.__dict__, "visual": _weights_visual()}) for c in e.checks),
                e.graded_file) for e in result.exercises), result.seed, result.assignment)
    assert "<figure" not in feedback_html(result, COURSE)
    assert "<figure" in feedback_html(result, dataclasses.replace(COURSE, show_hidden=True))


@pytest.mark.parametrize("umask, mode", [(0o022, 0o644), (0o002, 0o664), (0o077, 0o600)])
def test_output_files_follow_the_umask(tmp_path, umask, mode):
    """Every file's mode follows the umask, not mkstemp's 0600."""
    old = os.umask(umask)
    try:
        finish_run(tmp_path, small_class(), COURSE, exports=tuple(ExportFormat))
    finally:
        os.umask(old)
    written = [p for p in tmp_path.rglob("*") if p.is_file()]
    assert {p.name for p in written} >= {"grades.csv", "summary.json", "report.html", "export-canvas.csv",
                                        "ada.html"}
    assert {p.name: oct(p.stat().st_mode & 0o777) for p in written} == {p.name: oct(mode) for p in written}
    assert not [p for p in tmp_path.rglob(".*.tmp")]
