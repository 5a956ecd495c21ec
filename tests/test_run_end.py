"""The end of a class run (reports/finish.finish_run): each stored result is read back once, for
grades.csv, the feedback pages and the summary together; a feedback page drawn when its result
was recorded is not drawn again at the end, nor on a rerun; a page that cannot be written costs
neither the grades nor the summary."""

from __future__ import annotations

import csv
import io
import json
from collections import Counter

import pytest

from autograder.grading import class_run, local_grading
from autograder.grading.class_run import ClassRun
from autograder.grading.local_grading import LocalGrading
from autograder.grading.stored_results import StoredResults
from autograder.reports import finish
from autograder.reports.exports import ExportFormat, export
from autograder.reports.finish import finish_run
from tests.cluster_canned import passed_result

NAMES = ("ada", "bob", "cyd", "dee")


def _graded_class(tmp_path, course, monkeypatch) -> StoredResults:
    """A class of four, graded with canned results (the grading itself does not matter here)."""
    for name in NAMES:
        (tmp_path / "class" / name).mkdir(parents=True)
        (tmp_path / "class" / name / "attention.py").write_text(f"x = {len(name)}\n", encoding="utf-8")
    monkeypatch.setattr(local_grading, "grade", lambda student, course, box, **_: passed_result(student.name, course))
    return ClassRun(tmp_path / "class", tmp_path / "out", course).run(
        LocalGrading(course, jobs=1, isolation=False, preflight=False))


def _count_drawn(monkeypatch) -> Counter:
    drawn: Counter = Counter()
    draw = finish.feedback_html

    def counted(result, course, *named):
        drawn[result.student] += 1
        return draw(result, course, *named)

    monkeypatch.setattr(finish, "feedback_html", counted)
    return drawn


def test_the_end_of_a_run_reads_each_stored_result_once(tmp_path, course, monkeypatch):
    stored = _graded_class(tmp_path, course, monkeypatch)
    loads: Counter = Counter()
    load = StoredResults.load

    def counted(self, name):
        loads[name] += 1
        return load(self, name)

    monkeypatch.setattr(StoredResults, "load", counted)
    summary = finish_run(tmp_path / "out", stored, course, exports=tuple(ExportFormat))
    assert loads == Counter({name: 1 for name in NAMES})
    results = [load(stored, name) for name in NAMES]
    for fmt in ExportFormat:     # made from the summary's rows: what export() makes from the results
        written = (tmp_path / "out" / fmt.filename).read_bytes().decode("utf-8")
        assert written == export(fmt, results, course) and written.count("\r\n") == len(NAMES) + 1 + (fmt == "canvas")
    grades = list(csv.DictReader(io.StringIO((tmp_path / "out" / "grades.csv").read_text(encoding="utf-8"))))
    assert [row["student"] for row in grades] == list(NAMES) == [row.student for row in summary["rows"]]
    top = sum(course.max_points(s) for s in course.exercises)
    assert all(float(row["total"]) == top for row in grades) and summary["scores"]["full_marks"] == len(NAMES)


def test_a_page_drawn_when_its_result_was_recorded_is_not_drawn_again(tmp_path, course, monkeypatch):
    drawn = _count_drawn(monkeypatch)
    stored = _graded_class(tmp_path, course, monkeypatch)
    assert drawn == Counter({name: 1 for name in NAMES})       # when recorded; the end found them current
    finish_run(tmp_path / "out", stored, course)
    assert drawn == Counter({name: 1 for name in NAMES})
    # a rerun reuses every result: no page is drawn again
    ClassRun(tmp_path / "class", tmp_path / "out", course).run(
        LocalGrading(course, jobs=1, isolation=False, preflight=False))
    assert drawn == Counter({name: 1 for name in NAMES})
    # a result that says something else is drawn again (its file's text is what the stamp follows)
    (tmp_path / "class" / "bob" / "attention.py").write_text("x = 'changed'\n", encoding="utf-8")
    monkeypatch.setattr(local_grading, "grade",
                        lambda student, course, box, **_: class_run.unanswered(student, course, "stand-in", "refused"))
    ClassRun(tmp_path / "class", tmp_path / "out", course).run(
        LocalGrading(course, jobs=1, isolation=False, preflight=False))
    assert drawn == Counter({**{name: 1 for name in NAMES}, "bob": 2})
    assert "stand-in" in (tmp_path / "out" / "feedback" / "bob.html").read_text(encoding="utf-8")


def test_a_feedback_page_that_cannot_be_written_costs_neither_the_grades_nor_the_summary(tmp_path, course,
                                                                                         monkeypatch):
    stored = _graded_class(tmp_path, course, monkeypatch)
    out = tmp_path / "out"
    for name in ("grades.csv", "summary.json", "report.html"):
        (out / name).unlink()
    (out / "feedback" / "bob.html").unlink()
    (out / "feedback" / "bob.html").mkdir()          # where bob's page goes, a folder: it cannot be written
    with pytest.raises(OSError):
        finish_run(out, stored, course)
    grades = (out / "grades.csv").read_text(encoding="utf-8")
    assert all(f"\n{name}," in grades for name in NAMES)
    assert json.loads((out / "summary.json").read_text(encoding="utf-8"))["students"] == len(NAMES)
    assert (out / "report.html").is_file()


def test_the_run_drops_the_fingerprints_before_the_reports(tmp_path, course, monkeypatch):
    """The class's fingerprints (held all run for the similarity) are not held while the reports
    are made."""
    pytest.importorskip("copydetect")
    for name in NAMES:
        (tmp_path / "class" / name).mkdir(parents=True)
        (tmp_path / "class" / name / "attention.py").write_text(f"x = {len(name)}\n", encoding="utf-8")
    monkeypatch.setattr(local_grading, "grade", lambda student, course, box, **_: passed_result(student.name, course))
    run = ClassRun(tmp_path / "class", tmp_path / "out", course)
    code_at = {}
    record, finish_reports = ClassRun.record, class_run.finish_run

    def recording(self, student, result, fp):
        code_at.setdefault("record", self.code)
        record(self, student, result, fp)

    def finishing(*args, **kwargs):
        code_at["finish"] = run.code
        return finish_reports(*args, **kwargs)

    monkeypatch.setattr(ClassRun, "record", recording)
    monkeypatch.setattr(class_run, "finish_run", finishing)
    run.run(LocalGrading(course, jobs=1, isolation=False, preflight=False))
    assert code_at["record"] is not None and code_at["finish"] is None
