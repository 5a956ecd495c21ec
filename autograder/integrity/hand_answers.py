"""Hand answers that are another variant's key: copied numbers, flagged (issue 20.3).

With variants, each student computes attention by hand on their own numbers. A failed hand answer
that is right for the course's published numbers, or for a classmate's, and not for the student's
own, was most likely copied: it scores 0 like any wrong answer (the grade function compares with
the student's own key only), and is flagged. The student's feedback says the answer belongs to other
numbers without naming anyone; the instructor's report.html and summary.json's `integrity` list
name both students. A right answer for one's own numbers is never flagged (it passed).
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from typing import Iterable

import numpy as np

from autograder.checks.hand_computation import KEY_NAMES
from autograder.config import CourseConfig
from autograder.results import PUBLISHED_NUMBERS, CheckResult, ExerciseResult, SubmissionResult
from autograder.variants.keys import answer_key, key_for

# What the student reads (never who the other student is).
COPIED_NOTE = ("These numbers are the right answer for another variant of this exercise, not for yours: "
               "compute it with the numbers in your own handout (Q, K, V and X as they are given there).")
PUBLISHED_NOTE = ("These numbers are the right answer for the exercise's published numbers, not for yours: "
                  "compute it with the numbers in your own handout (Q, K, V and X as they are given there).")


@dataclass(frozen=True)
class IntegrityFlag:
    """One hand answer of `student` that is `other`'s key (summary.json's `integrity` list)."""
    student: str
    check_id: str
    other: str          # a classmate's id, or PUBLISHED_NUMBERS

    def to_dict(self) -> dict:
        return {"student": self.student, "check": self.check_id, "matches_key_of": self.other}


def _matches(answer, key: np.ndarray, tolerance: float) -> bool:
    try:
        got = np.asarray(answer, dtype=np.float64)
    except (TypeError, ValueError):
        return False
    return got.shape == key.shape and bool(np.all(np.abs(got - key) <= tolerance))


def _flagged(result: CheckResult, other: str, note: str) -> CheckResult:
    return replace(result, matches_key_of=other, message=f"{note} ({result.message})" if result.message else note)


def published_key_match(result: CheckResult, answer, course: CourseConfig) -> CheckResult:
    """A failed hand check under a variant: its answer kept (for the class pass), and flagged when it
    is the key of the course's own numbers (the exercise as published)."""
    name = KEY_NAMES.get(result.check_id)
    if name is None:
        return result
    kept = replace(result, answer=np.asarray(answer, dtype=np.float64).round(6).tolist())
    if _matches(answer, answer_key(None)[name], course.tolerances.hand):
        return _flagged(kept, PUBLISHED_NUMBERS, PUBLISHED_NOTE)
    return kept


def flag_classmates(result: SubmissionResult, course: CourseConfig, identity: str,
                    classmates: Iterable[str]) -> SubmissionResult:
    """`result` with each failed hand answer that is a classmate's key (and so not the student's own,
    which it failed) flagged: matches_key_of names the classmate, the message says it without the name."""
    if not course.variants.enabled:
        return result
    others = [c for c in dict.fromkeys(classmates) if c and c != identity]
    exercises = []
    for exercise in result.exercises:
        checks = []
        for check in exercise.checks:
            name = KEY_NAMES.get(check.check_id)
            if name is not None and check.answer is not None and not check.passed and not check.matches_key_of:
                other = next((o for o in others if _matches(check.answer, key_for(course, o)[name],
                                                            course.tolerances.hand)), None)
                if other is not None:
                    check = _flagged(check, other, COPIED_NOTE)
            checks.append(check)
        exercises.append(replace(exercise, checks=tuple(checks)))
    return replace(result, exercises=tuple(exercises))


def integrity_flags(results: Iterable[SubmissionResult]) -> list[IntegrityFlag]:
    """Every flagged hand answer of the class, for the instructor (report.html, summary.json)."""
    return [IntegrityFlag(r.student, c.check_id, c.matches_key_of)
            for r in results for c in r.checks if c.matches_key_of]
