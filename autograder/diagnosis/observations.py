"""What was seen in a wrong answer, said in one sentence ("position 0 attends to position 3"):
found from the answer's properties, not from any mutant. The diagnosis puts it before the
mistake it names, or gives it alone when no mistake fits.

Which observer looks at which answer is said by each exercise's descriptor
(``Exercise.observe``: graded name -> observer, autograder/checks/exercise.py), with the observers
made in autograder/judge/observations.py (the handout's check.py says the same sentences with that
very module): ``attention(causal=..., heads=...)``, ``probabilities(name)``, ``mask_entries()``,
``provenance(name)``, ``hand_values(prefix)``. Any other observer is
``(check, inputs, answer, expected, ctx) -> str | None`` (ctx: the comparison's Context, or None).
Here the grader asks the descriptor's observer, with the course's hand tolerance.
"""

from __future__ import annotations

import warnings
from typing import TYPE_CHECKING, Any

import numpy as np

from autograder.judge.observations import Observer

if TYPE_CHECKING:
    from autograder.checks.base import Check, Context


def observe(check: Check, inputs: dict, answer: Any, expected: Any, ctx: Context | None = None) -> str | None:
    """One sentence about what is wrong with the answer, from its properties; None if nothing specific.
    The exercise's descriptor says which observer looks at the check's function."""
    from autograder.checks import EXERCISES

    exercise = EXERCISES.get(check.exercise)
    observer = exercise.observe.get(check.function) if exercise is not None else None
    if observer is None:
        return None
    if isinstance(observer, Observer):
        return observer.see(check.id, inputs, answer, expected, _hand_tolerance(observer, ctx))
    with warnings.catch_warnings(), np.errstate(all="ignore"):
        warnings.simplefilter("ignore")
        return observer(check, inputs, answer, expected, ctx)


def _hand_tolerance(observer: Observer, ctx: Context | None) -> float | None:
    """What the check allows a hand answer's entry to be off by: the course's, or the default one."""
    if observer.kind != "hand_values":
        return None
    if ctx is not None:
        return ctx.course.tolerances.hand
    from autograder.config.course import Tolerances

    return Tolerances().hand
