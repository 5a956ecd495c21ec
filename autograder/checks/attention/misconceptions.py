"""The attention exercise's catalogue: the mistakes the grader names in softmax and
scaled_dot_product_attention, each with its mutants (mutants.py) and its hint.

Adding a misconception to this exercise is adding one entry here (see
autograder/checks/misconception.py for what an entry holds). Entries are tried in this order.
"""

from __future__ import annotations

from functools import partial

import numpy as np

from autograder.checks.attention import (
    ARGUMENTS, CHECKS, SDPA, SDPA_BATCHED, SDPA_BINARY_MASK, SDPA_BOOL_MASK, SDPA_BROADCAST_MASK, SDPA_FLOAT32,
    SDPA_PADDING_MASK, SOFTMAX_AXIS, SOFTMAX_ROWS, SOFTMAX_STABLE,
)
from autograder.checks.attention import mutants as mu
from autograder.checks.attention import recognisers as own
from autograder.checks.misconception import Misconception, Overrides, argument_changed, low_precision
from autograder.judge import raised as rc
from autograder.judge.hints import (
    ALL_AXES_REVERSED_WRITTEN, BITWISE_NOT_WRITTEN, BOOLEAN_INDEX_WRITTEN, FIXED_AXIS_WRITTEN, FRONT_AXES_WRITTEN,
    TRUTH_TEST_WRITTEN,
    HARDCODED_AXIS, KEYS_NOT_TRANSPOSED, MASK_ADDITIVE, MASK_AFTER_SOFTMAX, MASK_ALWAYS_CAUSAL, MASK_BITWISE_NOT,
    MASK_BOOLEAN_INDEX, MASK_FILL_ZERO, MASK_IGNORED, MASK_INVERTED, MASK_RANK, MASK_TRANSPOSED, NO_SCALING,
    RETURNS_SWAPPED, SCALED_BY_DK, SCALED_BY_WRONG_SIZE, TRANSPOSE_ALL_AXES, TRANSPOSE_FIXED_AXES, TRUTH_VALUE,
    WRONG_AXIS,
)

SDPA_NAME = "scaled_dot_product_attention"
SDPA_MASKED = (SDPA_BOOL_MASK, SDPA_BINARY_MASK, SDPA_BROADCAST_MASK, SDPA_PADDING_MASK)
# the checks whose scores have leading batch (or head) axes: there axis=1 is not the keys' axis
SDPA_LEADING = (SDPA_BATCHED, SDPA_FLOAT32, SDPA_BINARY_MASK, SDPA_BROADCAST_MASK, SDPA_PADDING_MASK)


def _attn(**options) -> Overrides:
    return lambda: {SDPA_NAME: mu.sdpa(**options)}


CATALOGUE: list[Misconception] = [
    Misconception(
        "softmax_unstable", "attention",
        "Your softmax overflows for large scores: exp(1000) is inf, and inf/inf is nan. Subtracting the row "
        "maximum before exponentiating changes nothing mathematically and keeps every exp() at most 1.",
        lambda: {"softmax": mu.softmax_no_max}, (SOFTMAX_STABLE,), matches=own.softmax_overflows),
    Misconception(
        "softmax_wrong_axis", "attention", WRONG_AXIS,
        lambda: {"softmax": mu.softmax_default_axis0, SDPA_NAME: mu.sdpa(axis=-2)},
        (SOFTMAX_ROWS, SOFTMAX_STABLE, *SDPA),
        alternatives=(_attn(axis=0),)),
    Misconception(
        "softmax_hardcoded_axis", "attention", HARDCODED_AXIS, _attn(axis=1), SDPA_LEADING, quotes=FIXED_AXIS_WRITTEN),
    Misconception(
        "softmax_axis_ignored", "attention",
        "softmax ignores its axis argument: softmax(x, axis=0) still normalises along the last axis. Use the "
        "axis you are given for the maximum, and for the sum.",
        lambda: {"softmax": mu.softmax_ignores_axis}, (SOFTMAX_AXIS,)),
    Misconception(
        "softmax_whole_array", "attention",
        "The softmax normalises by one total over the whole array. Take the sum (and the maximum) along the "
        "given axis only, keeping that axis, so that each row (each slice along the axis) is divided by its "
        "own total.",
        lambda: {"softmax": mu.softmax_whole_array, SDPA_NAME: mu.sdpa(softmax_fn=mu.softmax_whole_array)},
        (SOFTMAX_ROWS, SOFTMAX_AXIS, SOFTMAX_STABLE, *SDPA)),
    Misconception(
        "softmax_no_keepdims", "attention",
        "The softmax divides by a sum taken without keeping its axis, so on a square array each row is divided "
        "by another row's total (on other shapes it fails to broadcast). Keep the summed axis as a size-1 axis "
        "so each row is divided by its own sum.",
        lambda: {"softmax": mu.softmax_no_keepdims, SDPA_NAME: mu.sdpa(softmax_fn=mu.softmax_no_keepdims)},
        (SOFTMAX_ROWS, SOFTMAX_STABLE, *SDPA),
        torch_alternatives=(lambda: {"softmax": mu.softmax_no_keepdims_torch,
                                     SDPA_NAME: mu.sdpa(softmax_fn=mu.softmax_no_keepdims_torch)},)),
    Misconception(
        "softmax_underflow", "attention",
        "Your softmax gives nan on a row whose scores are all far below the largest score of the whole array: "
        "every exp() there underflows to 0, and 0/0 is nan. Subtract each row's own maximum (along the axis), "
        "not one maximum for the whole array.",
        lambda: {"softmax": mu.softmax_global_max}, (SOFTMAX_STABLE,), matches=own.softmax_underflows),
    Misconception("transpose_all_axes", "attention", TRANSPOSE_ALL_AXES, _attn(transpose_keys="all"), SDPA,
                  raises=rc.transpose_all_axes, quotes=ALL_AXES_REVERSED_WRITTEN),
    Misconception("array_truth_value", "attention", TRUTH_VALUE, _attn(truth_test=True), SDPA_MASKED,
                  raises=rc.truth_value_of_array, quotes=TRUTH_TEST_WRITTEN),
    Misconception("mask_always_causal", "attention", MASK_ALWAYS_CAUSAL, _attn(mask_mode="causal"), SDPA_MASKED),
    Misconception("mask_rank_ignored", "attention", MASK_RANK, _attn(mask_mode="2d_only"), SDPA_MASKED,
                  alternatives=tuple(_attn(mask_mode=m) for m in ("3d_only", "4d_only", "same_rank_only"))),
    low_precision("attention", tuple(c for c in CHECKS if c not in ARGUMENTS), lambda: {"softmax": partial(mu.softmax_in, np.float16),
                                               SDPA_NAME: mu.sdpa(dtype=np.float16)}),
    Misconception("transpose_fixed_axes", "attention", TRANSPOSE_FIXED_AXES, _attn(transpose_keys="front"), SDPA,
                  raises=rc.transpose_fixed_axes, quotes=FRONT_AXES_WRITTEN),
    Misconception("returns_swapped", "attention", RETURNS_SWAPPED, lambda: {SDPA_NAME: mu.swapped(mu.sdpa())},
                  SDPA),
    Misconception("no_scaling", "attention", NO_SCALING, _attn(scale="none"), SDPA),
    Misconception("scaled_by_dk", "attention", SCALED_BY_DK, _attn(scale="dk"), SDPA),
    Misconception("scaled_by_wrong_size", "attention", SCALED_BY_WRONG_SIZE, _attn(scale="k_axis1"), SDPA,
                  alternatives=(_attn(scale="d_v"), _attn(scale="n_k"))),
    Misconception("keys_not_transposed", "attention", KEYS_NOT_TRANSPOSED, _attn(transpose_keys=False), SDPA,
                  torch_alternatives=(lambda: {SDPA_NAME: mu.attention_torch_keys},)),
    Misconception("mask_ignored", "attention", MASK_IGNORED, _attn(mask_mode="ignored"), SDPA_MASKED),
    Misconception("mask_inverted", "attention", MASK_INVERTED, _attn(mask_mode="inverted"), SDPA_MASKED),
    Misconception("mask_after_softmax", "attention", MASK_AFTER_SOFTMAX, _attn(mask_mode="after"), SDPA_MASKED),
    Misconception("mask_fill_zero", "attention", MASK_FILL_ZERO, _attn(mask_mode="zero"), SDPA_MASKED),
    Misconception("mask_additive", "attention", MASK_ADDITIVE, _attn(mask_mode="additive"), SDPA_MASKED),
    Misconception("mask_transposed", "attention", MASK_TRANSPOSED, _attn(mask_mode="transposed"), SDPA_MASKED),
    Misconception("mask_boolean_index", "attention", MASK_BOOLEAN_INDEX, _attn(mask_mode="boolean_index"), SDPA_MASKED,
                  raises=rc.boolean_index_error, quotes=BOOLEAN_INDEX_WRITTEN),
    Misconception("mask_bitwise_not", "attention", MASK_BITWISE_NOT, _attn(mask_mode="bitwise_not"), SDPA_MASKED,
                  alternatives=(_attn(mask_mode="bitwise_not", empty_rows="nan"),), raises=rc.invert_error,
                  quotes=BITWISE_NOT_WRITTEN),
    argument_changed("attention", ARGUMENTS, lambda: {"softmax": mu.softmax_shifts_in_place,
                                                      SDPA_NAME: mu.scales_queries_in_place(mu.sdpa())}),

]
