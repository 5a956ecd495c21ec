"""One word for where a student's submission stands, the same in grades.csv, summary.json, the
report, the terminal and the feedback page.

graded            code was graded (a score, whatever it is)
late              graded, handed in after the due date (course.yml `due:`)
nothing gradable  files were handed in, none the grader can grade (a .docx, a refused archive)
not submitted     nothing was handed in (an empty folder, a roster student with no submission)
excused           excused by the instructor (overrides.csv)
refused           the submission folder was refused (a link that could lead to someone else's files)
grader error      the grader failed on some of it (a crash, a broken sandbox, a stall): not the
                  student's doing; no total is given, and it is graded again by the next run
"""

from __future__ import annotations

from autograder.results import SubmissionResult, Why

GRADED = "graded"
LATE = "late"
NOTHING_GRADABLE = "nothing gradable"
NOT_SUBMITTED = "not submitted"
EXCUSED = "excused"
REFUSED = "refused"
GRADER_ERROR = "grader error"
STATUSES = (GRADED, LATE, NOTHING_GRADABLE, NOT_SUBMITTED, EXCUSED, REFUSED, GRADER_ERROR)
# The statuses whose total is a grade: the headline numbers are over these students.
SCORED = (GRADED, LATE)


def status_of(result: SubmissionResult | None) -> str:
    """The word for `result` (None: nothing handed in at all)."""
    if result is None:
        return NOT_SUBMITTED
    checks = result.checks
    if checks and all(c.reason == "refused" for c in checks):
        return REFUSED
    if any(c.reason == Why.grader_error for c in checks):
        return GRADER_ERROR
    if not any(_submitted(e) for e in result.exercises):
        return NOTHING_GRADABLE if any(c.reason == Why.nothing_gradable for c in checks) else NOT_SUBMITTED
    return GRADED


def _submitted(exercise) -> bool:
    return not exercise.checks or any(c.status != "missing" for c in exercise.checks)


def scores_over(summary: dict) -> str:
    """Which students the headline numbers are over, as the terminal and the report say it; the
    students with work but no grade in them (grader error, excused) named."""
    over, statuses = summary.get("scores_over") or {}, summary.get("statuses", {})
    said = "means over the graded" if set(over) <= {"graded"} else \
        "means over the " + ", ".join(f"{over[w]} {w}" for w in STATUSES if over.get(w))
    left = [f"{statuses[w]} {w}" for w in (GRADER_ERROR, EXCUSED) if statuses.get(w)]
    return said + (f"; not in them: {', '.join(left)}" if left else "")
