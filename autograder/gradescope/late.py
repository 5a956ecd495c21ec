"""Late work on Gradescope: course.yml's late policy applied by the runner to Gradescope's own
submission time (submission_metadata.json `created_at`).

The due date is course.yml's `late.due` when it has one; else the one Gradescope gives this
student (`users[].assignment.due_date`, which carries an extension granted in Gradescope), else the
assignment's (`assignment.due_date`). Without `late:` in course.yml nothing is said and nothing is
taken off: late work is then Gradescope's own business (its late due date, after which it takes
no submission, and its penalty).
"""

from __future__ import annotations

from dataclasses import dataclass
from autograder.config.course import CourseConfig
from autograder.config.clock import course_zone, parse_due
from autograder.reports.final_grade import Grade
from autograder.intake.late_policy import Lateness, lateness


@dataclass(frozen=True)
class RunnerLate:
    lateness: Lateness | None     # None: no due date anywhere (said, nothing taken off)
    due_from: str                 # "course.yml" or "Gradescope"

    def penalty(self, raw: float) -> float:
        return self.lateness.penalty(raw) if self.lateness is not None else 0.0


def runner_late(course: CourseConfig, metadata: dict | None) -> RunnerLate | None:
    """The submission's standing against its due date, or None when course.yml has no `late:`."""
    from autograder.intake.submitted_at import parse_time

    late = course.late
    if late is None:
        return None
    zone = course_zone(late).zone
    meta = metadata if isinstance(metadata, dict) else {}
    assignment = meta.get("assignment") if isinstance(meta.get("assignment"), dict) else {}
    users = meta.get("users") if isinstance(meta.get("users"), list) else []
    own = users[0].get("assignment") if users and isinstance(users[0], dict) else None
    own = own if isinstance(own, dict) else {}
    if late.due is not None:
        due, due_from = parse_due(late.due, zone), "course.yml"
    else:
        given = _text(own.get("due_date")) or _text(assignment.get("due_date"))
        due, due_from = (parse_time(given, zone) if given else None), "Gradescope"
    if due is None:
        return RunnerLate(None, due_from)
    created = _text(meta.get("created_at"))
    when = parse_time(created, zone) if created else None
    return RunnerLate(lateness(late, due, when), due_from)


def _text(value) -> str:
    return value.strip() if isinstance(value, str) else ""


def late_lines(late: RunnerLate, raw: float, max_score: float) -> list[str]:
    """What results.json's top text says: when, the due date and where it came from, and the raw
    score, the penalty and the final score."""
    if late.lateness is None:
        return ["late work: course.yml has a late policy but neither it nor Gradescope gives a due date; "
                "no penalty applied"]
    grade = Grade.held(raw, max_score, late.lateness)
    lines = [f"Submission: {late.lateness.said()} (due date from {late.due_from})"]
    if grade.penalty:
        lines.append(grade.said())
    return lines
