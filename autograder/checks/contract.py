"""The exercise contract (docs/contract.md) as data, derived from the exercise descriptors
(autograder/checks/exercise.py): the stems, what each graded name returns, what each stem may import.

The return kind tells the sandbox how to turn a submission's value into plain data:
"array" (float64 ndarray), ("tuple", k1, k2, ...), "float_dict_dict", "figure".
"""

from __future__ import annotations

from autograder.checks import EXERCISES

STEMS: tuple[str, ...] = tuple(EXERCISES)

# stem -> graded name -> return kind. Module-level constants (hand computation) are "array".
RETURNS: dict[str, dict[str, object]] = {stem: dict(e.returns) for stem, e in EXERCISES.items()}

# Which stems a submission file may import and get the kit's correct version of (so a wrong
# softmax in attention.py costs nothing elsewhere). attention.py may import none of them:
# every other stem is built on attention, and would hand it the answer.
PROVIDED: dict[str, tuple[str, ...]] = {stem: tuple(e.provided) for stem, e in EXERCISES.items()}

# Each misconception id the contract names (docs/contract.md, "Misconception ids") -> what the student
# did, in one line: the class report shows it beside the id. tests/test_report.py keeps the two equal.
MISCONCEPTIONS: dict[str, str] = {
    "no_scaling": "left out the division by sqrt(d_k)",
    "scaled_by_dk": "divided by d_k instead of sqrt(d_k)",
    "scaled_by_d_model": "in multi-head attention, scaled by sqrt(d_model) instead of sqrt(d_head)",
    "softmax_wrong_axis": "normalised over the query axis instead of the key axis",
    "softmax_unstable": "softmax overflows (no max subtraction): inf or nan on large inputs",
    "keys_not_transposed": "used Q @ K instead of Q @ K^T",
    "mask_ignored": "accepted a mask and did not apply it",
    "mask_inverted": "treated 1 as blocked and 0 as allowed",
    "mask_read_inverted": "in causal attention, used a right causal mask as 1 = blocked",
    "mask_after_softmax": "zeroed weights after the softmax, so rows no longer sum to 1",
    "mask_upper_triangular": "causal mask lets positions see the future instead of the past",
    "mask_excludes_diagonal": "causal mask blocks a position from attending to itself",
    "reshape_without_transpose": "split heads with a bare reshape to (batch, heads, seq, d_head) (numpy functions "
                                 "or the module's forward)",
    "merge_without_transpose": "merged heads with a bare reshape, without moving heads back",
    "heads_not_split": "computed one attention over all features (no per-head split)",
    "no_output_projection": "left out W_o",
    "hand_imprecise": "a hand answer is off by more than rounding, but every entry within 3 times the tolerance "
                      "(plus the rounding of the decimals typed)",
    "hand_inputs_reordered": "a hand answer is the right computation on inputs in another order (rows of Q or K "
                             "swapped, K for Q, the words reordered)",
    "transpose_all_axes": "used K.T on a batch, which reverses every axis, not only the last two",
    "array_truth_value": "tested an array's truth value (`if mask:`)",
    "softmax_no_keepdims": "divided by a sum taken without keepdims",
    "softmax_underflow": "subtracted the whole array's maximum, so rows far below it underflow to 0/0",
    "weights_averaged_over_heads": "returned the weights averaged over the heads, (batch, seq, seq)",
    "low_precision_dtype": "computed in a 16-bit float (float16, bfloat16)",
    "mask_always_causal": "applied a causal mask whatever mask was given",
    "mask_rank_ignored": "applied the mask only when it had one particular rank (e.g. 2-D)",
    "seed_ignored": "scaling_experiment's numbers do not follow `seed`",
    "n_trials_ignored": "scaling_experiment does not average over `n_trials` trials",
    "hand_slip_carried": "one hand value is wrong (a product, an entry, a row) and every step computed from it "
                         "carries the error: named where it started",
    "weights_not_normalised": "in the hand computation, left the softmax's exponentials undivided by their row's "
                              "sum (weights, or the output computed from them)",
    "softmax_hardcoded_axis": "normalised over a fixed axis number, the key axis only for 2-D scores",
    "softmax_axis_ignored": "softmax ignores its `axis` argument",
    "softmax_whole_array": "normalised by one total over the whole array, not along the axis",
    "transpose_fixed_axes":
        "swapped K's axes by number from the front (`K.transpose(1, 2)`), right only for (batch, n, d)",
    "returns_swapped": "returned (weights, output) instead of (output, weights)",
    "scaled_by_wrong_size":
        "divided by the square root of a size that is not d_k (the number of keys or of words, d_v, an axis of "
        "the batch)",
    "mask_fill_zero":
        "set blocked scores to 0 (or multiplied by the mask) before the softmax, so blocked keys keep weight",
    "mask_additive": "added the 0/1 mask to the scores as if it were an additive mask",
    "mask_transposed":
        "applied the mask with its last two axes swapped (a padding mask then blocks queries, not keys)",
    "mask_boolean_index":
        "indexed the scores with a boolean mask, which works only for a mask of exactly their shape",
    "mask_bitwise_not": "flipped a 0/1 numeric mask with `~`",
    "argument_changed_in_place": "changed an array it was given in place (`Q /= ...`, `x -= ...`, "
                                 "`scores[...] = ...` on an argument; in the module's forward, `x *= ...`, "
                                 "`mask.logical_not_()` on its input)",
    "causal_mask_off_by_one": "causal mask also lets each position see the next one",
    "causal_mask_additive": "create_causal_mask returned an additive (0 / -inf) mask instead of the boolean one",
    "variance_not_std": "reported the variance where the standard deviation is asked",
    "entropy_log2": "entropies in bits (log base 2) instead of nats",
    "n_trials_off_by_one": "ran one trial fewer than `n_trials`",
    "dims_ignored": "scaling_experiment's results do not follow `dims`",
    "seq_len_ignored": "scaling_experiment's statistics do not follow `seq_len`",
    "split_interleaved": "dealt the features to the heads in turn instead of in consecutive blocks",
    "merge_wrong_axes": "merged heads after moving the axes into the wrong order (features of the heads interleaved)",
    "projection_transposed": "applied the projection matrices the other way round (W^T where the contract applies W)",
    "linear_bias_ignored": "used the layers' weights but not their biases",
}


# ---------------------------------------------------------------- the contract's tables (docs/contract.md)

# How docs/contract.md says each return kind; a new kind must be named here (tests/test_contract.py).
KIND_WORDS = {"array": "array", "float_dict_dict": "dict[int, dict[str, float]]", "figure": "matplotlib Figure"}
TABLES_BEGIN = "<!-- tables: made from the exercise descriptors by `python -m autograder.checks.contract`; do not edit -->"
TABLES_END = "<!-- end of tables -->"


def kind_words(kind: object) -> str:
    """A return kind as the contract writes it: "array", "(array, array)", ..."""
    if isinstance(kind, tuple) and kind and kind[0] == "tuple":
        return "(" + ", ".join(kind_words(k) for k in kind[1:]) + ")"
    return KIND_WORDS[kind]


def tables_markdown() -> str:
    """The contract's tables of the stems, their graded names and return kinds, and the stems each may
    import, as docs/contract.md holds them between TABLES_BEGIN and TABLES_END."""
    lines = [TABLES_BEGIN, "", "| # | file | exercise | may import (the kit's version is provided) |",
             "|---|---|---|---|"]
    for stem, exercise in EXERCISES.items():
        imports = ", ".join(f"`{p}`" for p in PROVIDED[stem]) or "none"
        lines.append(f"| {exercise.order} | `{stem}.py` | {exercise.title} | {imports} |")
    lines += ["", "| file | graded name | returns |", "|---|---|---|"]
    for stem in STEMS:
        lines += [f"| `{stem}.py` | `{name}` | {kind_words(kind)} |" for name, kind in RETURNS[stem].items()]
    return "\n".join([*lines, "", TABLES_END])


def write_tables(path) -> bool:
    """Rewrite the tables in the contract at `path`; whether anything changed."""
    from pathlib import Path

    path = Path(path)
    text = path.read_text(encoding="utf-8")
    head, rest = text.split(TABLES_BEGIN, 1)
    tail = rest.split(TABLES_END, 1)[1]
    new = head + tables_markdown() + tail
    if new != text:
        path.write_text(new, encoding="utf-8")
    return new != text


if __name__ == "__main__":      # python -m autograder.checks.contract: rewrite docs/contract.md's tables
    from autograder.config import KIT_ROOT

    print("docs/contract.md:", "tables rewritten" if write_tables(KIT_ROOT / "docs" / "contract.md") else "up to date")
