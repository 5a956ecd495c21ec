"""One descriptor per exercise: everything the kit knows about an exercise, in one place.

Each exercise's package `autograder/checks/<stem>/` (or module, `<stem>.py`, when small) holds
`EXERCISE = Exercise(...)` in its `__init__.py`: its stem, its
title, where it comes in the assignment, what each graded name returns (how the sandbox turns
a submission's value into plain data), which other stems a submission may import (the kit's
correct version is provided), its checks, the observer that looks at
each graded function's wrong answers (autograder/judge/observations.py), the pictures its failed
checks get on the feedback page (autograder/reports/pictures.py), the catalogue module whose
`CATALOGUE` holds its misconceptions (mutants and hints, the entries with its stem: its own
`misconceptions.py`, beside its `mutants.py` and `recognisers.py`), and its manually graded
written questions. The contract (contract.py), the list of stems, the
pytest items, diagnosis, the nbgrader course and the course's check ids all derive from these
descriptors; adding an exercise is writing its reference, its solution, its checks module (or
package) and its course.yml entry.

Return kinds: "array" (float64 ndarray), ("tuple", k1, k2, ...), "float_dict_dict", "figure".
"""

from __future__ import annotations

import importlib
from dataclasses import dataclass, field
from typing import Callable

from autograder.checks.base import Check

PAIR = ("tuple", "array", "array")        # (output, weights)


@dataclass(frozen=True)
class WrittenQuestion:
    """A manually graded question at the end of the exercise's nbgrader notebook."""
    grade_id: str
    points: float
    question: str      # markdown
    answer: str        # the model answer (markdown): nbgrader replaces it by "YOUR ANSWER HERE"
    stem: str = ""     # filled in from the exercise that asks it


@dataclass(frozen=True)
class Exercise:
    """An exercise, described once: its file, what it returns, its checks and its hints."""
    stem: str                                   # the file a student writes: <stem>.py or <stem>.ipynb
    title: str                                  # the default title (course.yml may give another)
    order: int                                  # where it comes in the assignment
    returns: dict[str, object]                  # graded name -> return kind (see the module docstring)
    checks: list[Check]
    provided: tuple[str, ...] = ()              # stems it may import, answered by the kit's reference
    # check's function (the id's second part) -> what to say about a wrong answer (observations.py)
    observe: dict[str, Callable] = field(default_factory=dict)
    catalogue: str | None = None                # the module whose CATALOGUE holds its entries (None: none)
    written: tuple[WrittenQuestion, ...] = ()   # manually graded questions (the nbgrader course)
    # function or function.case -> the picture a failed check gets on the feedback page
    # (autograder/reports/pictures.py: "weights" for attention answers, drawn as weights or as an
    # output by what the check compares; "scaling"; "figure")
    pictures: dict[str, str] = field(default_factory=dict)
    # Names of the reference besides the graded ones that a mutant may replace: functions of a check's
    # inputs (the hand computation's `hand_answers`, which gives its answers for a student's variant).
    hooks: tuple[str, ...] = ()
    # (found, record, expected_of) -> {check id: Diagnosis}: failed checks explained with the student's
    # other answers (autograder/diagnosis/explain.py `weighed`): the hand computation's chain of steps
    together: Callable | None = None

    @property
    def misconceptions(self) -> list:
        """The catalogue's entries for this exercise: mutants, recognisers and hints."""
        if self.catalogue is None:
            return []
        return [m for m in importlib.import_module(self.catalogue).CATALOGUE if m.stem == self.stem]

    def __post_init__(self):
        for check in self.checks:
            if check.exercise != self.stem:
                raise ValueError(f"check {check.id} does not belong to exercise {self.stem}")
        functions = {c.function for c in self.checks}
        unknown = sorted(set(self.observe) - functions)
        if unknown:
            raise ValueError(f"exercise {self.stem}: observers for {unknown}, which no check calls")
        tails = [c.id.split(".", 1)[1] for c in self.checks]
        unknown = sorted(k for k in self.pictures if not any(t == k or t.startswith(k + ".") for t in tails))
        if unknown:
            raise ValueError(f"exercise {self.stem}: pictures for {unknown}, which names no check")
        object.__setattr__(self, "written", tuple(
            q if q.stem == self.stem else WrittenQuestion(q.grade_id, q.points, q.question, q.answer, self.stem)
            for q in self.written))
