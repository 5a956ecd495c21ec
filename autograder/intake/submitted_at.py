"""When each submission was handed in, from what the class folder's layout and the roster carry:

nbgrader         submitted/<student>/<assignment>/timestamp.txt, as nbgrader's exchange writes it
Canvas           `LATE_` in the download's file names says late, not when: the time comes from
                 `--submitted-at TIMES.csv` (student,submitted_at), else it is unknown
Moodle           the grading worksheet given as the roster: "Last modified (submission)"
any layout       `--submitted-at TIMES.csv` (student,submitted_at), which wins over the others

Gradescope       on Gradescope, its runner reads submission_metadata.json's `created_at`
                 (autograder/gradescope/late.py); an "Export Submissions" folder graded here gives
                 each submission's `:created_at:` from submission_metadata.yml (intake/gradescope_export.py)

A time without a zone (Moodle writes its worksheet in the downloading user's zone and says not
which) is read in course.yml's `late.timezone`, else in the due date's own offset, and the run
says which (config.clock.course_zone). nbgrader's timestamps carry their zone (UTC).
"""

from __future__ import annotations

from datetime import datetime, timezone
from pathlib import Path

from autograder.intake.student_csv import joined, student_rows
from autograder.intake.students import Student

WORKSHEET_TIME = "lastmodifiedsubmission"


class TimesError(ValueError):
    """A --submitted-at file that cannot be used (the message says file and line)."""


def parse_time(text: str, zone, zoneless: list | None = None) -> datetime | None:
    """The time `text` writes (ISO 8601, or as Moodle writes it: "Monday, 2 March 2026, 11:59 PM"),
    in its own zone, else in `zone`; None if it is not a time. `zoneless` collects the texts read
    in `zone`."""
    from dateutil import parser

    try:
        when = parser.parse(text.strip())
    except (ValueError, OverflowError):
        return None
    if when.tzinfo is not None:
        return when
    if zoneless is not None:
        zoneless.append(text)
    return when.replace(tzinfo=zone)


def read_times(path: Path, zone, students: set[str], zoneless: list | None = None) -> dict[str, datetime]:
    out, problems = {}, []
    for where, student, text in student_rows(path, "submitted_at", TimesError):
        when = parse_time(text, zone, zoneless)
        if student not in students:
            problems.append(f"{where}: no student {student!r} in this class")
        elif when is None:
            problems.append(f"{where}: {text!r} is not a date and time")
        else:
            out[student] = when
    if problems:
        raise TimesError(joined(problems))
    return out


def layout_time(student: Student, cells: dict[str, str], zone, zoneless: list | None = None) -> datetime | None:
    """The time the layout carries for `student` (nbgrader's timestamp.txt, Moodle's worksheet
    row `cells`, by normalised header), or None."""
    stamp = Path(student.folder) / "timestamp.txt"
    # Only where nbgrader's exchange wrote it (submitted/<student>/<assignment>/): in any other
    # folder a timestamp.txt is the student's to write.
    nbgrader_layout = Path(student.folder).parent.parent.name == "submitted"
    if nbgrader_layout and not student.uploads and not student.refused:
        try:
            if stamp.is_file() and not stamp.is_symlink() and stamp.stat().st_size < 200:
                found = parse_time(stamp.read_text(encoding="utf-8", errors="replace"), timezone.utc)
                if found is not None:
                    return found
        except OSError:
            pass
    worksheet = cells.get(WORKSHEET_TIME, "")
    if not worksheet or worksheet == "-":      # Moodle's "-": nothing submitted, no time
        return None
    when = parse_time(worksheet, zone, zoneless)
    if when is None:
        raise ValueError(f"'Last modified (submission)' is {worksheet!r}, not a date and time")
    return when


def class_lateness(course, course_dir: Path, class_list, header: tuple[str, ...] = (),
                   times_csv: Path | None = None, layout_times: dict[str, str] | None = None,
                   roster: Path | None = None) -> tuple[dict, list[str]]:
    """(student id -> Lateness for every submission of `class_list`, what the run should say of
    the times' zone) with course.yml `late:` set: their due date (an extension's, else the
    course's), their time (see the module; `layout_times`: the download's own, by the key it gave
    each student, lms.ClassFolder.times; `roster`: the file `header` and the rows' cells are from),
    the penalty. Raises LateError or TimesError naming the file and line of a bad row."""
    from autograder.config.clock import course_zone
    from autograder.intake.roster import _norm
    from autograder.intake.late_policy import LateError, lateness, parse_due, read_extensions

    late = course.late
    if late.due is None:
        raise LateError("course.yml late: has no `due:` (a due date); only Gradescope's own runner can take the "
                        "assignment's due date from Gradescope, here it must be given")
    zone = course_zone(late)
    due = parse_due(late.due, zone.zone)
    zoneless: list[str] = []
    ids = {s.name for s in class_list.students} | {p.key for p in class_list.enrolment.absent}
    extended = read_extensions(course_dir / late.extensions, zone.zone, ids) if late.extensions else {}
    given = read_times(times_csv, zone.zone, ids, zoneless) if times_csv else {}
    names = [_norm(h) for h in header]
    out, problems = {}, []
    for s in class_list.students:
        person = class_list.enrolment.people.get(s.name)
        cells = dict(zip(names, person.cells)) if person is not None and person.cells else {}
        listed = (layout_times or {}).get(s.given_as or s.name)
        if s.name in given:
            when = given[s.name]
        elif listed is not None:     # the download's own record: never a timestamp.txt the student uploaded
            when = parse_time(listed, zone.zone, zoneless) if listed else None
        else:
            try:
                when = layout_time(s, cells, zone.zone, zoneless)
            except ValueError as err:      # a worksheet row whose time cannot be read: said, never "on time"
                problems.append(f"{roster or 'the roster'} line {person.line}: {err}")
                continue
        out[s.name] = lateness(late, extended.get(s.name, due), when, flagged_late=s.lms_late)
    if problems:
        raise TimesError(joined(problems))
    said = [f"late work: {len(zoneless)} submission times written without a zone (as {zoneless[0]!r}) were read "
            f"in {zone.said}"] if zoneless else []
    if late.timezone and zone.mismatch(due):
        said.append(f"late work: {zone.mismatch(due)}")
    return out, said
