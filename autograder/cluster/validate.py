"""The client's check of a worker's answer: JSON text that must be a result of this course for
this student, scored as the grader scores (full points for a passed check, none otherwise).
A worker is trusted to run the kit, but its answer crossed a network: it is read as data."""

from __future__ import annotations

import json
import math

from autograder.config.course import CourseConfig
from autograder.results import SubmissionResult

MAX_ANSWER = 16 * 1024 * 1024
STATUSES = {"passed", "failed", "error", "not_implemented", "missing"}


class BadAnswer(ValueError):
    """A worker's answer that is not a valid result (its message says what is wrong)."""


class WorkerRefused(RuntimeError):
    """A worker where the sandbox's jail does not hold: it grades nobody (--no-isolation to grade anyway)."""


def parse_answer(text: str, student: str, course: CourseConfig) -> SubmissionResult:
    """The SubmissionResult in a worker's answer, or BadAnswer (an "error" answer included)."""
    if not isinstance(text, str) or len(text) > MAX_ANSWER:
        raise BadAnswer("the worker's answer is not JSON text of a sensible size")
    try:
        data = json.loads(text)
    except ValueError as err:
        raise BadAnswer(f"the worker's answer is not JSON ({err})") from None
    if not isinstance(data, dict):
        raise BadAnswer("the worker's answer is not a JSON object")
    if "refused" in data:
        raise WorkerRefused(str(data["refused"])[:500])
    if "error" in data:
        raise BadAnswer(f"the worker could not grade it: {str(data['error'])[:500]}")
    try:
        result = SubmissionResult.from_dict(data["result"])
    except (KeyError, TypeError, ValueError, AttributeError) as err:
        raise BadAnswer(f"the worker's answer is not a result ({type(err).__name__}: {err})") from None
    _check_matches(result, student, course)
    return result


def _check_matches(result: SubmissionResult, student: str, course: CourseConfig) -> None:
    if result.student != student:
        raise BadAnswer(f"the worker answered for {result.student!r}, not {student!r}")
    if result.seed != course.seed or result.assignment != course.assignment:
        raise BadAnswer("the worker graded with another seed or assignment than the course's")
    if not isinstance(result.duration_s, (int, float)) or not math.isfinite(result.duration_s):
        raise BadAnswer("the worker's answer has no valid duration")
    stems = tuple(e.stem for e in result.exercises)
    if set(stems) != set(course.exercises) or len(stems) != len(course.exercises):
        raise BadAnswer(f"the worker graded exercises {stems}, not the course's {tuple(course.exercises)}")
    for ex in result.exercises:
        wanted = course.exercises[ex.stem].checks
        ids = [c.check_id for c in ex.checks]
        if sorted(ids) != sorted(wanted) or len(ids) != len(set(ids)):
            raise BadAnswer(f"the worker's checks of {ex.stem} are not the course's")
        for c in ex.checks:
            cfg = wanted[c.check_id]
            expected = cfg.points if c.status == "passed" else 0.0
            if (c.status not in STATUSES or c.exercise != ex.stem or c.max_score != cfg.points
                    or c.score != expected or c.hidden != cfg.hidden):
                raise BadAnswer(f"the worker's result for {c.check_id} is not scored as the course says")
