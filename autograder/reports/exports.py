"""Gradebook import files for learning platforms (`attnkit grade --export FORMAT`).

canvas          Canvas's gradebook import: Student, ID, SIS User ID, SIS Login ID, Section, then
                one column per assignment, with a "Points Possible" row under the header.
                The student's folder name goes into SIS Login ID (and Student); Canvas matches
                rows on ID, SIS User ID or SIS Login ID.
moodle          Moodle's "Import grades - CSV file": an identifier column (map it to "username"
                under "Identify user by") and one column per grade item (map it to the item).
gradescope-csv  Gradescope's score upload: Name, SID, Email and a Total Score column (plus one
                column per exercise); Gradescope matches SID or Email against its roster.

A submission that was not handed in is an empty cell everywhere (the platforms leave those
ungraded instead of writing a 0); every text cell is made spreadsheet safe.
"""

from __future__ import annotations

import csv
import io
from enum import Enum

from autograder.config import CourseConfig
from autograder.reports.grades_csv import exercise_cell, ordered, safe_cell, total_cell
from autograder.results import SubmissionResult


class ExportFormat(str, Enum):
    CANVAS = "canvas"
    MOODLE = "moodle"
    GRADESCOPE_CSV = "gradescope-csv"

    @property
    def filename(self) -> str:
        return f"export-{self.value}.csv"


def export(fmt: ExportFormat, results: list[SubmissionResult], course: CourseConfig) -> str:
    return {ExportFormat.CANVAS: _canvas, ExportFormat.MOODLE: _moodle,
            ExportFormat.GRADESCOPE_CSV: _gradescope}[ExportFormat(fmt)](ordered(results), course)


def _writer() -> tuple[io.StringIO, "csv._writer"]:
    buf = io.StringIO()
    return buf, csv.writer(buf, lineterminator="\r\n")


def _max(course: CourseConfig) -> str:
    return f"{sum(course.max_points(s) for s in course.exercises):g}"


def _canvas(results: list[SubmissionResult], course: CourseConfig) -> str:
    buf, w = _writer()
    w.writerow(["Student", "ID", "SIS User ID", "SIS Login ID", "Section", course.assignment])
    w.writerow(["Points Possible", "", "", "", "", _max(course)])
    for r in results:
        w.writerow([safe_cell(r.student), "", "", safe_cell(r.student), "", total_cell(r)])
    return buf.getvalue()


def _moodle(results: list[SubmissionResult], course: CourseConfig) -> str:
    buf, w = _writer()
    w.writerow(["username", course.assignment, *(f"{course.assignment}: {s}" for s in course.exercises)])
    for r in results:
        w.writerow([safe_cell(r.student), total_cell(r), *(exercise_cell(r, s) for s in course.exercises)])
    return buf.getvalue()


def _gradescope(results: list[SubmissionResult], course: CourseConfig) -> str:
    buf, w = _writer()
    w.writerow(["Name", "SID", "Email", "Total Score", *course.exercises])
    for r in results:
        w.writerow([safe_cell(r.student), safe_cell(r.student), "", total_cell(r),
                    *(exercise_cell(r, s) for s in course.exercises)])
    return buf.getvalue()
