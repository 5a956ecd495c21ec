"""Recognisers of the hand computation: numbers typed a little off, or one early slip carried
through, told by a property of the answer rather than by one exact wrong answer.

An answer predicate is (answer, expected, ctx, check) -> bool | None; see
autograder/checks/misconception.py.
"""

from __future__ import annotations

import numpy as np

from autograder.judge.hand import IMPRECISE_TIMES, half_unit  # noqa: F401 - shared with check.py


def _hand_errors(answer, expected, ctx):
    got, exp = np.asarray(answer, dtype=np.float64), np.asarray(expected, dtype=np.float64)
    if got.shape != exp.shape or not np.isfinite(got).all():
        return None
    err = np.abs(got - exp)
    return err, err > ctx.course.tolerances.hand


HAND_CLOSE = 0.06      # an error below this is not a slip (a wrong product): hand_slip ignores it


def hand_imprecise(answer, expected, ctx, check) -> bool:
    """Some entry off by more than the tolerance (0.006), but every entry within a few times it
    (IMPRECISE_TIMES), plus the rounding of the decimals it was typed with: 0.7 for 0.6698 is
    imprecise, and so are 4 decimals 0.012 off; 4 decimals 0.05 off are another mistake."""
    found = _hand_errors(answer, expected, ctx)
    if found is None or not found[1].any():
        return False
    got = np.asarray(answer, dtype=np.float64)
    allowed = IMPRECISE_TIMES * ctx.course.tolerances.hand + half_unit(got)
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
