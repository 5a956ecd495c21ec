"""The exercises and their checks, by stem, in the order they are graded and reported.

Found from the exercise descriptors (`EXERCISE` in each exercise's package here, `<stem>/__init__.py`,
or module, `<stem>.py`; see exercise.py). Each exercise's package also holds the mistakes it
recognises (misconceptions.py, mutants.py, recognisers.py); the modules in SHARED serve them all.
"""

from __future__ import annotations

import importlib
import pkgutil

from autograder.checks.base import Check
from autograder.checks.exercise import Exercise

# The modules here that are not exercises: the contract reads EXERCISES, so it is not imported
# while they are found.
SHARED = frozenset({"base", "contract", "exercise", "masks", "reference_cache"})


def _discovered() -> dict[str, Exercise]:
    """Every `EXERCISE` of the modules and packages here, in assignment order."""
    found = []
    for info in pkgutil.iter_modules(__path__):
        if info.name in SHARED:
            continue
        exercise = getattr(importlib.import_module(f"{__name__}.{info.name}"), "EXERCISE", None)
        if isinstance(exercise, Exercise):
            found.append(exercise)
    found.sort(key=lambda e: (e.order, e.stem))
    return {e.stem: e for e in found}


EXERCISES = _discovered()
CHECKS: dict[str, list[Check]] = {stem: exercise.checks for stem, exercise in EXERCISES.items()}


def check_ids() -> dict[str, list[str]]:
    return {stem: [c.id for c in checks] for stem, checks in CHECKS.items()}


def all_misconceptions() -> list:
    """Every exercise's catalogue entries, in assignment order (`attnkit misconceptions`, diagnosis)."""
    return [m for exercise in EXERCISES.values() for m in exercise.misconceptions]
