"""The checks of every exercise, by stem, in the order they are graded and reported.

Derived from the exercise descriptors (`EXERCISE` in each exercise's package here, `<stem>/__init__.py`,
or module, `<stem>.py`; see autograder/exercise.py). Each exercise's package also holds the mistakes it
recognises (misconceptions.py, mutants.py, recognisers.py); base.py, masks.py and reference_cache.py
are shared by all.
"""

from __future__ import annotations

from autograder.checks.base import Check
from autograder.exercise import discover

EXERCISES = discover()
CHECKS: dict[str, list[Check]] = {stem: exercise.checks for stem, exercise in EXERCISES.items()}


def check_ids() -> dict[str, list[str]]:
    return {stem: [c.id for c in checks] for stem, checks in CHECKS.items()}
