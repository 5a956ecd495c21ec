"""Recognisers: mistakes told by a property of the answer, or by the error they raise, rather
than by one exact wrong answer (reference/misconceptions.py uses them).

An answer predicate is (answer, expected, ctx, check) -> bool | None (None: compare with the
entry's mutants instead). An error predicate is (RaisedError) -> bool.
"""

from __future__ import annotations

import re
from typing import Callable

import numpy as np

EXP_OVERFLOW = 709.0   # np.exp(x) is inf above this (float64)


def _non_finite_rows(answer, expected, ctx) -> tuple[np.ndarray, np.ndarray] | None:
    """(rows of the input with a non-finite answer, the input) when the answer is non-finite where
    the reference is finite; None otherwise."""
    got = np.asarray(answer, dtype=np.float64)
    x = np.asarray(ctx.inputs.get("x"), dtype=np.float64)
    if got.shape != np.shape(expected) or got.shape != x.shape:
        return None
    bad = ~np.isfinite(got) & np.isfinite(expected)
    return (bad.any(axis=-1), x) if bad.any() else None


EXP_UNDERFLOW = -745.0  # np.exp(x) is 0 below this


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


def _hand_errors(answer, expected, ctx):
    got, exp = np.asarray(answer, dtype=np.float64), np.asarray(expected, dtype=np.float64)
    if got.shape != exp.shape or not np.isfinite(got).all():
        return None
    err = np.abs(got - exp)
    return err, err > ctx.course.tolerances.hand


HAND_CLOSE = 0.06      # an error below this is not a slip (a wrong product): hand_slip ignores it
IMPRECISE_TIMES = 3    # imprecise: every error within this many times the hand tolerance ...


def _half_unit(values: np.ndarray) -> np.ndarray:
    """Half a unit of the last decimal each number was typed with (0.67: 0.005; 0.7: 0.05); 0 for a
    number carried with more than 6 decimals (computed, not typed)."""
    half = np.zeros(values.shape)
    for k in range(6, -1, -1):           # the fewest decimals that write the number wins
        scaled = values * 10.0 ** k
        typed = np.abs(scaled - np.round(scaled)) <= 1e-6 * np.maximum(1.0, np.abs(scaled))
        half = np.where(typed, 0.5 * 10.0 ** -k, half)
    return half


def hand_imprecise(answer, expected, ctx, check) -> bool:
    """Some entry off by more than the tolerance (0.006), but every entry within a few times it
    (IMPRECISE_TIMES), plus the rounding of the decimals it was typed with: 0.7 for 0.6698 is
    imprecise, and so are 4 decimals 0.012 off; 4 decimals 0.05 off are another mistake."""
    found = _hand_errors(answer, expected, ctx)
    if found is None or not found[1].any():
        return False
    got = np.asarray(answer, dtype=np.float64)
    allowed = IMPRECISE_TIMES * ctx.course.tolerances.hand + _half_unit(got)
    return bool((found[0] <= allowed).all())


def hand_slip(answer, expected, ctx, check) -> bool:
    """One dot product wrong and carried through: one score (or a symmetric pair) off, or some rows
    off while the others are right (and weights still sum to 1 per row)."""
    found = _hand_errors(answer, expected, ctx)
    if found is None:
        return False
    err, wrong = found
    if not wrong.any() or err.max() <= HAND_CLOSE:
        return False
    got = np.asarray(answer, dtype=np.float64)
    if check.id.endswith("scores"):
        cells = [tuple(c) for c in np.argwhere(wrong)]
        return len(cells) == 1 or (len(cells) == 2 and cells[0] == cells[1][::-1])
    if check.id.endswith("weights") and not np.allclose(got.sum(axis=-1), 1.0, atol=0.01):
        return False
    return bool((~wrong.any(axis=-1)).any())          # at least one row entirely right


def _std_close(answer, dims, key, target: Callable[[int], float], ctx) -> bool:
    rel = ctx.course.tolerances.scaling.std_rel
    try:
        return all(abs(float(answer[d][key]) - target(d)) <= rel * target(d) for d in dims)
    except (KeyError, TypeError, ValueError):
        return False


def std_pattern(key: str, target: Callable[[int], float]):
    """On the std checks: `key` is close to target(d) for every d. Elsewhere: compare with the mutant,
    unless the answer's own `key` says otherwise (every check's answer holds all six statistics: a
    max_weight_scaled copied from the unscaled one is not "never scaled" when std_scaled is about 1)."""
    def matches(answer, expected, ctx, check):
        if not isinstance(answer, dict) or not answer:
            return False
        fits = _std_close(answer, sorted(answer), key, target, ctx)
        if not check.id.endswith((".std", ".other_dims")):
            return None if fits else False
        return fits
    return matches




# ---------------------------------------------------------------- the experiment's arguments

def _stats_equal(a, b) -> bool:
    try:
        return all(np.allclose(list(a[d].values()), list(b[d].values()), rtol=1e-12, atol=0) for d in a) and \
            sorted(a) == sorted(b)
    except (TypeError, KeyError, AttributeError, ValueError):
        return False


def n_trials_off_by_one(answer, expected, ctx, check) -> bool:
    """On the n_trials check: the single-trial run (the last) gives no numbers (nan, or zeros where
    a statistic cannot be 0) while the runs of 2 and more trials are plausible."""
    try:
        single = next(iter(answer[2][0].values()))
        several = next(iter(answer[0][0].values()))
        stats = np.array([float(single[k]) for k in ("std_unscaled", "entropy_unscaled", "max_weight_unscaled")])
        fine = np.array([float(several[k]) for k in ("std_unscaled", "entropy_unscaled", "max_weight_unscaled")])
    except (TypeError, ValueError, KeyError, IndexError, StopIteration, AttributeError):
        return False
    return bool(np.isfinite(fine).all() and (fine > 0).all() and (~np.isfinite(stats) | (stats == 0)).any())


# What numpy, torch and Python say when asked to stack, average or index no trial at all
EMPTY_WORDS = ("division by zero", "need at least one array", "zero-size array", "empty sequence", "with size 0",
               "mean of empty", "of 0 elements", "non-empty list of Tensors", "empty tensor")


def no_trial_error(error) -> bool:
    """On the n_trials check: an error about nothing to work on (a division by zero, an empty stack,
    mean or index), as when the number of trials, one short, is 0 for n_trials=1."""
    return error.type == "ZeroDivisionError" or any(words in error.text for words in EMPTY_WORDS)


def _few_trials_spread(answer) -> tuple[float, float] | None:
    """On the n_trials check (many seeds with few trials, a few with many): the spreads of
    std_unscaled across the seeds, (few, many), relative to their size (0.0: all the same)."""
    try:
        few, many = (np.array([float(next(iter(r.values()))["std_unscaled"]) for r in runs]) for runs in answer[:2])
    except (TypeError, ValueError, KeyError, StopIteration, AttributeError):
        return None
    scale = max(float(np.abs(few).mean()), 1e-300)
    spreads = tuple(float(np.std(v)) / scale for v in (few, many))
    return tuple(0.0 if s <= 1e-12 else s for s in spreads)


def seed_ignored(answer, expected, ctx, check) -> bool:
    """On the seed check (one seed twice, then another): the two same-seed runs differ, or the
    two seeds agree. On the n_trials check: all the seeds give the same numbers."""
    if check.id.endswith(".n_trials"):
        spreads = _few_trials_spread(answer)
        return spreads is not None and spreads[0] == 0.0
    try:
        first, again, other = answer
    except (TypeError, ValueError):
        return False
    return not _stats_equal(first, again) or _stats_equal(first, other)


def n_trials_ignored(answer, expected, ctx, check) -> bool:
    """On the n_trials check: the spread across seeds does not narrow with more trials (and the
    seeds do make a difference, or nothing about trials could be seen)."""
    spreads = _few_trials_spread(answer)
    return spreads is not None and spreads[0] > 0.0 and not spreads[1] < spreads[0] / 4


def _result_dicts(answer) -> list[dict]:
    """Every {d: {statistic: value}} result inside a scaling check's answer (one, or tuples of them)."""
    if isinstance(answer, dict):
        return [answer]
    if isinstance(answer, (list, tuple)):
        return [r for item in answer for r in _result_dicts(item)]
    return []


def dims_ignored(answer, expected, ctx, check) -> bool:
    """The results hold numeric keys, but not the dims asked for (the defaults, typically), in
    every result of the answer where the reference holds the dims asked for."""
    got, wanted = _result_dicts(answer), _result_dicts(expected)
    if not got or len(got) != len(wanted):
        return False
    try:
        keys = [sorted(float(k) for k in r) for r in got]
        asked = [sorted(float(k) for k in r) for r in wanted]
    except (TypeError, ValueError):
        return False                  # keys that are not numbers: another mistake
    return any(k != a for k, a in zip(keys, asked))
