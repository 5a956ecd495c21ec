"""What a failed check tells the student beyond its message, and the misconceptions it rests on,
as one value.

The hint text and the ids recorded on the result (CheckResult.misconceptions: the tags of
results.json, the counts of summary.json and the class report) are made together here, from the
same Diagnosis, so a hint a student reads is always one the instructor's counts include. The
course's hint policy (`hints: diagnose | generic | off`) is applied here, once.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

from autograder.checks.base import Check
from autograder.config.course import CourseConfig
from autograder.judge.answers import GENERIC_ERROR_HINT   # the student's checker says the same

if TYPE_CHECKING:    # the diagnosis is imported where a check failed (a cold `attnkit check`)
    from autograder.diagnosis.explain import Diagnosis

GENERIC_HINT = ("Compare your function with its docstring step by step: the shapes after each line, "
                "the axis each operation works on, and the mask convention (1 = may attend).")


@dataclass(frozen=True)
class Advice:
    """What a check's result says to the student, and the misconceptions it records."""
    text: str = ""                      # CheckResult.hint: what the student is shown
    recorded: tuple[str, ...] = ()      # CheckResult.misconceptions: tags, summary.json, the report
    shown: tuple[str, ...] = ()         # the ids whose catalogue hint `text` holds

    def __post_init__(self):
        unrecorded = [m for m in self.shown if m not in self.recorded]
        if unrecorded:   # a hint the class report would not count: a bug in the kit, not the student's
            raise ValueError(f"hint shown for {unrecorded} but not recorded ({self.recorded})")


NONE = Advice()


def decide_advice(check: Check, status: str, found: Diagnosis | None, course: CourseConfig, *,
                  hidden: bool, raised: bool = False) -> Advice:
    """The hint and the ids recorded for one check, by the course's policy.

    off: nothing, not even the ids. generic: the same nudge for every wrong answer or error, the
    ids still recorded for the instructor. diagnose: what was seen and the mistake(s) named; on a
    hidden check (unless the course shows them) what kind of input failed and what to try, with the
    mistake named but nothing seen in the hidden inputs.
    """
    if course.hints == "off":
        return NONE
    ids = found.ids if found is not None else ()
    if status not in ("failed", "error"):
        return Advice(recorded=ids)
    if course.hints == "generic":
        return Advice(GENERIC_HINT, recorded=ids)
    if hidden and not course.show_hidden:
        lead = (f"A hidden check failed ({check.title}): {check.advice}." if check.advice
                else f"A hidden check failed: {check.title}. Try inputs like these yourself.")
        return Advice(" ".join([lead, *found.hints]) if ids else lead, recorded=ids, shown=ids)
    if found is not None and found.hint:
        return Advice(found.hint, recorded=ids, shown=ids)
    return Advice(GENERIC_ERROR_HINT if raised else "", recorded=ids)
