"""Gradebook import files for learning platforms (`attnkit grade --export FORMAT`).

canvas          Canvas's gradebook import: Student, ID, SIS User ID, SIS Login ID, Section, then
                one column per assignment, with a "Points Possible" row under the header.
                Canvas matches rows on ID, SIS User ID or SIS Login ID.
moodle          Moodle's "Import grades - CSV file": username, one column per grade item, email
                and idnumber (under "Identify user by", map whichever the roster filled).
gradescope-csv  Gradescope's score upload: Name, SID, Email and a Total Score column (plus one
                column per exercise); Gradescope matches SID or Email against its roster.

Who each row is comes from the roster (`--roster`, autograder.intake.roster): name, login, SIS
id, LMS id and email; without one, the folder's name is the login (and the name), and Canvas's
user id read from its download's file names fills ID. A roster student with no submission is a
row with a 0; a submission that was handed in empty is an empty cell (the platforms leave those
ungraded). Every text cell is made spreadsheet safe; Canvas's and Moodle's files start with a
byte order mark (see ExportFormat.bom).
"""

from __future__ import annotations

import csv
import io
from collections.abc import Sequence
from enum import Enum

from autograder.config import CourseConfig
from autograder.intake.roster import Enrolment
from autograder.reports.class_summary import StudentRow, student_row
from autograder.reports.grades_csv import ordered, safe_cell, score_cell
from autograder.results import SubmissionResult


class ExportFormat(str, Enum):
    CANVAS = "canvas"
    MOODLE = "moodle"
    GRADESCOPE_CSV = "gradescope-csv"

    @property
    def filename(self) -> str:
        return f"export-{self.value}.csv"

    @property
    def bom(self) -> bool:
        """Whether the file starts with a UTF-8 byte order mark: Excel needs one to read names
        with accents right, and Canvas's and Moodle's importers skip it."""
        return self is not ExportFormat.GRADESCOPE_CSV


def export(fmt: ExportFormat, results: list[SubmissionResult], course: CourseConfig,
           enrolment: Enrolment | None = None) -> str:
    stems: dict[tuple, tuple] = {}
    return export_rows(fmt, [student_row(r, course, stems) for r in ordered(results)], course, enrolment)


def export_rows(fmt: ExportFormat, rows: Sequence[StudentRow], course: CourseConfig,
                enrolment: Enrolment | None = None) -> str:
    """The export from the summary's rows (what finish_run has once it has read the class), in
    their order, then a row for each roster student who handed in nothing."""
    fmt = ExportFormat(fmt)
    enrolment = enrolment or Enrolment({})
    people = [*((enrolment.person(row.student), row) for row in rows),
              *((p, None) for p in sorted(enrolment.absent, key=lambda p: p.key))]
    text = {ExportFormat.CANVAS: _canvas, ExportFormat.MOODLE: _moodle,
            ExportFormat.GRADESCOPE_CSV: _gradescope}[fmt](people, course)
    return ("\ufeff" if fmt.bom else "") + text


def _writer() -> tuple[io.StringIO, "csv._writer"]:
    buf = io.StringIO()
    return buf, csv.writer(buf, lineterminator="\r\n")


def _max(course: CourseConfig) -> str:
    return f"{sum(course.max_points(s) for s in course.exercises):g}"


def _total(row: StudentRow | None) -> str:
    if row is None:
        return "0"                # on the roster, nothing handed in: a 0
    return score_cell(row.score)      # handed in empty: an empty cell


def _exercise(row: StudentRow | None, stem: str) -> str:
    return score_cell(row.exercises.get(stem) if row is not None else None)


def _canvas(rows, course: CourseConfig) -> str:
    buf, w = _writer()
    w.writerow(["Student", "ID", "SIS User ID", "SIS Login ID", "Section", course.assignment])
    w.writerow(["Points Possible", "", "", "", "", _max(course)])
    for p, r in rows:
        w.writerow([safe_cell(p.name), safe_cell(p.lms_id), safe_cell(p.sis_id), safe_cell(p.login), "", _total(r)])
    return buf.getvalue()


def _moodle(rows, course: CourseConfig) -> str:
    buf, w = _writer()
    w.writerow(["username", course.assignment, *(f"{course.assignment}: {s}" for s in course.exercises), "email",
                "idnumber"])
    for p, r in rows:
        w.writerow([safe_cell(p.login), _total(r), *(_exercise(r, s) for s in course.exercises), safe_cell(p.email),
                    safe_cell(p.sis_id)])
    return buf.getvalue()


def _gradescope(rows, course: CourseConfig) -> str:
    buf, w = _writer()
    w.writerow(["Name", "SID", "Email", "Total Score", *course.exercises])
    for p, r in rows:
        w.writerow([safe_cell(p.name), safe_cell(p.sis_id or p.login), safe_cell(p.email), _total(r),
                    *(_exercise(r, s) for s in course.exercises)])
    return buf.getvalue()
