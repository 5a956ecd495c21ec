"""The instructor's changes to grades (`attnkit grade ... --overrides overrides.csv`, or
OUT/overrides.csv when it exists), merged into grades.csv, the exports and summary.json, each with
its audit trail: the original and the overridden score, the reason, who.

    student,check,points,reason,who
    alovelace,hand_computation.part_a.scores,1,right up to rounding (checked by hand),TA Kim
    ghopper,attention,9,late-day waiver,Prof. Diaz
    aturing,,excused,medical certificate,Prof. Diaz

`check` is a check id (that check's points), an exercise (its points, given to its checks in
order up to each one's maximum) or empty with `excused` (the whole assignment: status excused,
"EX" in Canvas's export, left out of the class's numbers). `student` is the student's id as
grades.csv's `student` column says it. The feedback pages keep what the grader found.
"""

from __future__ import annotations

import csv
import io
from dataclasses import dataclass, replace
from pathlib import Path

from autograder.config.course import CourseConfig
from autograder.intake.student_csv import csv_text
from autograder.results import SubmissionResult, Why

COLUMNS = ("student", "check", "points", "reason", "who")
EXCUSED_WORDS = ("excused", "ex")
MAX_BYTES = 4 * 1024 * 1024


class OverrideError(ValueError):
    """overrides.csv cannot be used; the message names the file and the lines."""


@dataclass(frozen=True)
class Override:
    student: str
    target: str                 # a check id, an exercise, or "" (the whole assignment)
    points: float | None        # None: excused
    reason: str
    who: str
    line: int


class Overrides:
    """The overrides of one file, by student."""

    def __init__(self, items: list[Override], source: str):
        self.source = source
        self.by_student: dict[str, list[Override]] = {}
        for item in items:
            self.by_student.setdefault(item.student, []).append(item)

    def excused(self, student: str) -> Override | None:
        return next((o for o in self.by_student.get(student, ()) if o.points is None), None)

    def apply(self, result: SubmissionResult) -> tuple[SubmissionResult, list[dict]]:
        """`result` with its student's overrides in, and their audit trail."""
        audit = []
        for o in self.by_student.get(result.student, ()):
            if o.points is None:
                audit.append(_audit(o, result.score, None))
                continue
            exercises = []
            for ex in result.exercises:
                if o.target == ex.stem:
                    left, checks = o.points, []
                    for c in ex.checks:
                        given = min(c.max_score, left)
                        left -= given
                        checks.append(_given(c, given))
                    audit.append(_audit(o, ex.score, o.points))
                    ex = replace(ex, checks=tuple(checks))
                elif any(c.check_id == o.target for c in ex.checks):
                    original = next(c.score for c in ex.checks if c.check_id == o.target)
                    audit.append(_audit(o, original, o.points))
                    ex = replace(ex, checks=tuple(_given(c, o.points) if c.check_id == o.target else c
                                                  for c in ex.checks))
                exercises.append(ex)
            result = replace(result, exercises=tuple(exercises))
        return result, audit

    def audit_absent(self, student: str) -> list[dict]:
        """The trail of a roster student with no submission (only `excused` applies)."""
        return [_audit(o, None, None) for o in self.by_student.get(student, ()) if o.points is None]


def _given(check, points: float):
    """`check` scored by the instructor: a check the grader failed on is graded now (its student's
    status follows), whatever else the grader found stays for the feedback."""
    return replace(check, score=points, reason=Why.none if check.reason == Why.grader_error else check.reason)


def _audit(o: Override, original: float | None, overridden: float | None) -> dict:
    return {"student": o.student, "check": o.target or "(all)", "original": original,
            "overridden": "excused" if o.points is None else overridden, "reason": o.reason, "who": o.who,
            "line": o.line}


def read_overrides(path: Path, course: CourseConfig, students: set[str]) -> Overrides:
    """Every row of `path`, checked against the course's checks and exercises and the class's
    students: any row that names an unknown student or check, or points out of range, is an
    OverrideError naming its line (all of them, before anything is written)."""
    path = Path(path)
    text = csv_text(path, OverrideError, "the overrides file", MAX_BYTES)
    reader = csv.reader(io.StringIO(text, newline=""))
    header = [h.strip().lower() for h in next(reader, [])]
    missing = [c for c in COLUMNS[:3] if c not in header]
    if missing:
        raise OverrideError(f"{path} line 1: no column {', '.join(missing)} (expected the header "
                            f"{','.join(COLUMNS)})")
    checks = {cid: cfg.points for ex in course.exercises.values() for cid, cfg in ex.checks.items()}
    items, problems, seen = [], [], {}
    for row in reader:
        line = reader.line_num
        if not any(c.strip() for c in row):
            continue
        cells = {h: (row[i].strip() if i < len(row) else "") for i, h in enumerate(header)}
        student, target, points = cells["student"], cells["check"], cells["points"]
        where = f"{path} line {line}"
        if student not in students:
            problems.append(f"{where}: no student {student!r} in this class or its roster (the id grades.csv's "
                            f"student column gives)")
            continue
        if points.lower() in EXCUSED_WORDS:
            value = None
        else:
            try:
                value = float(points)
            except ValueError:
                problems.append(f"{where}: points {points!r} is not a number (or `excused`)")
                continue
        if not target:
            if value is not None:
                problems.append(f"{where}: no check: give a check id or an exercise for points, or `excused`")
                continue
        elif target in course.exercises:
            top = course.max_points(target)
        elif target in checks:
            top = checks[target]
        else:
            problems.append(f"{where}: no check or exercise {target!r} in the course")
            continue
        if value is not None and not 0 <= value <= top:
            problems.append(f"{where}: {points} points for {target}, which is worth {top:g}")
            continue
        if (student, target) in seen:
            problems.append(f"{where}: {student} {target or '(all)'} is overridden on line {seen[(student, target)]} "
                            f"too")
            continue
        seen[(student, target)] = line
        items.append(Override(student, target, value, cells.get("reason", ""), cells.get("who", ""), line))
    if problems:
        more = f" (and {len(problems) - 10} more)" if len(problems) > 10 else ""
        raise OverrideError("; ".join(problems[:10]) + more)
    return Overrides(items, str(path))
