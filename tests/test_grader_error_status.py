"""A student whose grading hit a grader error (a crash of the grader, a broken sandbox: not the
student's doing) has the status "grader error" everywhere, no total, and is left out of the
headline numbers, which say over which students they are; the exports give the LMS no 0."""

from __future__ import annotations

import contextlib
import csv
import io
import json

from autograder.cli import main
from tests.lms_downloads import HAND, RIGHT
from tests.test_lms_roundtrip import _course


def _class_where_the_grader_fails_on_cleo(tmp_path, monkeypatch):
    """(course file, class folder): ada and cleo hand in the same right answers; grading cleo raises."""
    import autograder.grading.local_grading as local_grading

    real_grade = local_grading.grade

    def failing_for_cleo(student, course, sandbox, *args, **kwargs):
        if student.name == "cleo":
            raise RuntimeError("the sandbox went away")
        return real_grade(student, course, sandbox, *args, **kwargs)

    monkeypatch.setattr(local_grading, "grade", failing_for_cleo)
    cls = tmp_path / "class"
    for name in ("ada", "cleo"):
        (cls / name).mkdir(parents=True)
        (cls / name / f"{HAND}.py").write_bytes(RIGHT)
    return _course(tmp_path), cls


def test_a_grader_error_is_its_own_status_everywhere(tmp_path, monkeypatch):
    course, cls = _class_where_the_grader_fails_on_cleo(tmp_path, monkeypatch)
    out = tmp_path / "out"
    printed = io.StringIO()
    with contextlib.redirect_stdout(printed):
        assert main(["--course", str(course), "grade", str(cls), "--out", str(out), "--jobs", "1",
                     "--export", "gradescope-csv"]) == 0
    printed = printed.getvalue()

    grades = {r["student"]: r for r in csv.DictReader(io.StringIO((out / "grades.csv").read_text(encoding="utf-8")))}
    assert (grades["ada"]["status"], grades["ada"]["total"]) == ("graded", "7")
    assert (grades["cleo"]["status"], grades["cleo"]["total"], grades["cleo"][HAND]) == ("grader error", "", "")

    summary = json.loads((out / "summary.json").read_text(encoding="utf-8"))
    assert summary["statuses"] == {"graded": 1, "grader error": 1}
    assert summary["submitted"] == 1 and summary["scores"]["values"] == [7]
    assert summary["scores_over"] == {"graded": 1}
    assert {r["student"]: (r["status"], r["score"]) for r in summary["rows"]} == {
        "ada": ("graded", 7), "cleo": ("grader error", None)}
    assert next(e for e in summary["exercises"] if e["stem"] == HAND)["submitted"] == 1

    report = (out / "report.html").read_text(encoding="utf-8")
    assert "<span>1 graded</span><span>1 grader error</span>" in report
    assert "means over the graded; not in them: 1 grader error" in report
    assert "2 students, 1 graded (means over the graded; not in them: 1 grader error)" in printed
    assert "1 graded · 1 grader error" in printed

    feedback = (out / "feedback" / "cleo.md").read_text(encoding="utf-8")
    assert "**grader error**, no score" in feedback
    export = list(csv.DictReader(io.StringIO((out / "export-gradescope-csv.csv").read_text(encoding="utf-8"))))
    assert {r["Name"]: r["Total Score"] for r in export} == {"ada": "7", "cleo": ""}     # no 0 sent to the LMS


def test_a_grader_error_the_instructor_scores_by_hand_is_graded(tmp_path, monkeypatch):
    """The instructor grades cleo's work by hand (overrides.csv): her status is graded, her total
    the points given, and the LMS gets them."""
    course, cls = _class_where_the_grader_fails_on_cleo(tmp_path, monkeypatch)
    overrides = tmp_path / "overrides.csv"
    overrides.write_text(f"student,check,points,reason,who\ncleo,{HAND},6,graded by hand,TA Kim\n", encoding="utf-8")
    out = tmp_path / "out"
    with contextlib.redirect_stdout(io.StringIO()):
        assert main(["--course", str(course), "grade", str(cls), "--out", str(out), "--jobs", "1",
                     "--overrides", str(overrides), "--export", "gradescope-csv"]) == 0

    grades = {r["student"]: r for r in csv.DictReader(io.StringIO((out / "grades.csv").read_text(encoding="utf-8")))}
    assert (grades["cleo"]["status"], grades["cleo"]["total"]) == ("graded", "6")
    summary = json.loads((out / "summary.json").read_text(encoding="utf-8"))
    assert summary["statuses"] == {"graded": 2}
    export = list(csv.DictReader(io.StringIO((out / "export-gradescope-csv.csv").read_text(encoding="utf-8"))))
    assert {r["Name"]: r["Total Score"] for r in export} == {"ada": "7", "cleo": "6"}
