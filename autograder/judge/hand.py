"""A hand-computed answer (the hand_computation exercise): its shape, its rows, the step following
from your own earlier answers, and whether it was rounded early: check.py's judgement of it.

The grader's chain (autograder/checks/hand_computation/chain.py) reads rounding as this does.
Needs numpy.
"""

from __future__ import annotations

import math

import numpy as np

from .answers import Outcome, array_problem, weights_problem


IMPRECISE_TIMES = 3    # imprecise: every error within this many times the hand tolerance ...
# A number typed with no decimal (1 for 0.96) is not read as rounded: one decimal is the
# roughest rounding allowed for.
ROUGHEST_HALF_UNIT = 0.05
ROUNDED_LOSES = "the values are graded after hand-in and will lose points"


def half_unit(values: np.ndarray) -> np.ndarray:
    """Half a unit of the last decimal each number was typed with (0.67: 0.005; 0.7: 0.05); 0 for a
    number carried with more than 6 decimals (computed, not typed)."""
    half = np.zeros(values.shape)
    for k in range(6, -1, -1):           # the fewest decimals that write the number wins
        scaled = values * 10.0 ** k
        typed = np.abs(scaled - np.round(scaled)) <= 1e-6 * np.maximum(1.0, np.abs(scaled))
        half = np.where(typed, 0.5 * 10.0 ** -k, half)
    return half


def off_by_more_than_rounding(answer: np.ndarray, target: np.ndarray, tol: float, times: float = 1.0) -> np.ndarray:
    """The entries of `answer` further from `target` than the tolerance (times `times`) and half a
    unit of the decimal each was typed with."""
    return np.abs(answer - target) > times * tol + np.minimum(half_unit(answer), ROUGHEST_HALF_UNIT) + 1e-12


def hand_row_atol(weights: np.ndarray, atol: float) -> float:
    """How far from 1 a row of hand-typed weights may sum: the grader accepts each entry within
    `atol` of the exact weights, whose rows sum to 1, so a row it accepts sums to 1 within its
    length times `atol` (0.99 for three weights rounded to 2 decimals is such a row)."""
    return weights.shape[-1] * atol + 1e-9


def rounded_early(answer: np.ndarray, exact: np.ndarray, tol: float) -> bool:
    """Off `exact` by more than the tolerance, by rounding alone (the grader's `hand_imprecise`)."""
    if answer.shape != exact.shape or not np.isfinite(exact).all():
        return False
    return bool((np.abs(answer - exact) > tol).any()) and not off_by_more_than_rounding(
        answer, exact, tol, IMPRECISE_TIMES).any()


def _step_value(step: str, mine: list[np.ndarray]) -> np.ndarray:
    """What a step makes of the values it follows from (the exact value, carried)."""
    if step == "matmul":
        return mine[0] @ mine[1]
    if step == "matmul_transposed":
        return mine[0] @ mine[1].T
    if step == "divided_by_sqrt":
        return mine[0] / math.sqrt(float(mine[1]))
    scores = mine[0] / math.sqrt(float(mine[1])) if step == "softmax_of_divided_by_sqrt" else mine[0]
    e = np.exp(scores - scores.max(axis=-1, keepdims=True))
    return e / e.sum(axis=-1, keepdims=True)


def judge_hand(check: dict, got, *earlier, carried: dict | None = None) -> Outcome:
    """A hand answer: its shape, rows of weights summing to 1 (as closely as the grader's tolerance
    lets them), and the step following from your own previous ones (`earlier`, as
    check["hand"]["from"] names them). Its values are graded after you hand in; only whether they
    were rounded early is said, and failed as the grader fails it: `carried` (one dict for a file's
    hand checks, in their order) holds each step's exact value from your first inputs."""
    rule, name = check["hand"], check["names"][0]
    got = np.asarray(got, dtype=np.float64)
    if got.shape != tuple(rule["shape"]):
        return Outcome(check, "failed", f"{name} has shape {got.shape}, expected {tuple(rule['shape'])}")
    if not np.isfinite(got).all():
        return Outcome(check, "failed", f"{name} has entries that are not finite numbers")
    atol = check["hand_atol"]
    carried = {} if carried is None else carried
    follows = rule["from"] or rule.get("rounding_from") or []
    step, names = (follows[0], follows[1:]) if follows else ("", [])
    try:
        mine = [np.asarray(e, dtype=np.float64) for e in earlier]
    except (ValueError, TypeError) as err:
        return Outcome(check, "failed", f"{name} cannot be checked against your {' and '.join(names)}: {err}")
    # the exact value is carried from the first inputs whatever this answer is: a later step that
    # follows from rounded values is still told so when this one fails
    exact = None
    if step:
        try:
            with np.errstate(all="ignore"):
                exact = _step_value(step, [carried.get(n, m) for n, m in zip(names, mine)])
            carried[name] = exact
        except (ValueError, TypeError):
            pass
    problem = weights_problem(name, got, hand_row_atol(got, atol)) if rule["rows_sum_to_one"] else None
    if problem:
        return Outcome(check, "failed", problem)
    try:
        if rule["from"]:
            if step == "matmul":
                problem = _not_following(name, got, mine[0] @ mine[1], atol)
            elif step == "divided_by_sqrt":
                problem = _not_following(name, got, mine[0] / math.sqrt(float(mine[1])), atol)
            else:         # "softmax" of your scores ("softmax_of_divided_by_sqrt": of your scores / sqrt(d_k))
                scores = mine[0] / math.sqrt(float(mine[1])) if step == "softmax_of_divided_by_sqrt" else mine[0]
                problem = softmax_problem(name, got, scores, atol)
    except ValueError as err:
        return Outcome(check, "failed", f"{name} cannot be checked against your {' and '.join(names)}: {err}")
    if problem and _within_tolerance(got, exact, atol):
        # right for the given inputs, which the grader passes: the answer it follows from is the slip
        return Outcome(check, "passed", f"{name} does not follow from your {' and '.join(names)}: recheck {names[0]}")
    if problem:
        return Outcome(check, "failed", f"{name} does not follow from your {' and '.join(names)}: {problem}")
    if exact is None or not rounded_early(got, np.asarray(exact), atol):
        return Outcome(check, "passed")
    # off its exact value by more than the tolerance, by rounding alone: the grader fails it so
    mistake = rule["rounded_early"]
    return Outcome(check, "failed", f"{name} is off by rounding: {_rounded_where(rule, step, names, mine, exact, atol)}; "
                   f"{ROUNDED_LOSES}", mistake["hint"], (mistake["id"],))


def _rounded_where(rule: dict, step: str, names: list, mine: list, exact, atol: float) -> str:
    """Which numbers were rounded: the earlier answer it follows from, when computing on from that
    one is off the exact value already; both, when that one is rounded too; else its own. A first
    step follows from the given inputs, which are exact."""
    own = _own_value(step, mine) if rule["from"] else None
    if own is None or np.shape(own) != np.shape(exact) or np.abs(own - exact).max() <= 1e-9:
        return "its numbers were rounded to too few decimals"
    if not _within_tolerance(own, exact, atol):
        return f"it follows from your rounded {names[0]}"
    return f"it was rounded, and so was your {names[0]} it follows from"


def _own_value(step: str, mine: list[np.ndarray]) -> np.ndarray | None:
    """What the step makes of the student's own earlier answers (None: it cannot be computed)."""
    try:
        with np.errstate(all="ignore"):
            return _step_value(step, mine)
    except (ValueError, TypeError):
        return None


def _within_tolerance(got: np.ndarray, exact, atol: float) -> bool:
    """Every entry within the hand tolerance of the exact value carried from the given inputs."""
    return exact is not None and np.shape(exact) == got.shape and array_problem("", got, exact, None, atol=atol) is None


def _not_following(name: str, got: np.ndarray, own: np.ndarray, atol: float) -> str | None:
    """What the grader's chain says of a step (chain.py): it follows from your own previous answer
    when each entry is within the tolerance and half a unit of the decimal it was typed with."""
    if got.shape == own.shape and not off_by_more_than_rounding(got, own, atol).any():
        return None
    return array_problem(name, got, own, None, atol=atol)


def softmax_problem(name: str, weights, scores, atol: float) -> str | None:
    """Weights are the softmax of the scores when, along each row, log(weight) - score is the same
    number (w_i / w_j = e^(s_i - s_j)); an error of `atol` in a weight w moves its log by atol / w."""
    if weights.shape != scores.shape or (weights <= 0).any():
        return f"{name} must have the shape of the scores and positive entries"
    spread = np.log(weights) - scores
    allowed = 2 * atol / weights.min(axis=-1)
    for row, (values, limit) in enumerate(zip(spread, allowed)):
        if values.max() - values.min() > limit:
            return (f"row {row} is not the softmax of that row of the scores: the ratio of two weights must be "
                    f"e to the power of the difference of their scores")
    return None

