"""The hand computation's catalogue: the mistakes the grader names in numbers typed by hand, each
with its example answers (mutants.py here) and its hint; the numbers a little off, or one slip
carried through, are told by the answer's properties (recognisers.py here).

Adding a misconception to this exercise is adding one entry here (see
autograder/checks/misconception.py for what an entry holds). Entries are tried in this order.
"""

from __future__ import annotations

from functools import partial

from autograder.checks.hand_computation import (
    CHECKS, PART_A_OUTPUT, PART_A_SCALED_SCORES, PART_A_WEIGHTS, PART_B_OUTPUT, PART_B_WEIGHTS,
)
from autograder.checks.hand_computation import mutants as hm
from autograder.checks.hand_computation.recognisers import hand_imprecise, hand_slip
from autograder.checks.misconception import Misconception

# said by the chain (chain.py) after what it saw: which rows, and what they add up to
WEIGHTS_NOT_NORMALISED = (
    "The softmax step stopped at the exponentials: each e^s must be divided by the sum of its row, so that the "
    "row's weights add up to 1 and each output row is an average of the value rows. Divide every exponential by "
    "its row's sum, then compute the output from those weights.")
AFTER_SOFTMAX = (PART_A_WEIGHTS, PART_A_OUTPUT, PART_B_WEIGHTS, PART_B_OUTPUT)
AFTER_SCALING = (PART_A_SCALED_SCORES, *AFTER_SOFTMAX)

CATALOGUE: list[Misconception] = [
    Misconception(
        "no_scaling", "hand_computation",
        "The scores were not divided by sqrt(d_k) before the softmax (d_k = 2 in Part A, 4 in Part B). Scale "
        "every score first, then take the softmax of the scaled row.",
        lambda: hm.hand_values(scale="none"), AFTER_SCALING),
    Misconception(
        "scaled_by_dk", "hand_computation",
        "The scores were divided by d_k instead of sqrt(d_k): by 2 instead of 1.414 in Part A, by 4 instead of 2 "
        "in Part B. Recompute the scaled scores, and everything after them.",
        lambda: hm.hand_values(scale="dk"), AFTER_SCALING),
    Misconception(
        "scaled_by_wrong_size", "hand_computation",
        "The scores were divided by a number other than sqrt(d_k). d_k is the length of each query and key "
        "vector (2 in Part A, 4 in Part B: each word's vector has 4 numbers), not the number of rows (the 3 words "
        "of Part B). Divide every score by sqrt(d_k), then redo the softmax and the output.",
        lambda: hm.hand_values(scale="rows"), AFTER_SCALING),
    Misconception(
        "softmax_wrong_axis", "hand_computation",
        "The softmax normalised each column instead of each row. Row i belongs to query i, which shares its "
        "attention among the keys, so each row must add up to 1: exponentiate a row, then divide by that row's sum.",
        lambda: hm.hand_values(axis=0), AFTER_SOFTMAX),
    Misconception(
        "weights_not_normalised", "hand_computation", WEIGHTS_NOT_NORMALISED,
        lambda: hm.hand_values(normalised=False), AFTER_SOFTMAX),
    Misconception(
        "hand_slip_carried", "hand_computation",
        "One number early on is wrong (a dot product or an exponential), and every step computed from it "
        "carries the error while the other rows are right. Recompute the wrong row's scores one product at a "
        "time, then redo the steps that follow from them.",
        hm.hand_slip, CHECKS, matches=hand_slip, fallback=True),
    Misconception(
        "hand_imprecise", "hand_computation",
        "Your numbers are close but not close enough: off by more than rounding (0.006). Carry 4 or 5 decimals "
        "through every step and round only the final answer; rounding early makes the error pile up.",
        hm.hand_offset, CHECKS, matches=hand_imprecise, fallback=True),
    Misconception(
        "hand_inputs_reordered", "hand_computation",
        "Your numbers are the right computation done on inputs in another order: rows of Q or K swapped, K used "
        "in place of Q, or the words of the sentence (cat, sat, mat) taken in another order. Copy Q, K, V and X "
        "row by row as given: row i of every answer belongs to query i, the i-th word.",
        partial(hm.hand_values, reordered=0), CHECKS,
        alternatives=tuple(partial(hm.hand_values, reordered=n) for n in range(1, len(hm.HAND_REORDERED)))),
]
