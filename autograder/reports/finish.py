"""Everything written at the end of a class run, in one place: grades.csv, summary.json,
report.html, each student's feedback page as HTML, and the gradebook exports asked for.

`finish_run` is called by `attnkit grade` (grading.local_grading.grade_class) and by any other way
of grading a class (a distributed run): the same results give the same files.
"""

from __future__ import annotations

import hashlib
import json
from datetime import datetime, timezone
from pathlib import Path

from autograder.intake.gradebook_column import Target
from autograder.intake.roster import Enrolment
from autograder.config.course import CourseConfig, course_json
from autograder.integrity.hand_answers import integrity_flags
from autograder.reports.class_summary import SummaryTally
from autograder.reports.exports import ExportFormat, export_rows
from autograder.reports.feedback_html import feedback_html
from autograder.reports.grades_csv import GradesTable, override_said, with_sources
from autograder.reports.overrides import Overrides
from autograder.reports.feedback import feedback_markdown, grade_of
from autograder.reports.final_grade import Grade
from autograder.reports.status import EXCUSED, GRADED, LATE, NOT_SUBMITTED, status_of
from autograder.results import SubmissionResult, dump_lines, write_atomic


def finish_run(out: Path, results: list[SubmissionResult], course: CourseConfig, *,
               exports: tuple[ExportFormat | str, ...] = (), enrolment: Enrolment | None = None,
               preflight=None, similarity: dict | None = None, target: Target | None = None,
               overrides: Overrides | None = None, regraded: str | None = None,
               lateness: dict | None = None) -> dict:
    """Write OUT/grades.csv, OUT/summary.json, OUT/report.html, OUT/feedback/<student>.html and
    OUT/export-<format>.csv for each of `exports`; return the summary. `enrolment` says who each
    submission is (intake.roster.enrol): with a roster, grades.csv and the exports name each
    student and list the roster's students who handed in nothing. `similarity`: the code
    similarity across the class (integrity.class_code.compare_class), shown, never graded.
    `target`: the LMS's gradebook column the exports write into (intake.gradebook_column);
    `overrides`: the instructor's changes (reports.overrides), merged with their audit trail;
    `regraded`: the one student this run graded again (`attnkit grade --student`); `lateness`:
    each student's intake.late_policy.Lateness (course.yml `late:`): the penalty is taken off
    the score in grades.csv, the exports and the numbers, raw score and penalty beside it."""
    from autograder.reports.report_html import report_pieces

    out = Path(out)
    max_total = sum(course.max_points(s) for s in course.exercises)
    excused = {s for s in (overrides.by_student if overrides else ()) if overrides.excused(s)}
    table = GradesTable(tuple(course.exercises), enrolment, max_total,
                        missing_as_zero=target is not None and target.missing_as_zero,
                        excused=excused if overrides is not None else None, late=course.late is not None)
    tally = SummaryTally(course)
    flags, unwritten, audit = [], [], []
    for result, source in with_sources(results):   # one read of each stored result, for everything
        if course.variants.enabled:      # hand answers that are another variant's key (autograder/integrity)
            flags += integrity_flags((result,))
        graded, trail = overrides.apply(result) if overrides is not None else (result, [])
        audit += trail
        changes = tuple(override_said(t) for t in trail if t.get("overridden") != "excused")
        # The feedback page says what the grader found, and the grade the gradebook gets: the
        # instructor's overrides said, and counted in it.
        grade = grade_of(result, course, (lateness or {}).get(result.student),
                         target.points if target is not None else None, graded if changes else None, changes)
        shown = enrolment.shown(result.student) if enrolment else None
        try:
            write_feedback_html(out, result, course, source, shown, grade)
            if changes:      # the Markdown page was written as the student was graded, before the overrides
                write_atomic(out / "feedback" / f"{result.student}.md", feedback_markdown(result, course, shown, grade))
        except OSError as err:       # a full disk: said after the grades and the summary are written
            unwritten.append(err)
        result = graded
        status = EXCUSED if result.student in excused else None
        late = (lateness or {}).get(result.student) if course.late is not None else None
        if late is not None and late.late and status is None and status_of(result) == GRADED:
            status = LATE
        table.add(result, status, trail, late)
        tally.add(result, status, late, "; ".join(override_said(t) for t in trail))
    write_atomic(out / "grades.csv", table.text())
    summary = tally.summary()
    summary["generated"] = datetime.now(timezone.utc).isoformat(timespec="seconds")
    if preflight is not None:
        summary["preflight"] = preflight.to_dict()
    if overrides is not None:
        absent = [p.key for p in enrolment.absent] if enrolment is not None else []
        summary["overrides"] = audit + [a for key in absent for a in overrides.audit_absent(key)]
        for key in absent:
            if key in excused:
                summary["statuses"][EXCUSED] = summary["statuses"].get(EXCUSED, 0) + 1
    if regraded is not None:
        summary["regraded"] = {"student": regraded, "at": summary["generated"]}
    if course.variants.enabled:
        summary["integrity"] = [flag.to_dict() for flag in flags]
    if enrolment is not None and enrolment.roster:
        # Each student's name by their id, in the order of last names (the report's order).
        people = [*((key, p) for key, p in enrolment.people.items() if p.line), *((p.key, p) for p in enrolment.absent)]
        summary["names"] = {key: person.listed or key for key, person in sorted(people, key=lambda kv: kv[1].sort_key)}
        absent = sorted(enrolment.absent, key=lambda p: p.sort_key)
        if absent:     # on the roster, nothing handed in: counted with the class's statuses
            unexcused = [p for p in absent if p.key not in excused]
            if unexcused:
                summary["statuses"][NOT_SUBMITTED] = summary["statuses"].get(NOT_SUBMITTED, 0) + len(unexcused)
        summary["roster"] = {"not_submitted": [p.listed or p.key for p in absent],
                             "not_submitted_ids": [p.key for p in absent],
                             "not_on_roster": list(enrolment.unmatched),
                             "missing_as_zero": target is not None and target.missing_as_zero}
    if enrolment is not None and (enrolment.claims or enrolment.not_students or enrolment.not_read):
        # Whose work is in doubt, and what was graded for nobody: said to the instructor, never graded.
        summary["identity"] = {"claims": [c.to_dict() for c in enrolment.claims],
                               "not_students": [{"who": who, "why": why} for who, why in enrolment.not_students],
                               "not_read": [{"name": name, "why": why} for name, why in enrolment.not_read]}
    if similarity is not None:
        summary["similarity"] = similarity["pairs"]
        summary["similarity_compared"] = similarity["compared"]
    write_atomic(out / "summary.json", dump_lines(summary))
    write_atomic(out / "report.html", report_pieces(summary))
    for fmt in exports:
        fmt = ExportFormat(fmt)
        write_atomic(out / fmt.filename, export_rows(fmt, summary["rows"], course, enrolment, target, excused))
    if unwritten:
        raise unwritten[0]
    return summary


def write_feedback_html(out: Path, result: SubmissionResult, course: CourseConfig, source: str | None = None,
                        shown: str | None = None, grade: Grade | None = None) -> Path:
    """The HTML feedback page, redrawn only when the result or the course changed (a resume of a
    large class does not draw every picture again). `source`: the digest of the result file's
    text the result was read from or written as (stored_results.digest), which says what the
    result says; without it, the result is written out as JSON to be hashed. `shown`: the student's
    name from the roster; `grade`: the late penalty and the gradebook's points it is said with."""
    path = Path(out) / "feedback" / f"{result.student}.html"
    late = "" if grade is None else "\0".join((grade.said(), grade.lateness.said() if grade.lateness else "",
                                                   *grade.changes))
    shown = None if shown == result.student else shown
    said = (f"result file {source}" if source is not None
            else json.dumps(result.to_dict(), sort_keys=True, default=str))
    stamp = hashlib.sha256(said.encode("utf-8", "surrogateescape") + b"\0"
                           + course_json(course).encode("utf-8", "surrogateescape")
                           + b"\0" + (shown or "").encode("utf-8", "surrogateescape")
                           + b"\0" + late.encode("utf-8", "surrogateescape")).hexdigest()
    mark = f"<!-- attnkit {stamp} -->"
    try:
        with path.open(encoding="utf-8") as fh:
            if fh.readline(64) and fh.readline(200).strip() == mark:
                return path
    except (OSError, ValueError):
        pass
    page = feedback_html(result, course, shown, grade)
    doctype, rest = page.split("\n", 1)
    write_atomic(path, f"{doctype}\n{mark}\n{rest}")
    return path
