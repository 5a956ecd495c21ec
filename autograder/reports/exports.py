"""Gradebook import files for learning platforms (`attnkit grade --export FORMAT`).

canvas          Canvas's gradebook import: the roster's columns naming a row (Student, ID, SIS
                User ID, SIS Login ID, Section, ...), then the assignment's column, with a
                "Points Possible" row under the header. Canvas matches rows on ID, SIS User ID
                or SIS Login ID.
moodle          Moodle's "Import grades - CSV file": username, one column per grade item, email
                and idnumber (under "Identify user by", map whichever the roster filled); with
                Moodle's grading worksheet as the roster, that worksheet with its Grade filled.
gradescope-csv  Gradescope's score upload: Name, SID, Email and a Total Score column (plus one
                column per exercise); Gradescope matches SID or Email against its roster.

Who each row is comes from the roster (`--roster`, autograder.intake.roster); without one, the
folder's name is the login (and the name), and Canvas's user id read from its download's file
names fills ID. The column (`--assignment`, autograder.intake.gradebook_column) is the roster's
own, scaled to its points. A roster student with no submission, and a submission handed in
empty, is an empty cell ("missing": 0 with --missing-as-zero for the first). Every text cell is
made spreadsheet safe; Canvas's and Moodle's files start with a byte order mark (ExportFormat.bom).
"""

from __future__ import annotations

import csv
import io
from collections.abc import Sequence
from enum import Enum

from autograder.config.course import CourseConfig
from autograder.intake.gradebook_column import Target, scaled
from autograder.intake.roster import Enrolment
from autograder.reports.class_summary import StudentRow, student_row
from autograder.reports.grades_csv import ordered, safe_cell, score_cell
from autograder.reports.status import EXCUSED
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
           enrolment: Enrolment | None = None, target: Target | None = None) -> str:
    """The export of `results` as they are (finish_run's exports also merge the overrides)."""
    stems: dict[tuple, tuple] = {}
    return export_rows(fmt, [student_row(r, course, stems) for r in ordered(results)], course, enrolment, target)


def export_rows(fmt: ExportFormat, rows: Sequence[StudentRow], course: CourseConfig,
                enrolment: Enrolment | None = None, target: Target | None = None,
                excused: set[str] = frozenset()) -> str:
    """The export from the summary's rows (what finish_run has once it has read the class), in
    their order, then a row for each roster student who handed in nothing. `target`: the LMS's
    column to write into (autograder.intake.gradebook_column; default a new one named after the
    course's assignment); `excused`: the ids of roster students with no submission the instructor
    excused (a row's own status says it for the others)."""
    fmt = ExportFormat(fmt)
    enrolment = enrolment or Enrolment({})
    target = target or Target(course.assignment)
    people = [*((enrolment.person(row.student), row) for row in rows),
              *((p, EXCUSED_ROW if p.key in excused else None)
                for p in sorted(enrolment.absent, key=lambda p: p.sort_key))]
    text = {ExportFormat.CANVAS: _canvas, ExportFormat.MOODLE: _moodle,
            ExportFormat.GRADESCOPE_CSV: _gradescope}[fmt](people, course, target)
    return ("\ufeff" if fmt.bom else "") + text


# A roster student with no submission whom the instructor excused.
EXCUSED_ROW = StudentRow("", None, (), (), 0.0, "", EXCUSED)


def _writer() -> tuple[io.StringIO, "csv._writer"]:
    buf = io.StringIO()
    return buf, csv.writer(buf, lineterminator="\r\n")


def _course_points(course: CourseConfig) -> float:
    return sum(course.max_points(s) for s in course.exercises)


def _total(row: StudentRow | None, course: CourseConfig, target: Target, excused_word: bool = False) -> str:
    """The column's cell: the score in the column's points; empty for a roster student who handed
    in nothing ("missing" to the LMS; 0 with --missing-as-zero) and for a submission handed in
    empty (the platforms leave both ungraded)."""
    if row is None:
        return "0" if target.missing_as_zero else ""
    if row.status == EXCUSED:       # Canvas's import excuses a student on "EX"; the others have no such cell
        return "EX" if excused_word else ""
    return score_cell(None if row.score is None else scaled(row.score, _course_points(course), target))


def _exercise(row: StudentRow | None, stem: str) -> str:
    return score_cell(row.exercises.get(stem) if row is not None else None)


# What Canvas's columns that name a row hold, for a row that is not the roster's (no roster given,
# or a submission matching no row).
_CANVAS_DEFAULT = ("Student", "ID", "SIS User ID", "SIS Login ID", "Section")
_CANVAS_FIELD = {"student": "name", "id": "lms_id", "sisuserid": "sis_id", "sisloginid": "login"}


def _canvas(rows, course: CourseConfig, target: Target) -> str:
    """Canvas's import: the roster's columns naming each row (Section included), then the one
    assignment column; every other assignment and total of the roster is left out, so nothing
    else in Canvas's gradebook is touched."""
    from autograder.intake.roster import _norm

    who = target.who or _CANVAS_DEFAULT
    buf, w = _writer()
    w.writerow([*who, target.column])
    w.writerow(["Points Possible", *("" for _ in who[1:]), f"{target.points or _course_points(course):g}"])
    for p, r in rows:
        if p.cells and target.header:
            cells = target.cells(p.cells, who)
        else:
            cells = [getattr(p, _CANVAS_FIELD.get(_norm(c), ""), "") if _norm(c) in _CANVAS_FIELD else "" for c in who]
        w.writerow([*(safe_cell(c) for c in cells), _total(r, course, target, excused_word=True)])
    return buf.getvalue()


def _moodle(rows, course: CourseConfig, target: Target) -> str:
    if target.worksheet:
        return _moodle_worksheet(rows, course, target)
    buf, w = _writer()
    w.writerow(["username", target.column, *(f"{target.column}: {s}" for s in course.exercises), "email",
                "idnumber"])
    for p, r in rows:
        w.writerow([safe_cell(p.login), _total(r, course, target), *(_exercise(r, s) for s in course.exercises),
                    safe_cell(p.email), safe_cell(p.sis_id)])
    return buf.getvalue()


def _moodle_worksheet(rows, course: CourseConfig, target: Target) -> str:
    """Moodle's grading worksheet written back whole, its Grade filled: what the assignment's
    "Upload grading worksheet" reads (rows are matched on Identifier; a submission matching no
    row of it cannot be uploaded and is left out: the report lists it)."""
    buf, w = _writer()
    w.writerow(target.header)
    grade = target.header.index(target.column)
    for p, r in rows:
        if not p.cells:
            continue
        cells = [safe_cell(c) for c in p.cells]
        cells[grade] = _total(r, course, target)
        w.writerow(cells)
    return buf.getvalue()


def _gradescope(rows, course: CourseConfig, target: Target) -> str:
    buf, w = _writer()
    w.writerow(["Name", "SID", "Email", "Total Score", *course.exercises])
    for p, r in rows:
        w.writerow([safe_cell(p.name), safe_cell(p.sis_id or p.login), safe_cell(p.email), _total(r, course, target),
                    *(_exercise(r, s) for s in course.exercises)])
    return buf.getvalue()
