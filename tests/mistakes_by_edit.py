"""Student-style files with exactly one mistake each: solutions/<stem>.py with one edit.

MISTAKES[(stem, misconception id, variant)] is a list of (old, new) replacements made in the
solution (every occurrence of `old`, which must be there). Several edits of one entry make one
mistake (the same wrong split in three lines, say). Hand computation is edited in HAND, a
student's computed answers, since the solution types its numbers in.

tests/test_reachable.py grades each file through the full pipeline and expects the id in the tags.
"""

from __future__ import annotations

HAND = '''
import numpy as np

Q = np.array([[1.0, 0.0], [0.0, 1.0]])
K = np.array([[1.0, 1.0], [1.0, 0.0]])
V = np.array([[2.0, 1.0], [1.0, 2.0]])


def softmax_rows(s):
    e = np.exp(s - s.max(axis=1, keepdims=True))
    return e / e.sum(axis=1, keepdims=True)


SCORES = Q @ K.T
SCALED_SCORES = SCORES / np.sqrt(2)
WEIGHTS = softmax_rows(SCALED_SCORES)
OUTPUT = WEIGHTS @ V

X = np.array([[1.0, 0.5, 0.2, 0.8],   # cat
              [0.3, 0.9, 0.1, 0.4],   # sat
              [0.6, 0.2, 0.7, 0.3]])  # mat
CSM_SCORES = X @ X.T
CSM_WEIGHTS = softmax_rows(CSM_SCORES / np.sqrt(4))
CSM_OUTPUT = CSM_WEIGHTS @ X
'''

# sdpa's lines in solutions/attention.py
_SDPA_SCORES = "scores = Q @ np.swapaxes(K, -1, -2) / math.sqrt(d_k)"
_SDPA_WHERE = "scores = np.where(allowed, scores, -1e9)"
_SDPA_ALLOWED = "allowed = np.asarray(mask).astype(bool)"
# causal_attention's
_CAUSAL_SCORES = "scores = Q @ np.swapaxes(K, -1, -2) / math.sqrt(d)"
_CAUSAL_WHERE = "scores = np.where(allowed, scores, -np.inf)"
_TRIL = "np.tril(np.ones((seq_len, seq_len), dtype=bool))"
# multi_head_attention's (numpy) and the module's forward (torch)
_NP_SCORES = "scores = Q @ np.swapaxes(K, -1, -2) / math.sqrt(d_head)"
_NP_WHERE = "scores = np.where(np.asarray(mask).astype(bool), scores, -1e9)"
_NP_SPLIT = "x = x.reshape(batch, seq, num_heads, d_head)  # (B, T, h, d_head)\n    return x.transpose(0, 2, 1, 3)"
_NP_MERGE = "x = x.transpose(0, 2, 1, 3)  # (B, T, h, d_head)\n    "
_T_SPLIT = "t.view(B, T, h, d_head).transpose(1, 2)"
_T_MERGE = "heads.transpose(1, 2).reshape(B, T, h * d_head)"
_T_SCORES = "scores = q @ k.transpose(-2, -1) / math.sqrt(d_head)"
_T_FILL = "scores = scores.masked_fill(~allowed, -1e9)"
_T_ALLOWED = "allowed = torch.as_tensor(mask, device=scores.device).bool()"
_T_QKV = "split(self.W_q(x)), split(self.W_k(x)), split(self.W_v(x))"

MISTAKES: dict[tuple[str, str, str], list[tuple[str, str]]] = {
    # ---------------------------------------------------------------- attention
    ("attention", "softmax_unstable", ""): [("shifted = x - np.max(x, axis=axis, keepdims=True)", "shifted = x")],
    ("attention", "softmax_wrong_axis", ""): [("softmax(scores, axis=-1)", "softmax(scores, axis=-2)")],
    ("attention", "softmax_hardcoded_axis", ""): [("softmax(scores, axis=-1)", "softmax(scores, axis=1)")],
    ("attention", "softmax_axis_ignored", ""): [("axis=axis", "axis=-1")],
    ("attention", "softmax_whole_array", ""): [("np.max(x, axis=axis, keepdims=True)", "np.max(x)"),
                                               ("np.sum(exps, axis=axis, keepdims=True)", "np.sum(exps)")],
    ("attention", "softmax_no_keepdims", ""): [("np.sum(exps, axis=axis, keepdims=True)", "np.sum(exps, axis=axis)")],
    ("attention", "softmax_underflow", ""): [("np.max(x, axis=axis, keepdims=True)", "np.max(x)")],
    ("attention", "transpose_all_axes", ""): [("Q @ np.swapaxes(K, -1, -2)", "Q @ K.T")],
    ("attention", "array_truth_value", ""): [("if mask is not None:", "if mask:")],
    ("attention", "mask_always_causal", ""): [(_SDPA_ALLOWED, "allowed = np.tril(np.ones(scores.shape[-2:], dtype=bool))")],
    ("attention", "mask_rank_ignored", ""): [("if mask is not None:", "if mask is not None and np.ndim(mask) == 2:")],
    ("attention", "argument_changed_in_place", ""): [("    shifted = x - np.max(x, axis=axis, keepdims=True)",
                                                     "    x -= np.max(x, axis=axis, keepdims=True)\n    shifted = x")],
    ("attention", "low_precision_dtype", ""): [("Q, K, V = np.asarray(Q), np.asarray(K), np.asarray(V)",
                                                "Q, K, V = (np.asarray(a, dtype=np.float16) for a in (Q, K, V))")],
    ("attention", "transpose_fixed_axes", ""): [("np.swapaxes(K, -1, -2)", "np.swapaxes(K, 1, 2)")],
    ("attention", "returns_swapped", ""): [("return output, weights", "return weights, output")],
    ("attention", "no_scaling", ""): [(" / math.sqrt(d_k)", "")],
    ("attention", "scaled_by_dk", ""): [("math.sqrt(d_k)", "d_k")],
    ("attention", "scaled_by_wrong_size", ""): [("d_k = Q.shape[-1]", "d_k = V.shape[-1]")],
    ("attention", "keys_not_transposed", ""): [("Q @ np.swapaxes(K, -1, -2)", "Q @ K")],
    ("attention", "mask_ignored", ""): [(_SDPA_WHERE, "scores = scores")],
    ("attention", "mask_inverted", ""): [(_SDPA_WHERE, "scores = np.where(allowed, -1e9, scores)")],
    ("attention", "mask_after_softmax", ""): [(_SDPA_WHERE, "scores = scores"),
                                              ("output = weights @ V", "weights = weights * allowed if mask is not None "
                                                                       "else weights\n    output = weights @ V")],
    ("attention", "mask_fill_zero", ""): [(_SDPA_WHERE, "scores = np.where(allowed, scores, 0.0)")],
    ("attention", "mask_additive", ""): [(_SDPA_WHERE, "scores = scores + np.asarray(mask, dtype=float)")],
    ("attention", "mask_transposed", ""): [(_SDPA_ALLOWED, "allowed = np.swapaxes(np.asarray(mask).astype(bool), -1, -2)")],
    ("attention", "mask_boolean_index", ""): [(_SDPA_WHERE, "scores = np.array(scores)\n        scores[~allowed] = -1e9")],
    ("attention", "mask_bitwise_not", ""): [(_SDPA_WHERE, "scores = np.where(~np.asarray(mask), -1e9, scores)")],

    # ---------------------------------------------------------------- causal_mask
    ("causal_mask", "mask_upper_triangular", ""): [(_TRIL, "np.triu(np.ones((seq_len, seq_len), dtype=bool))")],
    ("causal_mask", "mask_excludes_diagonal", ""): [(_TRIL, "np.tril(np.ones((seq_len, seq_len), dtype=bool), -1)")],
    ("causal_mask", "causal_mask_off_by_one", ""): [(_TRIL, "np.tril(np.ones((seq_len, seq_len), dtype=bool), 1)")],
    ("causal_mask", "mask_inverted", ""): [(_TRIL, "np.triu(np.ones((seq_len, seq_len), dtype=bool), 1)"),
                                           (_CAUSAL_WHERE, "scores = np.where(allowed, -np.inf, scores)")],
    ("causal_mask", "mask_read_inverted", ""): [(_CAUSAL_WHERE, "scores = np.where(allowed, -np.inf, scores)")],
    ("causal_mask", "causal_mask_additive", ""): [(_TRIL, f"np.where({_TRIL}, 0.0, -np.inf)"),
                                                  (_CAUSAL_WHERE, "scores = scores + allowed")],
    ("causal_mask", "mask_ignored", ""): [(_CAUSAL_WHERE, "scores = scores")],
    ("causal_mask", "mask_after_softmax", ""): [(_CAUSAL_WHERE, "scores = scores"),
                                                ("output = weights @ V", "weights = weights * allowed\n    output = weights @ V")],
    ("causal_mask", "mask_fill_zero", ""): [(_CAUSAL_WHERE, "scores = np.where(allowed, scores, 0.0)")],
    ("causal_mask", "transpose_fixed_axes", ""): [("np.swapaxes(K, -1, -2)", "np.swapaxes(K, 1, 2)")],
    ("causal_mask", "returns_swapped", ""): [("return output, weights", "return weights, output")],
    ("causal_mask", "no_scaling", ""): [(" / math.sqrt(d)", "")],
    ("causal_mask", "scaled_by_dk", ""): [("/ math.sqrt(d)", "/ d")],
    ("causal_mask", "scaled_by_wrong_size", ""): [("seq_len, d = Q.shape[-2], Q.shape[-1]",
                                                   "seq_len, d = Q.shape[-2], Q.shape[-2]")],
    ("causal_mask", "softmax_wrong_axis", ""): [("scores.max(axis=-1, keepdims=True)", "scores.max(axis=-2, keepdims=True)"),
                                                ("exps.sum(axis=-1, keepdims=True)", "exps.sum(axis=-2, keepdims=True)")],
    ("causal_mask", "softmax_no_keepdims", ""): [("exps.sum(axis=-1, keepdims=True)", "exps.sum(axis=-1)")],
    ("causal_mask", "keys_not_transposed", ""): [("Q @ np.swapaxes(K, -1, -2)", "Q @ K")],
    ("causal_mask", "transpose_all_axes", ""): [("Q @ np.swapaxes(K, -1, -2)", "Q @ K.T")],
    ("causal_mask", "low_precision_dtype", ""): [("Q, K, V = np.asarray(Q), np.asarray(K), np.asarray(V)",
                                                  "Q, K, V = (np.asarray(a, dtype=np.float16) for a in (Q, K, V))")],
    ("causal_mask", "argument_changed_in_place", ""): [
        ("    scores = Q @ np.swapaxes(K, -1, -2) / math.sqrt(d)", "    Q /= math.sqrt(d)\n    scores = Q @ np.swapaxes(K, -1, -2)")],

    # ---------------------------------------------------------------- hand_computation (edits of HAND)
    ("hand_computation", "no_scaling", ""): [(" / np.sqrt(2)", ""), (" / np.sqrt(4)", "")],
    ("hand_computation", "scaled_by_dk", ""): [("np.sqrt(2)", "2"), ("np.sqrt(4)", "4")],
    ("hand_computation", "scaled_by_wrong_size", ""): [("np.sqrt(4)", "np.sqrt(3)")],     # the 3 words for d_k
    ("hand_computation", "softmax_wrong_axis", ""): [("axis=1", "axis=0")],
    ("hand_computation", "weights_not_normalised", ""): [("return e / e.sum(axis=1, keepdims=True)", "return e")],
    ("hand_computation", "hand_slip_carried", ""): [("SCORES = Q @ K.T", "SCORES = Q @ K.T\nSCORES[1, 0] = 0.0")],
    ("hand_computation", "hand_imprecise", ""): [("SCALED_SCORES = SCORES / np.sqrt(2)", "SCALED_SCORES = SCORES * 0.7"),
                                                 ("CSM_SCORES / np.sqrt(4)", "(CSM_SCORES * 0.49)")],
    ("hand_computation", "hand_inputs_reordered", "words"): [("[0.3, 0.9, 0.1, 0.4],   # sat\n              [0.6, 0.2, 0.7, 0.3]])  # mat",
                                                              "[0.6, 0.2, 0.7, 0.3],   # mat\n              [0.3, 0.9, 0.1, 0.4]])  # sat")],
    ("hand_computation", "hand_inputs_reordered", "k_for_q"): [("SCORES = Q @ K.T", "SCORES = K @ K.T")],
    ("hand_computation", "hand_imprecise", "rounded"): [("WEIGHTS = softmax_rows(SCALED_SCORES)",
                                                         "WEIGHTS = softmax_rows(SCALED_SCORES).round(1)")],

    # ---------------------------------------------------------------- scaling
    ("scaling", "no_scaling", ""): [('("scaled", unscaled / math.sqrt(d))', '("scaled", unscaled)')],
    ("scaling", "scaled_by_dk", ""): [("unscaled / math.sqrt(d)", "unscaled / d")],
    ("scaling", "variance_not_std", ""): [("scores.std(axis=(1, 2))", "scores.var(axis=(1, 2))")],
    ("scaling", "entropy_log2", ""): [("np.log(np.where", "np.log2(np.where")],
    ("scaling", "seed_ignored", ""): [("np.random.default_rng(seed)", "np.random.default_rng()")],
    ("scaling", "n_trials_ignored", ""): [("rng = np.random.default_rng(seed)",
                                           "rng = np.random.default_rng(seed)\n    n_trials = 100")],
    ("scaling", "n_trials_off_by_one", ""): [("rng = np.random.default_rng(seed)",
                                              "rng = np.random.default_rng(seed)\n    n_trials = n_trials - 1")],
    ("scaling", "n_trials_off_by_one", "stacked"): [
        ("Q = rng.standard_normal((n_trials, seq_len, d))",
         "Q = np.stack([rng.standard_normal((seq_len, d)) for _ in range(n_trials - 1)])"),
        ("K = rng.standard_normal((n_trials, seq_len, d))",
         "K = np.stack([rng.standard_normal((seq_len, d)) for _ in range(n_trials - 1)])")],
    ("scaling", "dims_ignored", ""): [("for d in dims:", "for d in (4, 16, 64, 256):")],
    ("scaling", "seq_len_ignored", ""): [("(n_trials, seq_len, d)", "(n_trials, 4, d)")],

    # ---------------------------------------------------------------- multihead: numpy, then the torch module
    ("multihead", "reshape_without_transpose", "numpy"): [(_NP_SPLIT, "return x.reshape(batch, num_heads, seq, d_head)")],
    ("multihead", "reshape_without_transpose", "numpy_both"): [(_NP_SPLIT, "return x.reshape(batch, num_heads, seq, d_head)"),
                                                               (_NP_MERGE, "")],
    ("multihead", "reshape_without_transpose", "torch"): [(_T_SPLIT, "t.view(B, h, T, d_head)")],
    ("multihead", "reshape_without_transpose", "torch_both"): [(_T_SPLIT, "t.view(B, h, T, d_head)"),
                                                               (_T_MERGE, "heads.reshape(B, T, h * d_head)")],
    ("multihead", "merge_without_transpose", "numpy"): [(_NP_MERGE, "")],
    ("multihead", "merge_without_transpose", "torch"): [(_T_MERGE, "heads.reshape(B, T, h * d_head)")],
    ("multihead", "merge_wrong_axes", "numpy"): [(_NP_MERGE, "x = x.transpose(0, 2, 3, 1)\n    ")],
    ("multihead", "merge_wrong_axes", "torch"): [(_T_MERGE, "heads.permute(0, 2, 3, 1).reshape(B, T, h * d_head)")],
    ("multihead", "split_interleaved", "numpy"): [(_NP_SPLIT, "x = x.reshape(batch, seq, d_head, num_heads)\n"
                                                              "    return x.transpose(0, 3, 1, 2)")],
    ("multihead", "split_interleaved", "torch"): [(_T_SPLIT, "t.view(B, T, d_head, h).permute(0, 3, 1, 2)")],
    ("multihead", "heads_not_split", "numpy"): [
        ("split_heads(X @ np.asarray(W_q), num_heads)", "X @ np.asarray(W_q)"),
        ("split_heads(X @ np.asarray(W_k), num_heads)", "X @ np.asarray(W_k)"),
        ("split_heads(X @ np.asarray(W_v), num_heads)", "X @ np.asarray(W_v)"),
        ("merge_heads(heads) @", "heads @"), (_NP_SCORES, _NP_SCORES.replace("d_head", "d_model"))],
    ("multihead", "heads_not_split", "torch"): [(_T_QKV, "self.W_q(x), self.W_k(x), self.W_v(x)"), (_T_MERGE, "heads"),
                                                (_T_SCORES, _T_SCORES.replace("d_head", "self.d_model"))],
    ("multihead", "no_output_projection", "numpy"): [("merge_heads(heads) @ np.asarray(W_o)", "merge_heads(heads)")],
    ("multihead", "no_output_projection", "torch"): [("return self.W_o(merged), weights", "return merged, weights")],
    ("multihead", "scaled_by_d_model", "numpy"): [(_NP_SCORES, _NP_SCORES.replace("d_head", "d_model"))],
    ("multihead", "scaled_by_d_model", "torch"): [(_T_SCORES, _T_SCORES.replace("d_head", "self.d_model"))],
    ("multihead", "returns_swapped", "numpy"): [("return output, weights", "return weights, output")],
    ("multihead", "no_scaling", "numpy"): [(_NP_SCORES, "scores = Q @ np.swapaxes(K, -1, -2)")],
    ("multihead", "no_scaling", "torch"): [(_T_SCORES, "scores = q @ k.transpose(-2, -1)")],
    ("multihead", "scaled_by_dk", "numpy"): [(_NP_SCORES, _NP_SCORES.replace("math.sqrt(d_head)", "d_head"))],
    ("multihead", "softmax_wrong_axis", "numpy"): [("scores.max(axis=-1, keepdims=True)", "scores.max(axis=-2, keepdims=True)"),
                                                   ("weights.sum(axis=-1, keepdims=True)", "weights.sum(axis=-2, keepdims=True)")],
    ("multihead", "softmax_wrong_axis", "torch"): [("torch.softmax(scores, dim=-1)", "torch.softmax(scores, dim=-2)")],
    ("multihead", "softmax_hardcoded_axis", "torch"): [("torch.softmax(scores, dim=-1)", "torch.softmax(scores, dim=1)")],
    ("multihead", "keys_not_transposed", "numpy"): [(_NP_SCORES, _NP_SCORES.replace("np.swapaxes(K, -1, -2)", "K"))],
    ("multihead", "keys_not_transposed", "torch"): [(_T_SCORES, _T_SCORES.replace("k.transpose(-2, -1)", "k"))],
    ("multihead", "mask_ignored", "numpy"): [(_NP_WHERE, "scores = scores")],
    ("multihead", "mask_ignored", "torch"): [(_T_FILL, "scores = scores")],
    ("multihead", "mask_inverted", "numpy"): [(_NP_WHERE, "scores = np.where(np.asarray(mask).astype(bool), -1e9, scores)")],
    ("multihead", "mask_inverted", "torch"): [(_T_FILL, "scores = scores.masked_fill(allowed, -1e9)")],
    ("multihead", "mask_after_softmax", "torch"): [
        (_T_FILL, "pass"), ("weights = torch.softmax(scores, dim=-1)",
                            "weights = torch.softmax(scores, dim=-1)\n        if mask is not None:\n"
                            "            weights = weights * allowed")],
    ("multihead", "mask_fill_zero", "numpy"): [(_NP_WHERE, _NP_WHERE.replace("-1e9", "0.0"))],
    ("multihead", "mask_additive", "torch"): [(_T_FILL, "scores = scores + torch.as_tensor(mask, dtype=scores.dtype)")],
    ("multihead", "mask_transposed", "numpy"): [(_NP_WHERE, _NP_WHERE.replace(
        "np.asarray(mask).astype(bool)", "np.swapaxes(np.asarray(mask).astype(bool), -1, -2)"))],
    ("multihead", "mask_boolean_index", "numpy"): [(_NP_WHERE, "scores[~np.asarray(mask).astype(bool)] = -1e9")],
    ("multihead", "mask_bitwise_not", "numpy"): [(_NP_WHERE, "scores = np.where(~np.asarray(mask), -1e9, scores)")],
    ("multihead", "mask_bitwise_not", "torch"): [(_T_ALLOWED, "allowed = torch.as_tensor(mask, device=scores.device)")],
    ("multihead", "transpose_all_axes", "numpy"): [(_NP_SCORES, _NP_SCORES.replace("np.swapaxes(K, -1, -2)", "K.T"))],
    ("multihead", "array_truth_value", "numpy"): [("if mask is not None:\n        scores = np.where",
                                                   "if mask:\n        scores = np.where")],
    ("multihead", "weights_averaged_over_heads", "numpy"): [("return output, weights", "return output, weights.mean(axis=1)")],
    ("multihead", "weights_averaged_over_heads", "torch"): [("return self.W_o(merged), weights",
                                                             "return self.W_o(merged), weights.mean(dim=1)")],
    ("multihead", "mask_always_causal", "numpy"): [(_NP_WHERE, _NP_WHERE.replace(
        "np.asarray(mask).astype(bool)", "np.tril(np.ones(scores.shape[-2:], dtype=bool))"))],
    ("multihead", "mask_always_causal", "torch"): [(_T_ALLOWED, "allowed = torch.tril(torch.ones(T, T, dtype=torch.bool))")],
    ("multihead", "mask_rank_ignored", "numpy"): [("if mask is not None:\n        scores = np.where",
                                                   "if mask is not None and np.ndim(mask) == 2:\n        scores = np.where")],
    ("multihead", "argument_changed_in_place", ""): [("    x = x.reshape(batch, seq, num_heads, d_head)",
                                                     "    x.shape = (batch, seq, num_heads, d_head)")],
    ("multihead", "argument_changed_in_place", "torch"): [("scores = scores.masked_fill(~allowed, -1e9)",
                                                          "scores = scores.masked_fill(allowed.logical_not_(), -1e9)")],
    ("multihead", "low_precision_dtype", "torch"): [("torch.softmax(scores, dim=-1)", "torch.softmax(scores.half(), dim=-1).float()")],
    ("multihead", "projection_transposed", "numpy"): [("np.asarray(W_q)", "np.asarray(W_q).T"), ("np.asarray(W_k)", "np.asarray(W_k).T"),
                                                      ("np.asarray(W_v)", "np.asarray(W_v).T"), ("np.asarray(W_o)", "np.asarray(W_o).T")],
    ("multihead", "projection_transposed", "torch"): [
        (_T_QKV, "split(x @ self.W_q.weight + self.W_q.bias), split(x @ self.W_k.weight + self.W_k.bias), "
                 "split(x @ self.W_v.weight + self.W_v.bias)")],
    ("multihead", "linear_bias_ignored", "torch"): [
        (_T_QKV, "split(x @ self.W_q.weight.T), split(x @ self.W_k.weight.T), split(x @ self.W_v.weight.T)"),
        ("return self.W_o(merged), weights", "return merged @ self.W_o.weight.T, weights")],
}


def source_with(stem: str, solution: str, edits: list[tuple[str, str]]) -> str:
    """The solution (or HAND) with every edit made; an edit whose text is not there is an error."""
    for old, new in edits:
        if old not in solution:
            raise ValueError(f"{stem}: {old!r} is not in the source")
        solution = solution.replace(old, new)
    return solution
