"""The catalogue of misconceptions: each one a small wrong implementation (a "mutant") of the
reference, with the hint a student gets when their answers match it.

Adding a misconception is adding one entry to CATALOGUE. One entry per (id, exercise); an
entry may carry `alternatives` (the same mistake made in another honest way, e.g. a fully
blocked row that becomes nan with a -inf fill instead of uniform with -1e9), and a
`matches` predicate for mistakes that are a property of the answer rather than one exact
answer (hand-typed numbers that are close but not close enough, a statistic off by a
factor of sqrt(d) in a random experiment). The mutant functions live in reference/mutants.py
(reference/hand_mutants.py for the hand computation).

A hint says what went wrong, where to look, and gives a nudge; it never holds code to copy.
The grader puts a sentence about what it saw in the student's answer before it.
"""

from __future__ import annotations

import math
from functools import partial
from dataclasses import dataclass
from typing import Any, Callable

import numpy as np

from . import hand_mutants as hm
from . import mutants as mu
from . import recognisers as rc
from .recognisers import hand_imprecise, hand_slip, std_pattern
from .hints import (
    MASK_BOOLEAN_INDEX, MASK_BITWISE_NOT,
    NO_SCALING, SCALED_BY_DK, SCALED_BY_WRONG_SIZE, WRONG_AXIS, HARDCODED_AXIS, KEYS_NOT_TRANSPOSED,
    MASK_IGNORED, MASK_INVERTED, MASK_AFTER_SOFTMAX, MASK_FILL_ZERO, TRANSPOSE_ALL_AXES, TRUTH_VALUE,
    LOW_PRECISION_HINT, TRANSPOSE_FIXED_AXES, MASK_TRANSPOSED, RETURNS_SWAPPED, MASK_ALWAYS_CAUSAL,
    MASK_RANK, WEIGHTS_AVERAGED, MASK_ADDITIVE,
)

Overrides = Callable[[], dict]


@dataclass(frozen=True)
class Misconception:
    id: str                                    # the contract's id, e.g. "no_scaling"
    stem: str                                  # the exercise it belongs to
    hint: str                                  # what went wrong, where to look, a nudge; no code
    overrides: Overrides                       # names of the reference replaced by wrong versions
    checks: tuple[str, ...] = ()               # check-id prefixes it applies to ("" = all of the stem)
    alternatives: tuple[Overrides, ...] = ()   # the same mistake made another way (other mutants)
    # (answer, expected, ctx, check) -> True/False, or None to compare with the mutants instead.
    # `expected` is the reference's answer; the mutants (overrides) stay the example used by tests.
    matches: Callable[[Any, Any, Any, Any], bool | None] | None = None
    fallback: bool = False                     # considered only when no other entry fits
    # (RaisedError) -> bool: recognises the error this mistake raises by its text alone (`if mask:`).
    # Without it, an error is explained by a mutant raising the same error on the same inputs.
    raises: Callable[[Any], bool] | None = None

    def applies_to(self, check_id: str) -> bool:
        return not self.checks or any(check_id.startswith(p) for p in self.checks)

    def variants(self) -> list[dict]:
        """Every mutant of this entry: the main one first, then the alternatives."""
        return [self.overrides(), *(alt() for alt in self.alternatives)]


# ---------------------------------------------------------------- check ids

A = "attention."
SOFTMAX_ROWS, SOFTMAX_AXIS, SOFTMAX_STABLE = A + "softmax.rows", A + "softmax.axis", A + "softmax.stable"
SDPA = A + "scaled_dot_product_attention."
SDPA_SINGLE, SDPA_BATCHED = SDPA + "single", SDPA + "batched"
SDPA_MASKED = tuple(SDPA + c for c in ("bool_mask", "binary_mask", "broadcast_mask", "padding_mask"))
SDPA_BATCH_MASKED = tuple(SDPA + c for c in ("binary_mask", "broadcast_mask", "padding_mask"))
SDPA_3D = tuple(SDPA + c for c in ("batched", "float32", "binary_mask", "broadcast_mask"))

C = "causal_mask."
CREATE = C + "create_causal_mask."
CAUSAL = C + "causal_attention."
CAUSAL_VALUES = tuple(CAUSAL + c for c in ("weights", "output", "batched"))   # not no_future: these see no future

H = "hand_computation."
HAND_AFTER_SCALING = tuple(H + c for c in ("part_a.scaled_scores", "part_a.weights", "part_a.output",
                                           "part_b.weights", "part_b.output"))
HAND_AFTER_SOFTMAX = tuple(H + c for c in ("part_a.weights", "part_a.output", "part_b.weights", "part_b.output"))

S = "scaling.scaling_experiment."
SCALING_STATS = tuple(S + c for c in ("std", "entropy", "max_weight", "other_dims"))

M = "multihead."
SPLIT, MERGE, ROUND_TRIP = M + "split_heads.", M + "merge_heads.values", M + "merge_heads.round_trip"
MHA = M + "multi_head_attention."
MHA_OUT, MHA_W, MHA_MASK = MHA + "output", MHA + "weights", MHA + "mask"
MHA_MASKS = (MHA_MASK, MHA + "random_mask", MHA + "padding_mask")
MOD = M + "MultiHeadAttention."
MOD_STRUCT, MOD_TORCH, MOD_MASK = MOD + "structure", MOD + "matches_torch", MOD + "mask"
MOD_MASKS = (MOD_MASK, MOD + "random_mask", MOD + "padding_mask")
MOD_VALUES = (MOD_TORCH, *MOD_MASKS)
MASKS_4D = (MHA + "random_mask", MHA + "padding_mask", MOD + "random_mask", MOD + "padding_mask")

SDPA_NAME, CAUSAL_NAME, MHA_NAME, MOD_NAME = ("scaled_dot_product_attention", "causal_attention",
                                              "multi_head_attention", "MultiHeadAttention")


def _attn(**options) -> Overrides:
    return lambda: {SDPA_NAME: mu.sdpa(**options)}


def _causal(**options) -> Overrides:
    return lambda: {CAUSAL_NAME: mu.causal_fn(**options)}


def _causal_and_mask(mask_kind: str, **options) -> Overrides:
    """A wrong create_causal_mask and the causal_attention that uses it."""
    return lambda: {"create_causal_mask": mu.mask_fn(mask_kind), CAUSAL_NAME: mu.causal_fn(**options)}


def _multihead(mha: dict | None = None, module: dict | None = None, **both) -> Overrides:
    """The numpy function and the torch module with the same option(s) switched."""
    return lambda: {MHA_NAME: mu.mha_fn(**both, **(mha or {})),
                    MOD_NAME: mu.module_class(**both, **(module or {}))}


def _low_precision(stem: str, checks: tuple[str, ...], overrides: Overrides) -> Misconception:
    return Misconception("low_precision_dtype", stem, LOW_PRECISION_HINT, overrides, checks,
                         matches=rc.low_precision, raises=rc.low_precision_error)


def _scaling(**options) -> Overrides:
    return lambda: {"scaling_experiment": mu.scaling_fn(**options)}


# ---------------------------------------------------------------- the catalogue

CATALOGUE: list[Misconception] = [
    # ------------------------------------------------------------ attention.py
    Misconception(
        "softmax_unstable", "attention",
        "Your softmax overflows for large scores: exp(1000) is inf, and inf/inf is nan. Subtracting the row "
        "maximum before exponentiating changes nothing mathematically and keeps every exp() at most 1.",
        lambda: {"softmax": mu.softmax_no_max}, (SOFTMAX_STABLE,), matches=rc.softmax_overflows),
    Misconception(
        "softmax_wrong_axis", "attention", WRONG_AXIS,
        lambda: {"softmax": mu.softmax_default_axis0, SDPA_NAME: mu.sdpa(axis=-2)}, (SOFTMAX_ROWS, SOFTMAX_STABLE, SDPA),
        alternatives=(_attn(axis=0),)),
    Misconception(
        "softmax_hardcoded_axis", "attention", HARDCODED_AXIS, _attn(axis=1), SDPA_3D),
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
        (SOFTMAX_ROWS, SOFTMAX_AXIS, SOFTMAX_STABLE, SDPA)),
    Misconception(
        "softmax_no_keepdims", "attention",
        "The softmax divides by a sum taken without keeping its axis, so on a square array each row is divided "
        "by another row's total (on other shapes it fails to broadcast). Keep the summed axis as a size-1 axis "
        "so each row is divided by its own sum.",
        lambda: {"softmax": mu.softmax_no_keepdims, SDPA_NAME: mu.sdpa(softmax_fn=mu.softmax_no_keepdims)},
        (SOFTMAX_ROWS, SOFTMAX_STABLE, SDPA),
        alternatives=(lambda: {"softmax": mu.softmax_no_keepdims_torch,
                               SDPA_NAME: mu.sdpa(softmax_fn=mu.softmax_no_keepdims_torch)},)),
    Misconception(
        "softmax_underflow", "attention",
        "Your softmax gives nan on a row whose scores are all far below the largest score of the whole array: "
        "every exp() there underflows to 0, and 0/0 is nan. Subtract each row's own maximum (along the axis), "
        "not one maximum for the whole array.",
        lambda: {"softmax": mu.softmax_global_max}, (SOFTMAX_STABLE,), matches=rc.softmax_underflows),
    Misconception("transpose_all_axes", "attention", TRANSPOSE_ALL_AXES, _attn(transpose_keys="all"), (SDPA,),
                  raises=rc.transpose_all_axes),
    Misconception("array_truth_value", "attention", TRUTH_VALUE, _attn(truth_test=True), SDPA_MASKED,
                  raises=rc.truth_value_of_array),
    Misconception("mask_always_causal", "attention", MASK_ALWAYS_CAUSAL, _attn(mask_mode="causal"), SDPA_MASKED),
    Misconception("mask_rank_ignored", "attention", MASK_RANK, _attn(mask_mode="2d_only"), SDPA_MASKED,
                  alternatives=tuple(_attn(mask_mode=m) for m in ("3d_only", "4d_only", "same_rank_only"))),
    _low_precision("attention", (A,), lambda: {"softmax": partial(mu.softmax_in, np.float16),
                                               SDPA_NAME: mu.sdpa(dtype=np.float16)}),
    Misconception("transpose_fixed_axes", "attention", TRANSPOSE_FIXED_AXES, _attn(transpose_keys="front"), (SDPA,),
                  raises=rc.transpose_fixed_axes),
    Misconception("returns_swapped", "attention", RETURNS_SWAPPED, lambda: {SDPA_NAME: mu.swapped(mu.sdpa())},
                  (SDPA,)),
    Misconception("no_scaling", "attention", NO_SCALING, _attn(scale="none"), (SDPA,)),
    Misconception("scaled_by_dk", "attention", SCALED_BY_DK, _attn(scale="dk"), (SDPA,)),
    Misconception("scaled_by_wrong_size", "attention", SCALED_BY_WRONG_SIZE, _attn(scale="k_axis1"), (SDPA,),
                  alternatives=(_attn(scale="d_v"), _attn(scale="n_k"))),
    Misconception("keys_not_transposed", "attention", KEYS_NOT_TRANSPOSED, _attn(transpose_keys=False), (SDPA,),
                  alternatives=(lambda: {SDPA_NAME: mu.attention_torch_keys},)),
    Misconception("mask_ignored", "attention", MASK_IGNORED, _attn(mask_mode="ignored"), SDPA_MASKED),
    Misconception("mask_inverted", "attention", MASK_INVERTED, _attn(mask_mode="inverted"), SDPA_MASKED),
    Misconception("mask_after_softmax", "attention", MASK_AFTER_SOFTMAX, _attn(mask_mode="after"), SDPA_MASKED),
    Misconception("mask_fill_zero", "attention", MASK_FILL_ZERO, _attn(mask_mode="zero"), SDPA_MASKED),
    Misconception("mask_additive", "attention", MASK_ADDITIVE, _attn(mask_mode="additive"), SDPA_MASKED),
    Misconception("mask_transposed", "attention", MASK_TRANSPOSED, _attn(mask_mode="transposed"), SDPA_MASKED),
    Misconception("mask_boolean_index", "attention", MASK_BOOLEAN_INDEX, _attn(mask_mode="boolean_index"), SDPA_MASKED,
                  raises=rc.boolean_index_error),
    Misconception("mask_bitwise_not", "attention", MASK_BITWISE_NOT, _attn(mask_mode="bitwise_not"), SDPA_MASKED,
                  alternatives=(_attn(mask_mode="bitwise_not", empty_rows="nan"),), raises=rc.invert_error),

    # ------------------------------------------------------------ causal_mask.py
    Misconception(
        "mask_upper_triangular", "causal_mask",
        "The causal mask is upper-triangular: each position may see itself and the FUTURE, and is blocked from "
        "the past. Position i may attend to positions 0..i, i.e. the entries on and below the diagonal.",
        lambda: {"create_causal_mask": mu.mask_fn("upper"), CAUSAL_NAME: mu.causal_fn(kind="upper")},
        (CREATE, CAUSAL)),
    Misconception(
        "mask_excludes_diagonal", "causal_mask",
        "The causal mask also blocks the diagonal, so a position cannot attend to itself (and the first "
        "position can attend to nothing at all). 'Not the future' means positions 0..i, including i itself.",
        lambda: {"create_causal_mask": mu.mask_fn("strict_lower"), CAUSAL_NAME: mu.causal_fn(kind="strict_lower")},
        (CREATE, CAUSAL),
        alternatives=(_causal_and_mask("strict_lower", kind="strict_lower", empty_rows="nan"),
                      _causal_and_mask("strict_lower", kind="strict_lower", empty_rows="zero"),
                      _causal_and_mask("strict_lower", kind="strict_lower", fill="add"))),
    Misconception(
        "causal_mask_off_by_one", "causal_mask",
        "The causal mask is off by one: besides the past and itself, each position may also see the NEXT "
        "position (the diagonal just above the main one is allowed). Position i may attend to positions 0..i "
        "and nothing after i; count where your triangle starts.",
        lambda: {"create_causal_mask": mu.mask_fn("next"), CAUSAL_NAME: mu.causal_fn(kind="next")},
        (CREATE, CAUSAL)),
    Misconception(
        "mask_inverted", "causal_mask",
        "The causal mask is the wrong way round: it marks the future (above the diagonal) with 1/True and the "
        "past with 0/False, as a 'blocked' mask would. In this kit 1/True means 'may attend', so the ones go on "
        "and below the diagonal.",
        lambda: {"create_causal_mask": mu.mask_fn("strict_upper"), CAUSAL_NAME: mu.causal_fn(mask_mode="inverted")},
        (CREATE, CAUSAL),
        alternatives=(_causal_and_mask("strict_upper", mask_mode="inverted", empty_rows="nan"),
                      _causal_and_mask("strict_upper", mask_mode="inverted", empty_rows="zero"),
                      _causal_and_mask("strict_upper", mask_mode="inverted", fill="add"))),
    Misconception(
        "causal_mask_additive", "causal_mask",
        "create_causal_mask returns an additive mask (0 where allowed, -inf where blocked). The contract asks for "
        "the boolean form: 1/True on and below the diagonal, 0/False above it; turn it into -inf only where you "
        "apply it to the scores.",
        lambda: {"create_causal_mask": mu.additive_causal_mask}, (CREATE,)),
    Misconception("mask_ignored", "causal_mask",
                  "causal_attention never applies the causal mask: every position attends to the whole sequence, "
                  "future included. Block the scores above the diagonal before the softmax.",
                  _causal(mask_mode="ignored"), (CAUSAL,)),
    Misconception("mask_after_softmax", "causal_mask", MASK_AFTER_SOFTMAX, _causal(mask_mode="after"), (CAUSAL,),
                  alternatives=(_causal(mask_mode="after_neg_inf"),)),
    Misconception("mask_fill_zero", "causal_mask", MASK_FILL_ZERO, _causal(mask_mode="zero"), (CAUSAL,)),
    Misconception("transpose_fixed_axes", "causal_mask", TRANSPOSE_FIXED_AXES, _causal(transpose_keys="front"),
                  (CAUSAL,), raises=rc.transpose_fixed_axes),
    Misconception("returns_swapped", "causal_mask", RETURNS_SWAPPED,
                  lambda: {CAUSAL_NAME: mu.swapped(mu.causal_fn())}, (CAUSAL,)),
    Misconception("no_scaling", "causal_mask", NO_SCALING, _causal(scale="none"), CAUSAL_VALUES),
    Misconception("scaled_by_dk", "causal_mask", SCALED_BY_DK, _causal(scale="dk"), CAUSAL_VALUES),
    Misconception("scaled_by_wrong_size", "causal_mask", SCALED_BY_WRONG_SIZE, _causal(scale="k_axis1"),
                  CAUSAL_VALUES, alternatives=(_causal(scale="n_k"),)),
    Misconception("softmax_wrong_axis", "causal_mask", WRONG_AXIS, _causal(axis=-2), CAUSAL_VALUES,
                  alternatives=(_causal(axis=0),)),
    Misconception("softmax_no_keepdims", "causal_mask",
                  "Your softmax divides by a sum taken without keeping its axis, so each row of the (square) "
                  "scores is divided by another row's total. Keep the summed axis as a size-1 axis.",
                  _causal(softmax_fn=mu.softmax_no_keepdims), CAUSAL_VALUES),
    Misconception("keys_not_transposed", "causal_mask", KEYS_NOT_TRANSPOSED, _causal(transpose_keys=False), CAUSAL_VALUES),
    Misconception("transpose_all_axes", "causal_mask", TRANSPOSE_ALL_AXES, _causal(transpose_keys="all"), (CAUSAL,),
                  raises=rc.transpose_all_axes),
    _low_precision("causal_mask", (CAUSAL,), _causal(dtype=np.float16)),

    # ------------------------------------------------------------ hand_computation.py
    Misconception(
        "no_scaling", "hand_computation",
        "The scores were not divided by sqrt(d_k) before the softmax (d_k = 2 in Part A, 4 in Part B). Scale "
        "every score first, then take the softmax of the scaled row.",
        lambda: hm.hand_values(scale="none"), HAND_AFTER_SCALING),
    Misconception(
        "scaled_by_dk", "hand_computation",
        "The scores were divided by d_k instead of sqrt(d_k): by 2 instead of 1.414 in Part A, by 4 instead of 2 "
        "in Part B. Recompute the scaled scores, and everything after them.",
        lambda: hm.hand_values(scale="dk"), HAND_AFTER_SCALING),
    Misconception(
        "softmax_wrong_axis", "hand_computation",
        "The softmax normalised each column instead of each row. Row i belongs to query i, which shares its "
        "attention among the keys, so each row must add up to 1: exponentiate a row, then divide by that row's sum.",
        lambda: hm.hand_values(axis=0), HAND_AFTER_SOFTMAX),
    Misconception(
        "hand_slip_carried", "hand_computation",
        "One number early on is wrong (a dot product or an exponential), and every step computed from it "
        "carries the error while the other rows are right. Recompute the wrong row's scores one product at a "
        "time, then redo the steps that follow from them.",
        hm.hand_slip, (H,), matches=hand_slip, fallback=True),
    Misconception(
        "hand_imprecise", "hand_computation",
        "Your numbers are close but not close enough: off by more than rounding (0.006). Carry 4 or 5 decimals "
        "through every step and round only the final answer; rounding early makes the error pile up.",
        hm.hand_offset, (H,), matches=hand_imprecise, fallback=True),
    Misconception(
        "hand_inputs_reordered", "hand_computation",
        "Your numbers are the right computation done on inputs in another order: rows of Q or K swapped, K used "
        "in place of Q, or the words of the sentence (cat, sat, mat) taken in another order. Copy Q, K, V and X "
        "row by row as given: row i of every answer belongs to query i, the i-th word.",
        partial(hm.hand_values, reordered=0), (H,),
        alternatives=tuple(partial(hm.hand_values, reordered=n) for n in range(1, len(hm.HAND_REORDERED)))),

    # ------------------------------------------------------------ scaling.py
    Misconception(
        "no_scaling", "scaling",
        "Your 'scaled' statistics are the unscaled ones: the scores were never divided by sqrt(d) before the "
        "scaled std, entropy and max weight were taken, so std_scaled grows like sqrt(d) instead of staying "
        "near 1.",
        _scaling(scale="none"), SCALING_STATS, matches=std_pattern("std_scaled", math.sqrt)),
    Misconception(
        "scaled_by_dk", "scaling",
        "The scaled scores were divided by d instead of sqrt(d): std_scaled shrinks like 1/sqrt(d) instead of "
        "staying near 1. A sum of d products of unit-variance numbers has variance d and std sqrt(d).",
        _scaling(scale="dk"), SCALING_STATS, matches=std_pattern("std_scaled", lambda d: 1 / math.sqrt(d))),
    Misconception(
        "variance_not_std", "scaling",
        "The 'std' entries hold the variance: std_unscaled grows like d, not sqrt(d). Report the standard "
        "deviation (the square root of the variance).",
        _scaling(variance=True), (S + "std", S + "other_dims"), matches=std_pattern("std_unscaled", float)),
    Misconception(
        "entropy_log2", "scaling",
        "The entropies are in bits (log base 2), about 1.44 times too large; the contract asks for the natural "
        "log (nats), so that a uniform row of n weights has entropy log(n).",
        _scaling(log=np.log2), (S + "entropy", S + "other_dims")),
    Misconception(
        "seed_ignored", "scaling",
        "The `seed` argument does not decide the numbers: two calls with the same seed differ, or two seeds give "
        "the same numbers. Make one generator from `seed` inside the function and draw every Q and K from it.",
        _scaling(seeded=False), (S + "seed", S + "n_trials"), matches=rc.seed_ignored),
    Misconception(
        "n_trials_ignored", "scaling",
        "The statistics are not averaged over `n_trials` trials: asking for more trials does not make them any "
        "steadier from seed to seed. Draw n_trials independent pairs of Q and K for each d and average over them.",
        _scaling(trials=50), (S + "n_trials",), matches=rc.n_trials_ignored),

    Misconception(
        "n_trials_off_by_one", "scaling",
        "The experiment runs one trial fewer than n_trials: with n_trials=1 it averages over no trial at all "
        "(nan, zeros, or a division by zero). Count the trials your loop or your arrays really hold: n_trials of "
        "them, from the first to the last.",
        _scaling(trials_offset=-1), (S + "n_trials",), matches=rc.n_trials_off_by_one, raises=rc.no_trial_error),
    Misconception(
        "dims_ignored", "scaling",
        "The results do not follow the `dims` argument: asked for other dimensions, the function still reports "
        "its own (often the default ones). Loop over the dims you are given and key the results by them.",
        _scaling(fixed_dims=(4, 16, 64, 256)), (S + "other_dims", S + "seed", S + "n_trials"),
        matches=rc.dims_ignored),
    Misconception(
        "seq_len_ignored", "scaling",
        "The statistics do not follow the `seq_len` argument: Q and K are drawn with a fixed number of rows, "
        "so the entropies and largest weights are those of another sequence length. Draw Q and K of shape "
        "(seq_len, d).",
        _scaling(fixed_seq_len=4), (S + "other_dims",)),

    # ------------------------------------------------------------ multihead.py
    Misconception(
        "reshape_without_transpose", "multihead",
        "The heads are split with a bare reshape to (batch, heads, seq, d_head), in split_heads or in the "
        "module's forward. The numbers land in the right shape but not in the right places: a head ends up "
        "with pieces of several positions. Reshape to (batch, seq, heads, d_head) first, so each position's "
        "features are cut into heads, then move the head axis in front of seq (and when merging, move it back "
        "next to d_head before joining the last two axes).",
        lambda: {"split_heads": mu.split_bare} | _multihead(split="bare")(),
        (SPLIT, ROUND_TRIP, MHA) + MOD_VALUES,
        # split and merged by bare reshapes: each undoes the other (the round trip holds), attention does not
        alternatives=(lambda: {"split_heads": mu.split_bare} | _multihead(split="bare", merge="bare")(),)),
    Misconception(
        "split_interleaved", "multihead",
        "The heads are dealt the features in turn (head h gets features h, h + heads, ...) instead of in "
        "consecutive blocks: head h must hold features h*d_head to (h+1)*d_head - 1. Check which of the two "
        "new axes your reshape of d_model makes the head axis (and undo the same split when merging).",
        lambda: ({"split_heads": mu.split_interleaved, "merge_heads": mu.merge_interleaved}
                 | _multihead(split="interleaved", merge="interleaved")()),
        (SPLIT, MERGE, ROUND_TRIP, MHA) + MOD_VALUES,
        alternatives=(lambda: {"split_heads": mu.split_interleaved} | _multihead(split="interleaved")(),)),
    Misconception(
        "merge_without_transpose", "multihead",
        "The heads are merged by a bare reshape from (batch, heads, seq, d_head) to (batch, seq, d_model), in "
        "merge_heads or in the module's forward, which mixes positions: it is not the inverse of the split. Move "
        "the head axis back next to d_head first (to batch, seq, heads, d_head), then join the last two axes.",
        lambda: {"merge_heads": mu.merge_bare} | _multihead(merge="bare")(),
        (MERGE, ROUND_TRIP, MHA_OUT, *MHA_MASKS) + MOD_VALUES),
    Misconception(
        "merge_wrong_axes", "multihead",
        "The heads are merged with the axes moved into the wrong order: each position keeps its own values, but "
        "the heads' features are interleaved (feature i * heads + h comes from head h, as if the head axis "
        "went behind d_head) instead of standing side by side. Before joining the last two axes, the order must "
        "be (batch, seq, heads, d_head): the inverse of the split.",
        lambda: {"merge_heads": mu.merge_interleaved} | _multihead(merge="interleaved")(),
        (MERGE, ROUND_TRIP, MHA_OUT, *MHA_MASKS) + MOD_VALUES),
    Misconception(
        "heads_not_split", "multihead",
        "The attention was computed once over all d_model features instead of once per head: every head has "
        "the same weights. Split Q, K and V into heads first, attend within each head (scaled by sqrt(d_head)), "
        "and merge the heads' outputs.",
        _multihead(split="none", scale="model"), (MHA, MOD),
        alternatives=(_multihead(split="none", scale="head"),
                      _multihead(split="none", scale="model", heads_shape="flat"),
                      _multihead(split="none", scale="head", heads_shape="flat"))),
    Misconception(
        "no_output_projection", "multihead",
        "The merged heads are returned as they are: the output projection W_o is never applied. After merging "
        "the heads, mix them with the output projection.",
        _multihead(project=False), (MHA_OUT, *MHA_MASKS) + MOD_VALUES),
    Misconception(
        "scaled_by_d_model", "multihead",
        "Each head's scores were divided by sqrt(d_model) instead of sqrt(d_head): a head only sees d_head "
        "features, so its dot products have variance d_head. Scale by the square root of d_model // num_heads.",
        _multihead(scale="model"), (MHA,) + MOD_VALUES),
    Misconception("returns_swapped", "multihead", RETURNS_SWAPPED,
                  lambda: {MHA_NAME: mu.swapped(mu.mha_fn())}, (MHA,)),
    Misconception("no_scaling", "multihead", NO_SCALING.replace("sqrt(d_k)", "sqrt(d_head)"),
                  _multihead(scale="none"), (MHA,) + MOD_VALUES),
    Misconception("scaled_by_dk", "multihead",
                  "Each head's scores were divided by d_head instead of sqrt(d_head), which flattens the weights. "
                  "Divide by the square root of the per-head feature size.",
                  _multihead(scale="dk"), (MHA,) + MOD_VALUES),
    Misconception("softmax_wrong_axis", "multihead", WRONG_AXIS, _multihead(axis=-2), (MHA,) + MOD_VALUES),
    Misconception("softmax_hardcoded_axis", "multihead", HARDCODED_AXIS, _multihead(axis=1), (MHA,) + MOD_VALUES),
    Misconception("keys_not_transposed", "multihead", KEYS_NOT_TRANSPOSED, _multihead(transpose_keys=False),
                  (MHA,) + MOD_VALUES + (MOD_STRUCT,),
                  alternatives=(lambda: _multihead(transpose_keys=False)() | {MOD_NAME: mu.module_torch_keys()},)),
    Misconception("mask_ignored", "multihead", MASK_IGNORED, _multihead(mask_mode="ignored"), MHA_MASKS + MOD_MASKS),
    Misconception("mask_inverted", "multihead", MASK_INVERTED, _multihead(mask_mode="inverted"), MHA_MASKS + MOD_MASKS,
                  alternatives=(_multihead(mask_mode="inverted", empty_rows="nan"),
                                _multihead(mask_mode="inverted", empty_rows="zero"),
                                _multihead(mask_mode="inverted", fill="add"))),
    Misconception("mask_after_softmax", "multihead", MASK_AFTER_SOFTMAX, _multihead(mask_mode="after"),
                  MHA_MASKS + MOD_MASKS),
    Misconception("mask_fill_zero", "multihead", MASK_FILL_ZERO, _multihead(mask_mode="zero"), MHA_MASKS + MOD_MASKS),
    Misconception("mask_additive", "multihead", MASK_ADDITIVE, _multihead(mask_mode="additive"), MHA_MASKS + MOD_MASKS),
    Misconception("mask_transposed", "multihead", MASK_TRANSPOSED, _multihead(mask_mode="transposed"),
                  MHA_MASKS + MOD_MASKS),
    Misconception("mask_boolean_index", "multihead", MASK_BOOLEAN_INDEX, _multihead(mask_mode="boolean_index"),
                  MHA_MASKS + MOD_MASKS, raises=rc.boolean_index_error),
    Misconception("mask_bitwise_not", "multihead", MASK_BITWISE_NOT, _multihead(mask_mode="bitwise_not"),
                  MHA_MASKS + MOD_MASKS, alternatives=(_multihead(mask_mode="bitwise_not", empty_rows="nan"),),
                  raises=rc.invert_error),
    Misconception("transpose_all_axes", "multihead", TRANSPOSE_ALL_AXES, _multihead(transpose_keys="all"),
                  (MHA, MOD), raises=rc.transpose_all_axes),
    Misconception("array_truth_value", "multihead", TRUTH_VALUE, _multihead(truth_test=True), MHA_MASKS + MOD_MASKS,
                  raises=rc.truth_value_of_array),
    Misconception("weights_averaged_over_heads", "multihead", WEIGHTS_AVERAGED, _multihead(heads_shape="mean"),
                  (MHA, MOD)),
    Misconception("mask_always_causal", "multihead", MASK_ALWAYS_CAUSAL, _multihead(mask_mode="causal"), MASKS_4D),
    Misconception("mask_rank_ignored", "multihead", MASK_RANK, _multihead(mask_mode="2d_only"), MHA_MASKS + MOD_MASKS,
                  alternatives=(_multihead(mask_mode="4d_only"),)),
    _low_precision("multihead", (MHA,) + MOD_VALUES, _multihead(dtype=np.float16)),
    Misconception(
        "projection_transposed", "multihead",
        "The projection matrices are applied the other way round. In multi_head_attention every W is applied as "
        "X @ W; a torch.nn.Linear computes x times its weight transposed, plus its bias. Check which side of the "
        "product each weight matrix is on.",
        _multihead(mha={"transposed": True}, module={"linear": "transposed"}), (MHA,) + MOD_VALUES,
        alternatives=(_multihead(mha={"transposed": True}, module={"linear": "transposed", "linear_out": "right"}),
                      _multihead(mha={"transposed": "out"}, module={"linear_out": "transposed"}))),
    Misconception(
        "linear_bias_ignored", "multihead",
        "The projections use the layers' weight matrices but not their biases. Call the nn.Linear layers "
        "themselves (or add each layer's bias) for Q, K, V and the output.",
        lambda: {MOD_NAME: mu.module_class(linear="no_bias")}, MOD_VALUES,
        alternatives=(lambda: {MOD_NAME: mu.module_class(linear="no_bias", linear_out="right")},)),
]
