"""One descriptor per exercise: everything the kit knows about an exercise, in one place.

Each module `autograder/checks/<stem>.py` ends with `EXERCISE = Exercise(...)`: its stem, its
title, where it comes in the assignment, what each graded name returns (how the sandbox turns
a submission's value into plain data), which other stems a submission may import (the kit's
correct version is provided), whether it needs torch, and its checks. The misconceptions that
explain its wrong answers are the catalogue's entries with that stem (reference/misconceptions.py).
The contract (autograder/contract.py), the list of stems, the pytest items and the course's
check ids all derive from these descriptors; adding an exercise is writing its reference,
its solution, its checks module and its course.yml entry.

Return kinds: "array" (float64 ndarray), ("tuple", k1, k2, ...), "float_dict_dict", "figure".
"""

from __future__ import annotations

import importlib
import pkgutil
from dataclasses import dataclass, field

from autograder.checks.base import Check

PAIR = ("tuple", "array", "array")        # (output, weights)


@dataclass(frozen=True)
class Exercise:
    stem: str                                   # the file a student writes: <stem>.py or <stem>.ipynb
    title: str                                  # the default title (course.yml may give another)
    order: int                                  # where it comes in the assignment
    returns: dict[str, object]                  # graded name -> return kind (see the module docstring)
    checks: list[Check]
    provided: tuple[str, ...] = ()              # stems it may import, answered by the kit's reference
    needs_torch: bool = False                   # a graded name is a torch.nn.Module
    notes: dict[str, str] = field(default_factory=dict)   # anything else worth saying, by topic

    @property
    def misconceptions(self) -> list:
        """The catalogue's entries for this exercise: mutants, recognisers and hints."""
        from reference.misconceptions import CATALOGUE

        return [m for m in CATALOGUE if m.stem == self.stem]

    def __post_init__(self):
        for check in self.checks:
            if check.exercise != self.stem:
                raise ValueError(f"check {check.id} does not belong to exercise {self.stem}")


def discover() -> dict[str, Exercise]:
    """Every `EXERCISE` of the modules in autograder/checks, in assignment order."""
    import autograder.checks as package

    found = []
    for info in pkgutil.iter_modules(package.__path__):
        module = importlib.import_module(f"{package.__name__}.{info.name}")
        exercise = getattr(module, "EXERCISE", None)
        if isinstance(exercise, Exercise):
            found.append(exercise)
    found.sort(key=lambda e: (e.order, e.stem))
    return {e.stem: e for e in found}
