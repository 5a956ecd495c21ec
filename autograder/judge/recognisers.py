"""Mistakes told by a property of the answer (the rows that went non-finite, a 16-bit float, a
statistic that grows like d, runs that do not follow their seed) rather than by one exact wrong
answer: a softmax's overflow and underflow, numbers computed in low precision, the scaling
experiment's mistakes (a random experiment's runs are never equal to a mutant's). The grader's
catalogues name these (autograder/checks/<stem>/misconceptions.py, through their exercise's
recognisers.py) and check.py applies the same ones, by the names its check data gives
(`RECOGNISERS`). Needs numpy.

A recogniser is (answer, expected, ctx, check) -> bool | None (None: compare with the entry's
mutants instead); of ctx only `ctx.inputs`, `ctx.dtypes` (the dtypes the answers came in, where
known), the scaling tolerance (`std_rel`) and the check's parameters are read (check.py's
`ctx.params`; the grader's check makes them), of check only its `id` and those parameters.
"""

from __future__ import annotations

import math

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


# ---------------------------------------------------------------- the scaling experiment

def std_rel(ctx) -> float:
    """How far a std may be from sqrt(d) or 1 (course.yml's tolerances.scaling.std_rel): the grader's
    Context holds the course, check.py's the check's parameters, which hold the same number."""
    course = getattr(ctx, "course", None)
    return course.tolerances.scaling.std_rel if course is not None else float(ctx.params["std_rel"])


def _std_close(answer, key: str, target, rel: float) -> bool:
    try:
        return all(abs(float(answer[d][key]) - target(d)) <= rel * target(d) for d in sorted(answer))
    except (KeyError, TypeError, ValueError):
        return False


def _judged_result(answer, check):
    """The result whose std a scaling check judges: the answer itself, the seed check's first run,
    the n_trials check's first run with many trials (properties.py: seed_problems, spread_problems)."""
    try:
        if check.id.endswith(".seed"):
            return answer[0]
        if check.id.endswith(".n_trials"):
            return answer[1][0]
    except (TypeError, IndexError, KeyError):
        return None
    return answer


STD_JUDGED = (".std", ".other_dims", ".seed", ".n_trials")   # checks that fail on a std that is off


def std_pattern(key: str, target):
    """On the checks that judge the std: `key` is close to target(d) for every d. Elsewhere:
    compare with the mutant, unless the answer's own `key` says otherwise (every check's answer
    holds all six statistics: a max_weight_scaled copied from the unscaled one is not "never
    scaled" when std_scaled is about 1)."""
    def matches(answer, expected, ctx, check):
        result = _judged_result(answer, check)
        if not isinstance(result, dict) or not result:
            return False
        fits = _std_close(result, key, target, std_rel(ctx))
        if not check.id.endswith(STD_JUDGED):
            return None if fits else False
        return fits
    return matches


# std_scaled grows like sqrt(d); shrinks like 1/sqrt(d); std_unscaled grows like d (the variance)
never_scaled = std_pattern("std_scaled", math.sqrt)
scaled_by_d = std_pattern("std_scaled", lambda d: 1 / math.sqrt(d))
variance_reported = std_pattern("std_unscaled", float)


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


def _check_params(ctx, check, expected) -> dict:
    """The check's parameters: check.py's ctx holds those shipped with it, the grader's check makes
    them (a compare_property's `params`)."""
    params = getattr(ctx, "params", None)
    if params is None:
        make = getattr(getattr(check, "compare", None), "params", None)
        params = make(ctx, expected) if make is not None else {}
    return params


def _asked_dims(params: dict) -> list[float] | None:
    """The dims a scaling check calls the experiment with, from its parameters: one run's
    (`dims`), the seed check's (`args`), the n_trials check's (`spread`). None: no dims asked."""
    for where in (params, params.get("args"), params.get("spread")):
        if isinstance(where, dict) and "dims" in where:
            return sorted(float(d) for d in where["dims"])
    return None


def dims_ignored(answer, expected, ctx, check) -> bool:
    """The results hold numeric keys, but not the dims the check asked for (the defaults,
    typically), in a result of the answer. Decided from the check's own parameters, not a reference
    run: check.py has no reference run of the experiment to compare with."""
    asked, got = _asked_dims(_check_params(ctx, check, expected)), _result_dicts(answer)
    if asked is None or not got:
        return False
    try:
        keys = [sorted(float(k) for k in r) for r in got]
    except (TypeError, ValueError):
        return False                  # keys that are not numbers: another mistake
    return any(k != asked for k in keys)


ENTROPY_COMPARED = (".entropy", ".other_dims")    # checks that compare the entropies with a reference run


def entropy_in_bits(answer, expected, ctx, check) -> bool | None:
    """Entropies in bits: some entropy of seq_len weights above log(seq_len), which no entropy in
    nats can be, and every one within log2(seq_len), where entropies in bits lie. On the checks that
    compare the entropies with a reference run: compare with the entry's mutants instead (None)."""
    if check.id.endswith(ENTROPY_COMPARED):
        return None
    params = _check_params(ctx, check, expected)
    seq_len = next((where["seq_len"] for where in (params, params.get("args"), params.get("spread"))
                    if isinstance(where, dict) and "seq_len" in where), None)
    try:
        values = [float(v) for r in _result_dicts(answer) for stats in r.values()
                  for k, v in stats.items() if str(k).startswith("entropy_")]
    except (TypeError, ValueError, AttributeError):
        return False
    if seq_len is None or not values or not all(math.isfinite(v) for v in values):
        return False
    eps = 1e-6
    return all(0.0 < v <= math.log2(seq_len) + eps for v in values) and any(v > math.log(seq_len) + eps for v in values)


def arguments_changed(answer, expected, ctx, check) -> bool:
    """On a check of the arguments (judge/properties.py, `arguments`): the function changed one in
    place, or its answer changed when they were one array or read-only."""
    from .properties import changed_problems

    try:
        return bool(changed_problems(answer, _check_params(ctx, check, expected)))
    except (TypeError, ValueError, KeyError, IndexError):
        return False


# The names the check data gives them by.
RECOGNISERS = {"arguments_changed": arguments_changed, "softmax_overflows": softmax_overflows, "softmax_underflows": softmax_underflows,
               "low_precision": low_precision, "never_scaled": never_scaled, "scaled_by_d": scaled_by_d,
               "variance_reported": variance_reported, "seed_ignored": seed_ignored,
               "n_trials_ignored": n_trials_ignored, "n_trials_off_by_one": n_trials_off_by_one,
               "dims_ignored": dims_ignored, "entropy_in_bits": entropy_in_bits}
