"""Recognisers of the attention exercise: a softmax's overflow and underflow, told by a property of
the answer (the rows that went non-finite) rather than by one exact wrong answer. They live in
autograder/judge/recognisers.py, which the handout's check.py applies too.

An answer predicate is (answer, expected, ctx, check) -> bool | None (None: compare with the
entry's mutants instead); see autograder/checks/misconception.py.
"""

from autograder.judge.recognisers import (  # noqa: F401 - the catalogue's recognisers
    EXP_OVERFLOW, EXP_UNDERFLOW, softmax_overflows, softmax_underflows)
