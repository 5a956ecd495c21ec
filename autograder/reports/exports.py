"""Gradebook import files for learning platforms (`attnkit grade --export FORMAT`).

canvas          Canvas's gradebook import: the roster's columns naming a row (Student, ID, SIS
                User ID, SIS Login ID, Section, ...), then the assignment's column, with a
                "Points Possible" row under the header. Canvas matches rows on ID, SIS User ID
                or SIS Login ID.
moodle          Moodle's "Import grades - CSV file": username, one column per grade item, email
                and idnumber (under "Identify user by", map whichever the roster filled); with
                Moodle's grading worksheet as the roster, that worksheet with its Grade filled
                and its Feedback comments carrying a one-line summary of the grade.
gradescope-csv  Gradescope's score upload: Name, SID, Email, one column per exercise and a Total
                Score column; Gradescope matches SID or Email against its roster.

With course.yml's late policy, the exercise columns are followed by a late penalty column
(negative), so that a row's columns add up to its total (before the total is scaled to the
column's points, `--assignment`): raw, penalty, final, in that order, as every page says them.

Who each row is comes from the roster (`--roster`, autograder.intake.roster); without one, the
folder's name is the login (and the name), and Canvas's user id read from its download's file
names fills ID. The column (`--assignment`, autograder.intake.gradebook_column) is the roster's
own, scaled to its points. A roster student with no submission, and a submission handed in
empty, is an empty cell ("missing": 0 with --missing-as-zero for the first). Every text cell is
made spreadsheet safe; Canvas's and Moodle's files start with a byte order mark (ExportFormat.bom).
"""

from __future__ import annotations

import csv
import dataclasses
import io
from collections.abc import Sequence
from enum import Enum

from autograder.config.course import CourseConfig
from autograder.intake.gradebook_column import Target, scaled
from autograder.intake.roster import Enrolment
from autograder.reports.class_summary import StudentRow, student_row
from autograder.reports.final_grade import Grade, points
from autograder.reports.grades_csv import ordered, safe_cell, score_cell
from autograder.reports.status import EXCUSED
from autograder.results import SubmissionResult
from autograder.judge.words import counted


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
    penalty = (f"{target.column}: late penalty",) if course.late is not None else ()
    w.writerow(["username", *(f"{target.column}: {s}" for s in course.exercises), *penalty, target.column, "email",
                "idnumber"])
    for p, r in rows:
        w.writerow([safe_cell(p.login), *(_exercise(r, s) for s in course.exercises), *_penalty(r, course),
                    _total(r, course, target), safe_cell(p.email), safe_cell(p.sis_id)])
    return buf.getvalue()


def _penalty(row: StudentRow | None, course: CourseConfig) -> tuple[str, ...]:
    """The late penalty's cell (negative: the row's columns add up to its total), where course.yml
    has a late policy; empty where the total is."""
    if course.late is None:
        return ()
    if row is None or row.score is None or row.status == EXCUSED:
        return ("",)
    return (score_cell(-row.penalty) if row.penalty else "0",)


def _moodle_worksheet(rows, course: CourseConfig, target: Target) -> str:
    """Moodle's grading worksheet written back whole, its Grade filled and its Feedback comments
    given a one-line summary of the grade: what the assignment's "Upload grading worksheet" reads
    (rows are matched on Identifier; a submission matching no row of it cannot be uploaded and is
    left out: the report lists it). Moodle's own cells come back as they were."""
    from autograder.intake.roster import _norm

    buf, w = _writer()
    w.writerow(target.header)
    grade = target.header.index(target.column)
    normal = [_norm(h) for h in target.header]
    comments = normal.index(FEEDBACK_COMMENTS) if FEEDBACK_COMMENTS in normal else None
    for p, r in rows:
        if not p.cells:
            continue
        cells = [safe_cell(c) for c in p.cells]
        cells[grade] = _total(r, course, target)
        if comments is not None and comments < len(cells):
            cells[comments] = safe_cell(_with_summary(p.cells[comments], _summary(r, course, target)))
        w.writerow(cells)
    return buf.getvalue()


# The worksheet's column of the comments feedback plugin (Moodle's "Feedback comments"), normalised.
FEEDBACK_COMMENTS = "feedbackcomments"
SUMMARY_START = "attnkit: "        # how the kit's line in a comment is known again (a worksheet of a run before)


def _summary(row: StudentRow | None, course: CourseConfig, target: Target) -> str:
    """The grade in one line, as the feedback page says it: raw, penalty, final (and in the
    worksheet's points), how many checks passed, when it came."""
    if row is None or row.score is None or row.status == EXCUSED:
        return ""
    said = Grade(row.raw, _course_points(course), row.penalty, target.points).said()
    passed = row.checks.count("P")
    parts = [f"{SUMMARY_START}{said}", f"{passed} of {counted(len(row.checks), 'check')} passed", row.lateness,
             "your feedback page says what failed and why" if passed < len(row.checks) else ""]
    return "; ".join(p for p in parts if p) + "."


def _with_summary(existing: str, summary: str) -> str:
    """The comment cell with the kit's line in it: a comment of the instructor's is kept, the
    kit's line of an earlier run replaced."""
    kept = [line for line in existing.splitlines() if line.strip() and not line.startswith(SUMMARY_START)]
    return "\n".join([*kept, summary] if summary else kept)


def _gradescope(rows, course: CourseConfig, target: Target) -> str:
    """Gradescope's upload, in the course's points: the column another LMS's roster names
    (`--assignment`, a worksheet's Maximum Grade) is not Gradescope's."""
    target = dataclasses.replace(target, points=None)
    buf, w = _writer()
    penalty = ("Late Penalty",) if course.late is not None else ()
    w.writerow(["Name", "SID", "Email", *course.exercises, *penalty, "Total Score"])
    for p, r in rows:
        w.writerow([safe_cell(p.name), safe_cell(p.sis_id or p.login), safe_cell(p.email),
                    *(_exercise(r, s) for s in course.exercises), *_penalty(r, course), _total(r, course, target)])
    return buf.getvalue()
