"""Mistakes told by a property of the answer (the rows that went non-finite) rather than by one
exact wrong answer: a softmax's overflow and underflow. The grader's catalogue names these
(autograder/checks/attention/recognisers.py re-exports them) and check.py applies the same ones,
by the names its check data gives (`RECOGNISERS`). Needs numpy.

A recogniser is (answer, expected, ctx, check) -> bool | None (None: compare with the entry's
mutants instead); of ctx only `ctx.inputs` is read, of check nothing.
"""

from __future__ import annotations

import numpy as np

EXP_OVERFLOW = 709.0   # np.exp(x) is inf above this (float64)
EXP_UNDERFLOW = -745.0  # np.exp(x) is 0 below this


def _non_finite_rows(answer, expected, ctx) -> tuple[np.ndarray, np.ndarray] | None:
    """(rows of the input with a non-finite answer, the input) when the answer is non-finite where
    the reference is finite; None otherwise."""
    got = np.asarray(answer, dtype=np.float64)
    x = np.asarray(ctx.inputs.get("x"), dtype=np.float64)
    if got.shape != np.shape(expected) or got.shape != x.shape:
        return None
    bad = ~np.isfinite(got) & np.isfinite(expected)
    return (bad.any(axis=-1), x) if bad.any() else None


def softmax_overflows(answer, expected, ctx, check) -> bool:
    """Non-finite weights in a row that only an overflowing exp() explains (its largest score is
    above 709, and not far below the array's maximum): no maximum subtracted."""
    found = _non_finite_rows(answer, expected, ctx)
    if found is None:
        return False
    rows, x = found
    top = x.max(axis=-1)[rows]
    return bool(((top > EXP_OVERFLOW) & (top - x.max() >= EXP_UNDERFLOW)).any())


def softmax_underflows(answer, expected, ctx, check) -> bool:
    """Non-finite weights where exp() underflowed to 0 everywhere in a row and 0/0 is nan (the
    maximum of the whole array subtracted, not each row's), and no row that only overflow explains."""
    found = _non_finite_rows(answer, expected, ctx)
    return found is not None and not softmax_overflows(answer, expected, ctx, check)


# The names the check data gives them by.
RECOGNISERS = {"softmax_overflows": softmax_overflows, "softmax_underflows": softmax_underflows}
