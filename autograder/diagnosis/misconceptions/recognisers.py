"""Recognisers several exercises share: mistakes told by a property of the answer (computed in a
16-bit float), or by the error they raise (`if mask:` on an array, `K.T` on a batch, ...), rather
than by one exact wrong answer. An exercise's own recognisers are in its package
(autograder/checks/<stem>/recognisers.py).

An answer predicate is (answer, expected, ctx, check) -> bool | None (None: compare with the
entry's mutants instead). An error predicate is (RaisedError) -> bool.
"""

from __future__ import annotations

import re

import numpy as np


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


# ---------------------------------------------------------------- errors, recognised by their text

def truth_value_of_array(error) -> bool:
    """`if mask:` on an array or tensor of more than one element (numpy's and torch's words)."""
    return error.type in ("ValueError", "RuntimeError") and (
        "truth value of an array with more than one element is ambiguous" in error.text
        or "Boolean value of Tensor with more than one value is ambiguous" in error.text)


SHAPE_ERRORS = ("mismatch in its core dimension", "must match the size of tensor", "could not be broadcast",
                "cannot be multiplied", "Expected size for first two dimensions", "shapes cannot be",
                "not aligned")                                       # np.dot's words


# `.T`, `.transpose()` and `np.transpose(K)` with no axes reverse every axis of a batch
REVERSES_ALL_AXES = re.compile(r"\.T\b|\.transpose\(\s*\)|\btranspose\(\s*[\w.]+\s*\)")


def transpose_all_axes(error) -> bool:
    """A shape error raised on a line that reverses every axis of an array (`.T`, `.transpose()`)."""
    return bool(REVERSES_ALL_AXES.search(error.operation)) and any(words in error.text for words in SHAPE_ERRORS)


# axes counted from the front: .transpose(1, 2), swapaxes(K, 1, 2), .transpose(0, 2, 1), .permute(0, 2, 1)
FRONT_AXES = re.compile(r"(\.transpose|\.permute|swapaxes|\.swapdims|\.movedim)\((\s*[A-Za-z_][\w.]*\s*,)?\s*\d+\s*,\s*\d+\s*"
                        r"(,\s*\d+\s*)?\)")
AXIS_ERRORS = SHAPE_ERRORS + ("Dimension out of range", "axes don't match array", "out of bounds for array")


def transpose_fixed_axes(error) -> bool:
    """A shape or axis error raised on a line that swaps axes counted from the front (1 and 2),
    the last two only for a 3-D array."""
    return bool(FRONT_AXES.search(error.operation)) and any(words in error.text for words in AXIS_ERRORS)


def boolean_index_error(error) -> bool:
    """Indexing the scores with a boolean mask of another shape (numpy's and torch's words)."""
    return error.type == "IndexError" and ("boolean index did not match indexed array" in error.text
                                           or ("The shape of the mask" in error.text
                                               and "does not match the shape of the indexed tensor" in error.text))


def invert_error(error) -> bool:
    """`~` on a float mask (numpy's and torch's words)."""
    return error.type == "TypeError" and ("ufunc 'invert' not supported" in error.text
                                          or "(operator.invert) is only implemented on integer and Boolean" in error.text)


def low_precision_error(error) -> bool:
    """An operation refused to mix a 16-bit float with another dtype."""
    return any(word in error.text for word in ("Half", "float16", "BFloat16", "bfloat16"))
