"""Recognisers of the scaling experiment: a random experiment's runs are never equal to a mutant's,
so its mistakes are told by properties of the answer (a statistic that grows like d, runs that do
not follow their seed, n_trials, dims) or by the error they raise.

An answer predicate is (answer, expected, ctx, check) -> bool | None (None: compare with the
entry's mutants instead). An error predicate is (RaisedError) -> bool. See
autograder/diagnosis/misconceptions/entry.py.
"""

from __future__ import annotations

from typing import Callable

import numpy as np


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
