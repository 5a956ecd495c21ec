"""One entry of an exercise's catalogue of misconceptions: a small wrong implementation (a
"mutant") of the reference, with the hint a student gets when their answers match it.

Each exercise keeps its entries in its own package, `CATALOGUE` in
autograder/checks/<stem>/misconceptions.py (its descriptor names that module: `catalogue=`);
adding a misconception is adding one entry there. One entry per (id, exercise); an entry may
carry `alternatives` (the same mistake made in another honest way, e.g. a fully blocked row
that becomes nan with a -inf fill instead of uniform with -1e9), and a `matches` predicate for
mistakes that are a property of the answer rather than one exact answer (hand-typed numbers
that are close but not close enough, a statistic off by a factor of sqrt(d) in a random
experiment).

An entry names the checks it applies to by the check objects of its exercise (or their ids;
an id may stop at a task, "attention.softmax", to mean all of that task's checks). A hint says
what went wrong, where to look, and gives a nudge; it never holds code to copy. The grader
puts a sentence about what it saw in the student's answer before it.

`candidates(check)`: the entries that apply to a check; `Diagnosis`: the entries that explain an
answer, with what was seen in it (autograder/diagnosis/explain.py finds them; an exercise that
weighs its answers together, the hand computation's chain, makes them too).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Callable

from autograder.judge import hints, raised, recognisers
from autograder.judge.answers import hint_text

Overrides = Callable[[], dict]


@dataclass(frozen=True)
class Misconception:
    id: str                                    # the contract's id, e.g. "no_scaling"
    stem: str                                  # the exercise it belongs to
    hint: str                                  # what went wrong, where to look, a nudge; no code
    overrides: Overrides                       # names of the reference replaced by wrong versions
    # the checks it applies to: Check objects of its exercise, or ids (an id may stop at a task or
    # the stem to mean all their checks); () = every check of the stem. Kept as ids.
    checks: tuple = ()
    alternatives: tuple[Overrides, ...] = ()   # the same mistake made another way (other mutants)
    # The same mistake written with torch: its answers are those of a mutant above (torch broadcasts
    # as numpy does), only its errors are torch's words. Run only where a raised error is diagnosed,
    # so explaining a wrong answer never imports torch in the grader (seconds of CPU, once per process).
    torch_alternatives: tuple[Overrides, ...] = ()
    # (answer, expected, ctx, check) -> True/False, or None to compare with the mutants instead.
    # `expected` is the reference's answer; the mutants (overrides) stay the example used by tests.
    matches: Callable[[Any, Any, Any, Any], bool | None] | None = None
    fallback: bool = False                     # considered only when no other entry fits
    # (RaisedError) -> bool: recognises the error this mistake raises by its text alone (`if mask:`).
    # Without it, an error is explained by a mutant raising the same error on the same inputs.
    raises: Callable[[Any], bool] | None = None
    # the construct its hint quotes (a pattern over the source, e.g. `~`): named only where the
    # student's file holds it (judge/quoted.py)
    quotes: str = ""
    # the functions its mistake is made in, where its mutants override more (a mask made the wrong
    # way round, which causal attention then uses): ruled out where the student got them all right
    lies_in: tuple[str, ...] = ()

    def __post_init__(self):
        object.__setattr__(self, "checks", tuple(getattr(c, "id", c) for c in self.checks))

    def applies_to(self, check_id: str) -> bool:
        return not self.checks or any(check_id == p or check_id.startswith(p.rstrip(".") + ".") for p in self.checks)

    def variants(self, *, errors: bool = False) -> list[dict]:
        """The mutants of this entry: the main one first, then the alternatives; with `errors` (a
        raised error to explain) the torch-written ones too."""
        more = self.torch_alternatives if errors else ()
        return [self.overrides(), *(alt() for alt in (*self.alternatives, *more))]


def low_precision(stem: str, checks: tuple, overrides: Overrides) -> Misconception:
    """The entry "computed in a 16-bit float" of an exercise, on `checks`, with `overrides` its example."""
    return Misconception("low_precision_dtype", stem, hints.LOW_PRECISION_HINT, overrides, checks,
                         matches=recognisers.low_precision, raises=raised.low_precision_error)


def argument_changed(stem: str, checks: tuple, overrides: Overrides) -> Misconception:
    """The entry "changes an argument in place" of an exercise, on its checks of the arguments
    (autograder/checks/arguments.py), with `overrides` its example: told by the property, or by the
    write a read-only argument refused (whose message names the line)."""
    return Misconception("argument_changed_in_place", stem, hints.ARGUMENT_CHANGED, overrides, checks,
                         matches=recognisers.arguments_changed, raises=raised.read_only_write)


@dataclass(frozen=True)
class Diagnosis:
    """What explains a wrong answer: the entries that fit, what was seen in it, and their hints."""
    ids: tuple[str, ...]           # the misconceptions that fit (empty: none fits, the hint is an observation)
    observation: str = ""          # what was seen in the answer ("position 0 attends to position 3")
    hints: tuple[str, ...] = ()    # each fitting misconception's hint, in the order of `ids`
    lead: str = ""                 # for an error: what was raised, said before the hints

    @property
    def hint(self) -> str:
        """What a student is shown for a visible check: the observation, then the mistake(s) (check.py
        says it with the same function)."""
        return hint_text(self.observation, self.hints, self.lead)


def candidates(check) -> list[Misconception]:
    """The entries of the check's exercise that apply to it."""
    from autograder.checks import EXERCISES

    exercise = EXERCISES.get(check.exercise)
    return [m for m in exercise.misconceptions if m.applies_to(check.id)] if exercise else []
