"""The multi-head attention exercise's catalogue: the mistakes the grader names in split_heads,
merge_heads, multi_head_attention and the MultiHeadAttention module, each with its mutants
(mutants.py here, built on attention's) and its hint.

Adding a misconception to this exercise is adding one entry here (see
autograder/checks/misconception.py for what an entry holds). Entries are tried in this order.
"""

from __future__ import annotations

import numpy as np

from autograder.checks.attention.mutants import swapped
from autograder.checks.multihead import (
    ARGUMENTS, MERGE_ROUND_TRIP, MERGE_VALUES, MHA, MHA_MASK, MHA_OUTPUT, MHA_PADDING_MASK, MHA_RANDOM_MASK, MODULE,
    MODULE_MASK, MODULE_MATCHES_TORCH, MODULE_PADDING_MASK, MODULE_RANDOM_MASK, MODULE_STRUCTURE, SPLIT,
)
from autograder.checks.multihead import mutants as mu
from autograder.checks.misconception import Misconception, Overrides, argument_changed, low_precision
from autograder.judge import raised as rc
from autograder.judge.hints import (
    ALL_AXES_REVERSED_WRITTEN, BITWISE_NOT_WRITTEN, BOOLEAN_INDEX_WRITTEN, FIXED_AXIS_WRITTEN, RESHAPE_WRITTEN,
    TRUTH_TEST_WRITTEN,
    HARDCODED_AXIS, KEYS_NOT_TRANSPOSED, MASK_ADDITIVE, MASK_AFTER_SOFTMAX, MASK_ALWAYS_CAUSAL, MASK_BITWISE_NOT,
    MASK_BOOLEAN_INDEX, MASK_FILL_ZERO, MASK_IGNORED, MASK_INVERTED, MASK_RANK, MASK_TRANSPOSED, NO_SCALING,
    RETURNS_SWAPPED, TRANSPOSE_ALL_AXES, TRUTH_VALUE, WRONG_AXIS,
)

MHA_NAME, MOD_NAME = "multi_head_attention", "MultiHeadAttention"
MHA_MASKS = (MHA_MASK, MHA_RANDOM_MASK, MHA_PADDING_MASK)
MOD_MASKS = (MODULE_MASK, MODULE_RANDOM_MASK, MODULE_PADDING_MASK)
MOD_VALUES = (MODULE_MATCHES_TORCH, *MOD_MASKS)
MASKED = (*MHA_MASKS, *MOD_MASKS)          # every check with a mask
MASKS_4D = (MHA_RANDOM_MASK, MHA_PADDING_MASK, MODULE_RANDOM_MASK, MODULE_PADDING_MASK)

WEIGHTS_AVERAGED = ("The weights returned are averaged over the heads, shape (batch, seq, seq); the contract asks "
                    "for each head's weights, shape (batch, num_heads, seq, seq) (torch's "
                    "average_attn_weights=False). Return the weights before any mean over the head axis.")


def _multihead(mha: dict | None = None, module: dict | None = None, **both) -> Overrides:
    """The numpy function and the torch module with the same option(s) switched."""
    return lambda: {MHA_NAME: mu.mha_fn(**both, **(mha or {})),
                    MOD_NAME: mu.module_class(**both, **(module or {}))}


CATALOGUE: list[Misconception] = [
    Misconception(
        "reshape_without_transpose", "multihead",
        "The heads are split with a bare reshape to (batch, heads, seq, d_head), in split_heads or in the "
        "module's forward. The numbers land in the right shape but not in the right places: a head ends up "
        "with pieces of several positions. Reshape to (batch, seq, heads, d_head) first, so each position's "
        "features are cut into heads, then move the head axis in front of seq (and when merging, move it back "
        "next to d_head before joining the last two axes).",
        lambda: {"split_heads": mu.split_bare} | _multihead(split="bare")(),
        (*SPLIT, MERGE_ROUND_TRIP, *MHA, *MOD_VALUES),
        # split and merged by bare reshapes: each undoes the other (the round trip holds), attention does not
        alternatives=(lambda: {"split_heads": mu.split_bare} | _multihead(split="bare", merge="bare")(),),
        quotes=RESHAPE_WRITTEN),
    Misconception(
        "split_interleaved", "multihead",
        "The heads are dealt the features in turn (head h gets features h, h + heads, ...) instead of in "
        "consecutive blocks: head h must hold features h*d_head to (h+1)*d_head - 1. Check which of the two "
        "new axes your reshape of d_model makes the head axis (and undo the same split when merging).",
        lambda: ({"split_heads": mu.split_interleaved, "merge_heads": mu.merge_interleaved}
                 | _multihead(split="interleaved", merge="interleaved")()),
        (*SPLIT, MERGE_VALUES, MERGE_ROUND_TRIP, *MHA, *MOD_VALUES),
        alternatives=(lambda: {"split_heads": mu.split_interleaved} | _multihead(split="interleaved")(),),
        quotes=RESHAPE_WRITTEN),
    Misconception(
        "merge_without_transpose", "multihead",
        "The heads are merged by a bare reshape from (batch, heads, seq, d_head) to (batch, seq, d_model), in "
        "merge_heads or in the module's forward, which mixes positions: it is not the inverse of the split. Move "
        "the head axis back next to d_head first (to batch, seq, heads, d_head), then join the last two axes.",
        lambda: {"merge_heads": mu.merge_bare} | _multihead(merge="bare")(),
        (MERGE_VALUES, MERGE_ROUND_TRIP, MHA_OUTPUT, *MHA_MASKS, *MOD_VALUES), quotes=RESHAPE_WRITTEN),
    Misconception(
        "merge_wrong_axes", "multihead",
        "The heads are merged with the axes moved into the wrong order: each position keeps its own values, but "
        "the heads' features are interleaved (feature i * heads + h comes from head h, as if the head axis "
        "went behind d_head) instead of standing side by side. Before joining the last two axes, the order must "
        "be (batch, seq, heads, d_head): the inverse of the split.",
        lambda: {"merge_heads": mu.merge_interleaved} | _multihead(merge="interleaved")(),
        (MERGE_VALUES, MERGE_ROUND_TRIP, MHA_OUTPUT, *MHA_MASKS, *MOD_VALUES)),
    Misconception(
        "heads_not_split", "multihead",
        "The attention was computed once over all d_model features instead of once per head: every head has "
        "the same weights. Split Q, K and V into heads first, attend within each head (scaled by sqrt(d_head)), "
        "and merge the heads' outputs.",
        _multihead(split="none", scale="model"), (*MHA, *MODULE),
        alternatives=(_multihead(split="none", scale="head"),
                      _multihead(split="none", scale="model", heads_shape="flat"),
                      _multihead(split="none", scale="head", heads_shape="flat"))),
    Misconception(
        "no_output_projection", "multihead",
        "The merged heads are returned as they are: the output projection W_o is never applied. After merging "
        "the heads, mix them with the output projection.",
        _multihead(project=False), (MHA_OUTPUT, *MHA_MASKS, *MOD_VALUES)),
    Misconception(
        "scaled_by_d_model", "multihead",
        "Each head's scores were divided by sqrt(d_model) instead of sqrt(d_head): a head only sees d_head "
        "features, so its dot products have variance d_head. Scale by the square root of d_model // num_heads.",
        _multihead(scale="model"), (*MHA, *MOD_VALUES)),
    Misconception("returns_swapped", "multihead", RETURNS_SWAPPED,
                  lambda: {MHA_NAME: swapped(mu.mha_fn())}, MHA),
    Misconception("no_scaling", "multihead", NO_SCALING.replace("sqrt(d_k)", "sqrt(d_head)"),
                  _multihead(scale="none"), (*MHA, *MOD_VALUES)),
    Misconception("scaled_by_dk", "multihead",
                  "Each head's scores were divided by d_head instead of sqrt(d_head), which flattens the weights. "
                  "Divide by the square root of the per-head feature size.",
                  _multihead(scale="dk"), (*MHA, *MOD_VALUES)),
    Misconception("softmax_wrong_axis", "multihead", WRONG_AXIS, _multihead(axis=-2), (*MHA, *MOD_VALUES)),
    Misconception("softmax_hardcoded_axis", "multihead", HARDCODED_AXIS, _multihead(axis=1), (*MHA, *MOD_VALUES),
                  quotes=FIXED_AXIS_WRITTEN),
    Misconception("keys_not_transposed", "multihead", KEYS_NOT_TRANSPOSED, _multihead(transpose_keys=False),
                  (*MHA, *MOD_VALUES, MODULE_STRUCTURE),
                  torch_alternatives=(lambda: _multihead(transpose_keys=False)() | {MOD_NAME: mu.module_torch_keys()},)),
    Misconception("mask_ignored", "multihead", MASK_IGNORED, _multihead(mask_mode="ignored"), MASKED),
    Misconception("mask_inverted", "multihead", MASK_INVERTED, _multihead(mask_mode="inverted"), MASKED,
                  alternatives=(_multihead(mask_mode="inverted", empty_rows="nan"),
                                _multihead(mask_mode="inverted", empty_rows="zero"),
                                _multihead(mask_mode="inverted", fill="add"))),
    Misconception("mask_after_softmax", "multihead", MASK_AFTER_SOFTMAX, _multihead(mask_mode="after"),
                  MASKED),
    Misconception("mask_fill_zero", "multihead", MASK_FILL_ZERO, _multihead(mask_mode="zero"), MASKED),
    Misconception("mask_additive", "multihead", MASK_ADDITIVE, _multihead(mask_mode="additive"), MASKED),
    Misconception("mask_transposed", "multihead", MASK_TRANSPOSED, _multihead(mask_mode="transposed"),
                  MASKED),
    Misconception("mask_boolean_index", "multihead", MASK_BOOLEAN_INDEX, _multihead(mask_mode="boolean_index"),
                  MASKED, raises=rc.boolean_index_error, quotes=BOOLEAN_INDEX_WRITTEN),
    Misconception("mask_bitwise_not", "multihead", MASK_BITWISE_NOT, _multihead(mask_mode="bitwise_not"),
                  MASKED, alternatives=(_multihead(mask_mode="bitwise_not", empty_rows="nan"),),
                  raises=rc.invert_error, quotes=BITWISE_NOT_WRITTEN),
    Misconception("transpose_all_axes", "multihead", TRANSPOSE_ALL_AXES, _multihead(transpose_keys="all"),
                  (*MHA, *MODULE), raises=rc.transpose_all_axes, quotes=ALL_AXES_REVERSED_WRITTEN),
    Misconception("array_truth_value", "multihead", TRUTH_VALUE, _multihead(truth_test=True), MASKED,
                  raises=rc.truth_value_of_array, quotes=TRUTH_TEST_WRITTEN),
    Misconception("weights_averaged_over_heads", "multihead", WEIGHTS_AVERAGED, _multihead(heads_shape="mean"),
                  (*MHA, *MODULE)),
    Misconception("mask_always_causal", "multihead", MASK_ALWAYS_CAUSAL, _multihead(mask_mode="causal"), MASKS_4D),
    Misconception("mask_rank_ignored", "multihead", MASK_RANK, _multihead(mask_mode="2d_only"), MASKED,
                  alternatives=(_multihead(mask_mode="4d_only"),)),
    low_precision("multihead", (*MHA, *MOD_VALUES), _multihead(dtype=np.float16)),
    Misconception(
        "projection_transposed", "multihead",
        "The projection matrices are applied the other way round. In multi_head_attention every W is applied as "
        "X @ W; a torch.nn.Linear computes x times its weight transposed, plus its bias. Check which side of the "
        "product each weight matrix is on.",
        _multihead(mha={"transposed": True}, module={"linear": "transposed"}), (*MHA, *MOD_VALUES),
        alternatives=(_multihead(mha={"transposed": True}, module={"linear": "transposed", "linear_out": "right"}),
                      _multihead(mha={"transposed": "out"}, module={"linear_out": "transposed"}))),
    Misconception(
        "linear_bias_ignored", "multihead",
        "The projections use the layers' weight matrices but not their biases. Call the nn.Linear layers "
        "themselves (or add each layer's bias) for Q, K, V and the output.",
        lambda: {MOD_NAME: mu.module_class(linear="no_bias")}, MOD_VALUES,
        alternatives=(lambda: {MOD_NAME: mu.module_class(linear="no_bias", linear_out="right")},)),
    argument_changed("multihead", ARGUMENTS, lambda: {"split_heads": mu.split_reshapes_in_place,
                                                      MOD_NAME: mu.module_flips_mask_in_place()}),
]
