"""Hand answers that are another variant's key: copied numbers, flagged.

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
from autograder.config.course import CourseConfig
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


# Part A's weights take few values across variants (scores are small integers), so one answer can
# be a classmate's key by chance: a classmate is named only when this many answers are their key.
MIN_MATCHES = 2


def _flagged(result: CheckResult, other: str, note: str) -> CheckResult:
    return replace(result, matches_key_of=other, message=f"{note} ({result.message})" if result.message else note)


def keep_answer(result: CheckResult, answer) -> CheckResult:
    """A failed hand check under a variant, with the student's answer kept for the integrity pass."""
    if result.check_id not in KEY_NAMES:
        return result
    try:
        kept = np.asarray(answer, dtype=np.float64).round(6).tolist()
    except (TypeError, ValueError):
        return result
    return replace(result, answer=kept)


def _flag_matches(result, keys_of: dict[str, object], tolerance: float, note_of):
    """Each failed hand answer flagged with the first of `keys_of` (label -> a function giving that
    label's key) that at least MIN_MATCHES of the student's failed answers match."""
    failed = [c for c in result.checks if c.check_id in KEY_NAMES and c.answer is not None
              and not c.passed and not c.matches_key_of]
    if len(failed) < MIN_MATCHES:
        return result
    for label, key_of in keys_of.items():
        key = key_of()
        matched = {c.check_id for c in failed if _matches(c.answer, key[KEY_NAMES[c.check_id]], tolerance)}
        if len(matched) >= MIN_MATCHES:
            return _with_checks(result, lambda c: _flagged(c, label, note_of(label)) if c.check_id in matched else c)
    return result


def _with_checks(result, change):
    if isinstance(result, ExerciseResult):
        return replace(result, checks=tuple(change(c) for c in result.checks))
    return replace(result, exercises=tuple(_with_checks(e, change) for e in result.exercises))


def flag_published(result: ExerciseResult, course: CourseConfig) -> ExerciseResult:
    """Hand answers that are the key of the course's own numbers (the exercise as published): told
    on every path, as no classmate is needed to know them."""
    if not course.variants.enabled:
        return result
    return _flag_matches(result, {PUBLISHED_NUMBERS: lambda: answer_key(None)}, course.tolerances.hand,
                         lambda label: PUBLISHED_NOTE)


def flag_classmates(result: SubmissionResult, course: CourseConfig, identity: str,
                    classmates: Iterable[str]) -> SubmissionResult:
    """`result` with the failed hand answers that are a classmate's key (and so not the student's
    own, which they failed) flagged: matches_key_of names the classmate, the message says it without
    the name."""
    if not course.variants.enabled:
        return result
    others = {o: (lambda o=o: key_for(course, o)) for o in dict.fromkeys(classmates) if o and o != identity}
    return _flag_matches(result, others, course.tolerances.hand, lambda label: COPIED_NOTE)


def integrity_flags(results: Iterable[SubmissionResult]) -> list[IntegrityFlag]:
    """Every flagged hand answer of the class, for the instructor (report.html, summary.json)."""
    return [IntegrityFlag(r.student, c.check_id, c.matches_key_of)
            for r in results for c in r.checks if c.matches_key_of]
