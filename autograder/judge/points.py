"""Points: what a check earns and what an exercise's checks add up to, the grader's rule and check.py's.

A check that passed earns its points; any other verdict earns nothing. check.py alone has checks it
cannot decide (one that waits on another exercise of the student's): they count neither way.
"""

from __future__ import annotations

from typing import Iterable


def earned(status: str, points: float) -> float:
    """A check's score: its points when it passed, else 0."""
    return points if status == "passed" else 0.0


def added(scores: Iterable[float | None]) -> float:
    """The checks' scores added up; an undecided one (None) counts neither way."""
    return sum(score for score in scores if score is not None)
