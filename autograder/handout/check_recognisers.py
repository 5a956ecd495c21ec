"""Mistakes told by a property of the answer (the rows that went non-finite, a 16-bit float)
rather than by one exact wrong answer: a softmax's overflow and underflow, numbers computed in
low precision. The grader's catalogue names these (autograder/checks/attention/recognisers.py and
autograder/diagnosis/misconceptions/recognisers.py re-export them) and check.py applies the same
ones, by the names its check data gives (`RECOGNISERS`). Needs numpy.

A recogniser is (answer, expected, ctx, check) -> bool | None (None: compare with the entry's
mutants instead); of ctx only `ctx.inputs` and `ctx.dtypes` (the dtypes the answers came in, where
known) are read, of check nothing.
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


LOW_PRECISION = ("float16", "bfloat16")


def low_precision_dtype(ctx, answer=None) -> str | None:
    """The 16-bit float dtype the answer came in (the student's dtypes, or the array's own)."""
    found = [d for d in LOW_PRECISION if d in getattr(ctx, "dtypes", ())]
    dtypes = [str(getattr(a, "dtype", "")) for a in (answer if isinstance(answer, (tuple, list)) else (answer,))]
    found += [d for d in LOW_PRECISION if d in dtypes]
    return found[0] if found else None


HALF_ROUNDING = 4e-3     # a few float16 epsilons (9.8e-4), relative to the array's scale: 16-bit rounding


def low_precision(answer, expected, ctx, check) -> bool:
    """Computed in a 16-bit float. Named whenever the answer came in one: with about 3 significant
    digits, inputs and sums are rounded before any other mistake could be seen. An answer cast back
    to float32 or float64 is recognised by its errors: spread over most entries, none larger than
    16-bit rounding (a mistake in the arithmetic moves some entries by far more)."""
    if low_precision_dtype(ctx, answer) is not None:
        return True
    pairs = list(zip(answer, expected)) if isinstance(expected, tuple) and isinstance(answer, (tuple, list)) \
        else [(answer, expected)]
    worst, spread = 0.0, False
    for got, exp in pairs:
        got, exp = np.asarray(got, dtype=np.float64), np.asarray(exp, dtype=np.float64)
        if got.shape != exp.shape or not np.isfinite(got).all() or not np.isfinite(exp).all() or not exp.size:
            return False
        err = np.abs(got - exp) / max(float(np.abs(exp).max()), 1.0)
        worst = max(worst, float(err.max()))
        spread = spread or bool((err > 1e-5).mean() > 0.25)
    return spread and 0.0 < worst <= HALF_ROUNDING


# The names the check data gives them by.
RECOGNISERS = {"softmax_overflows": softmax_overflows, "softmax_underflows": softmax_underflows,
               "low_precision": low_precision}
