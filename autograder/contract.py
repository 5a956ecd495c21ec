"""The exercise contract (docs/contract.md) as data, derived from the exercise descriptors
(autograder/exercise.py): the stems, what each graded name returns, what each stem may import.

The return kind tells the sandbox how to turn a submission's value into plain data:
"array" (float64 ndarray), ("tuple", k1, k2, ...), "float_dict_dict", "figure".
"""

from __future__ import annotations

from autograder.checks import EXERCISES

STEMS: tuple[str, ...] = tuple(EXERCISES)

# stem -> graded name -> return kind. Module-level constants (hand computation) are "array".
RETURNS: dict[str, dict[str, object]] = {stem: dict(e.returns) for stem, e in EXERCISES.items()}

# Which stems a submission file may import and get the kit's correct version of (so a wrong
# softmax in attention.py costs nothing elsewhere). attention.py may import none of them:
# every other stem is built on attention, and would hand it the answer.
PROVIDED: dict[str, tuple[str, ...]] = {stem: tuple(e.provided) for stem, e in EXERCISES.items()}
