"""The causal mask exercise's catalogue: the mistakes the grader names in create_causal_mask and
causal_attention, each with its mutants (mutants.py here, built on attention's) and its hint.

Adding a misconception to this exercise is adding one entry here (see
autograder/checks/misconception.py for what an entry holds). Entries are tried in this order.
"""

from __future__ import annotations

import numpy as np

from autograder.checks.attention import mutants as attention_mutants
from autograder.checks.causal_mask import ARGUMENTS, CAUSAL, CAUSAL_BATCHED, CAUSAL_OUTPUT, CAUSAL_WEIGHTS, CREATE
from autograder.checks.causal_mask import mutants as mu
from autograder.checks.misconception import Misconception, Overrides, argument_changed, low_precision
from autograder.judge import raised as rc
from autograder.judge.hints import (
    ALL_AXES_REVERSED_WRITTEN, FRONT_AXES_WRITTEN, KEYS_NOT_TRANSPOSED, MASK_AFTER_SOFTMAX, MASK_FILL_ZERO, NO_SCALING, RETURNS_SWAPPED, SCALED_BY_DK,
    SCALED_BY_WRONG_SIZE, TRANSPOSE_ALL_AXES, TRANSPOSE_FIXED_AXES, WRONG_AXIS,
)

CAUSAL_NAME = "causal_attention"
CAUSAL_VALUES = (CAUSAL_WEIGHTS, CAUSAL_OUTPUT, CAUSAL_BATCHED)   # not no_future: these see no future


def _causal(**options) -> Overrides:
    return lambda: {CAUSAL_NAME: mu.causal_fn(**options)}


def _causal_and_mask(mask_kind: str, **options) -> Overrides:
    """A wrong create_causal_mask and the causal_attention that uses it."""
    return lambda: {"create_causal_mask": mu.mask_fn(mask_kind), CAUSAL_NAME: mu.causal_fn(**options)}


CATALOGUE: list[Misconception] = [
    Misconception(
        "mask_upper_triangular", "causal_mask",
        "The causal mask is upper-triangular: each position may see itself and the FUTURE, and is blocked from "
        "the past. Position i may attend to positions 0..i, i.e. the entries on and below the diagonal.",
        lambda: {"create_causal_mask": mu.mask_fn("upper"), CAUSAL_NAME: mu.causal_fn(kind="upper")},
        (*CREATE, *CAUSAL)),
    Misconception(
        "mask_excludes_diagonal", "causal_mask",
        "The causal mask also blocks the diagonal, so a position cannot attend to itself (and the first "
        "position can attend to nothing at all). 'Not the future' means positions 0..i, including i itself.",
        lambda: {"create_causal_mask": mu.mask_fn("strict_lower"), CAUSAL_NAME: mu.causal_fn(kind="strict_lower")},
        (*CREATE, *CAUSAL),
        alternatives=(_causal_and_mask("strict_lower", kind="strict_lower", empty_rows="nan"),
                      _causal_and_mask("strict_lower", kind="strict_lower", empty_rows="zero"),
                      _causal_and_mask("strict_lower", kind="strict_lower", fill="add"))),
    Misconception(
        "causal_mask_off_by_one", "causal_mask",
        "The causal mask is off by one: besides the past and itself, each position may also see the NEXT "
        "position (the diagonal just above the main one is allowed). Position i may attend to positions 0..i "
        "and nothing after i; count where your triangle starts.",
        lambda: {"create_causal_mask": mu.mask_fn("next"), CAUSAL_NAME: mu.causal_fn(kind="next")},
        (*CREATE, *CAUSAL)),
    Misconception(
        "mask_inverted", "causal_mask",
        "The causal mask is the wrong way round: it marks the future (above the diagonal) with 1/True and the "
        "past with 0/False, as a 'blocked' mask would. In this kit 1/True means 'may attend', so the ones go on "
        "and below the diagonal.",
        lambda: {"create_causal_mask": mu.mask_fn("strict_upper"), CAUSAL_NAME: mu.causal_fn(mask_mode="inverted")},
        (*CREATE, *CAUSAL),
        alternatives=(_causal_and_mask("strict_upper", mask_mode="inverted", empty_rows="nan"),
                      _causal_and_mask("strict_upper", mask_mode="inverted", empty_rows="zero"),
                      _causal_and_mask("strict_upper", mask_mode="inverted", fill="add")),
        lies_in=("create_causal_mask",)),
    Misconception(
        "mask_read_inverted", "causal_mask",
        "causal_attention uses the causal mask the wrong way round: it blocks the keys the mask marks 1/True "
        "(on and below the diagonal, which may be attended to) and lets each position see the future. "
        "create_causal_mask is right; in causal_attention, block where the mask is 0/False.",
        _causal(mask_mode="inverted"), CAUSAL,
        alternatives=(_causal(mask_mode="inverted", empty_rows="nan"), _causal(mask_mode="inverted", empty_rows="zero"),
                      _causal(mask_mode="inverted", fill="add"))),
    Misconception(
        "causal_mask_additive", "causal_mask",
        "create_causal_mask returns an additive mask (0 where allowed, -inf where blocked). The contract asks for "
        "the boolean form: 1/True on and below the diagonal, 0/False above it; turn it into -inf only where you "
        "apply it to the scores.",
        lambda: {"create_causal_mask": mu.additive_causal_mask}, CREATE),
    Misconception("mask_ignored", "causal_mask",
                  "causal_attention never applies the causal mask: every position attends to the whole sequence, "
                  "future included. Block the scores above the diagonal before the softmax.",
                  _causal(mask_mode="ignored"), CAUSAL),
    Misconception("mask_after_softmax", "causal_mask", MASK_AFTER_SOFTMAX, _causal(mask_mode="after"), CAUSAL,
                  alternatives=(_causal(mask_mode="after_neg_inf"),)),
    Misconception("mask_fill_zero", "causal_mask", MASK_FILL_ZERO, _causal(mask_mode="zero"), CAUSAL),
    Misconception("transpose_fixed_axes", "causal_mask", TRANSPOSE_FIXED_AXES, _causal(transpose_keys="front"),
                  CAUSAL, raises=rc.transpose_fixed_axes, quotes=FRONT_AXES_WRITTEN),
    Misconception("returns_swapped", "causal_mask", RETURNS_SWAPPED,
                  lambda: {CAUSAL_NAME: attention_mutants.swapped(mu.causal_fn())}, CAUSAL),
    Misconception("no_scaling", "causal_mask", NO_SCALING, _causal(scale="none"), CAUSAL_VALUES),
    Misconception("scaled_by_dk", "causal_mask", SCALED_BY_DK, _causal(scale="dk"), CAUSAL_VALUES),
    Misconception("scaled_by_wrong_size", "causal_mask", SCALED_BY_WRONG_SIZE, _causal(scale="k_axis1"),
                  CAUSAL_VALUES, alternatives=(_causal(scale="n_k"),)),
    Misconception("softmax_wrong_axis", "causal_mask", WRONG_AXIS, _causal(axis=-2), CAUSAL_VALUES,
                  alternatives=(_causal(axis=0),)),
    Misconception("softmax_no_keepdims", "causal_mask",
                  "Your softmax divides by a sum taken without keeping its axis, so each row of the (square) "
                  "scores is divided by another row's total. Keep the summed axis as a size-1 axis.",
                  _causal(softmax_fn=attention_mutants.softmax_no_keepdims), CAUSAL_VALUES),
    Misconception("keys_not_transposed", "causal_mask", KEYS_NOT_TRANSPOSED, _causal(transpose_keys=False), CAUSAL_VALUES),
    Misconception("transpose_all_axes", "causal_mask", TRANSPOSE_ALL_AXES, _causal(transpose_keys="all"), CAUSAL,
                  raises=rc.transpose_all_axes, quotes=ALL_AXES_REVERSED_WRITTEN),
    low_precision("causal_mask", CAUSAL, _causal(dtype=np.float16)),
    argument_changed("causal_mask", ARGUMENTS,
                     lambda: {CAUSAL_NAME: attention_mutants.scales_queries_in_place(mu.causal_fn())}),
]
