"""Which exercises of a submission are in trouble (its code hung, crashed, could not be read, or
nothing in it could be graded): the rows of the report's and the terminal's trouble lists."""

from __future__ import annotations

import textwrap

from autograder.results import SubmissionResult

MESSAGE_WIDTH = 300      # the first line of a message, as the lists show it

# What the summary calls each reason a submission's code gave no answer (CheckResult.reason).
TROUBLE = {"timeout": "timed out", "crashed": "crashed", "load_error": "unreadable file",
           "not_run": "could not be run", "raised": "raised", "grader_error": "not graded (grader error)",
           "refused": "refused", "nothing_gradable": "nothing gradable"}
# The worse reason wins when one exercise has several.
_ORDER = ("grader_error", "refused", "nothing_gradable", "load_error", "not_run", "timeout", "crashed", "raised")
ALL_EXERCISES = "(all)"


def trouble(result: SubmissionResult) -> list[tuple[str, str, str]]:
    """(exercise, kind, message) of each exercise in trouble; one row "(all)" for a submission
    with nothing gradable (the same message on every exercise)."""
    rows = [(e.stem, *_why(e)) for e in result.exercises if _why(e)]
    if rows and all(row[1] == TROUBLE["nothing_gradable"] for row in rows) and len({row[1:] for row in rows}) == 1:
        return [(ALL_EXERCISES, *rows[0][1:])]
    return rows


def _why(exercise) -> tuple[str, str] | tuple[()]:
    """(kind, first line of the message) of the exercise's worst trouble, or () when its code ran:
    a wrong answer, a missing function or an untouched stub is not trouble."""
    # Files handed in but none gradable is trouble though nothing counts as submitted.
    troubled = [c for c in exercise.checks if c.reason in TROUBLE
                and (c.status in ("error", "failed") or c.reason == "nothing_gradable")]
    if not troubled:
        return ()
    # "raised" alone is ordinary (an exception in one function); it is listed only when nothing passed.
    worst = min(troubled, key=lambda c: _ORDER.index(c.reason))
    if worst.reason == "raised" and any(c.passed for c in exercise.checks):
        return ()
    return TROUBLE[worst.reason], first_line(worst.message)


def first_line(message: str, width: int = MESSAGE_WIDTH) -> str:
    """A message's first line, shortened at a word (never mid-word) when longer than `width`."""
    line = (message.splitlines() or [""])[0]
    return line if len(line) <= width else textwrap.shorten(line, width, placeholder=" ...")
