"""One word for where a student's submission stands, the same in grades.csv, summary.json, the
report, the terminal and the feedback page.

graded            code was graded (a score, whatever it is)
late              graded, handed in after the due date (course.yml `due:`)
nothing gradable  files were handed in, none the grader can grade (a .docx, a refused archive)
not submitted     nothing was handed in (an empty folder, a roster student with no submission)
excused           excused by the instructor (overrides.csv)
refused           the submission folder was refused (a link that could lead to someone else's files)
"""

from __future__ import annotations

from autograder.results import SubmissionResult, Why

GRADED = "graded"
LATE = "late"
NOTHING_GRADABLE = "nothing gradable"
NOT_SUBMITTED = "not submitted"
EXCUSED = "excused"
REFUSED = "refused"
STATUSES = (GRADED, LATE, NOTHING_GRADABLE, NOT_SUBMITTED, EXCUSED, REFUSED)


def status_of(result: SubmissionResult | None) -> str:
    """The word for `result` (None: nothing handed in at all)."""
    if result is None:
        return NOT_SUBMITTED
    checks = result.checks
    if checks and all(c.reason == "refused" for c in checks):
        return REFUSED
    if not any(_submitted(e) for e in result.exercises):
        return NOTHING_GRADABLE if any(c.reason == Why.nothing_gradable for c in checks) else NOT_SUBMITTED
    return GRADED


def _submitted(exercise) -> bool:
    return not exercise.checks or any(c.status != "missing" for c in exercise.checks)
