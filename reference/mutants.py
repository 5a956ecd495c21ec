"""Wrong implementations of the contract, each one mistake away from the reference.

These are the "mutants" of the misconception catalogue (reference/misconceptions.py): the
grader runs them on a check's inputs and asks whether a student's answer is what one of
them produces. Most are one parametrised function per exercise, so that a mutant is
"the reference with one option switched"; the options are the mistakes.

Never shipped into the sandbox (only reference/<stem>.py are); numpy and torch only.
"""

from __future__ import annotations

import math
from functools import partial

import numpy as np

from .attention import MASK_FILL, softmax

# ---------------------------------------------------------------- softmax


def softmax_no_max(x, axis=-1):
    """Softmax without subtracting the maximum: exp overflows to inf, inf / inf is nan."""
    with np.errstate(over="ignore", invalid="ignore"):
        e = np.exp(np.asarray(x, dtype=np.float64))
        return e / e.sum(axis=axis, keepdims=True)


def softmax_default_axis0(x, axis=0):
    """Softmax whose default axis is 0: a score matrix is normalised down its columns."""
    return softmax(x, axis=axis)


def softmax_ignores_axis(x, axis=-1):
    """Softmax that always normalises along the last axis, whatever `axis` says."""
    return softmax(x, axis=-1)


def softmax_whole_array(x, axis=-1):
    """Softmax normalised over every entry of the array at once (no axis in the sum)."""
    x = np.asarray(x, dtype=np.float64)
    e = np.exp(x - x.max())
    return e / e.sum()


def softmax_no_keepdims(x, axis=-1):
    """Softmax dividing by a sum taken without keepdims, which broadcasts along the wrong axis."""
    x = np.asarray(x, dtype=np.float64)
    e = np.exp(x - x.max(axis=axis, keepdims=True))
    return e / e.sum(axis=axis)


def softmax_in(dtype, x, axis=-1):
    """The reference softmax computed in `dtype` (float16: about 3 significant digits)."""
    return softmax(np.asarray(x, dtype=dtype), axis=axis)


def softmax_global_max(x, axis=-1):
    """Softmax subtracting the maximum of the whole array: rows far below it underflow to 0/0."""
    x = np.asarray(x, dtype=np.float64)
    with np.errstate(invalid="ignore", under="ignore"):
        e = np.exp(x - x.max())
        return e / e.sum(axis=axis, keepdims=True)


def softmax_no_keepdims_torch(x, axis=-1):
    """softmax_no_keepdims written with torch: the sum's axis dropped, torch's broadcasting error."""
    import torch

    t = torch.as_tensor(np.asarray(x, dtype=np.float64))
    e = torch.exp(t - t.max(dim=axis, keepdim=True).values)
    return (e / e.sum(dim=axis)).numpy()


# ---------------------------------------------------------------- attention

SCALES = ("sqrt", "none", "dk")


def _divisor(scale, d_k: int) -> float:
    """How much the scores are divided by: sqrt(d_k) (right), 1, d_k, or a given number."""
    if isinstance(scale, (int, float)):
        return float(scale)
    return {"sqrt": math.sqrt(d_k), "none": 1.0, "dk": float(d_k)}[scale]


def attention(Q, K, V, mask=None, *, scale="sqrt", transpose_keys=True, axis=-1, softmax_fn=softmax,
              mask_mode="before", empty_rows="uniform", truth_test=False, dtype=np.float64, fill="replace"):
    """Scaled dot-product attention with one option switched; the defaults are the reference.

    transpose_keys: True (right) | False (Q @ K) | "all" (K.T, which reverses every axis of a batch) |
    "front" (axes 1 and 2 swapped: the last two only for a 3-D K).
    truth_test: `if mask:` on the mask (raises for an array). dtype: the precision computed in.

    mask_mode: before (right) | ignored | inverted | after (weights * mask) | after_neg_inf |
    zero (blocked scores set to 0) | additive (the 0/1 mask added to the scores) |
    transposed (the mask's last two axes swapped) | boolean_index (scores[mask == 0] = fill, which needs the
    mask in the scores' own shape) | bitwise_not (blocked where ~mask, an error for a float mask) |
    causal (a causal mask instead of the one given) | 2d_only, 3d_only, 4d_only (a mask of another rank
    ignored) | same_rank_only (a mask of another rank than the scores ignored).
    empty_rows: what a row with every key blocked becomes: uniform (-1e9 fill) | nan (-inf fill) | zero.
    fill: replace (blocked scores become -1e9) | add (-1e9 added to them: a row with every key blocked
    keeps its unmasked softmax). scale may also be "k_axis1" (sqrt(K.shape[1]), d_k only for a 2-D K)
    or "d_v" (sqrt(V.shape[-1])) or "n_k" (sqrt of the number of keys): the square root of a size that
    is not d_k.
    """
    Q, K, V = (np.asarray(a, dtype=dtype) for a in (Q, K, V))
    if truth_test and mask is not None and not bool(np.asarray(mask)):
        mask = None
    keys = {"all": lambda: K.T, "front": lambda: np.swapaxes(K, 1, 2), True: lambda: np.swapaxes(K, -1, -2),
            False: lambda: K}[transpose_keys]()
    divisor = {"k_axis1": lambda: math.sqrt(K.shape[1]), "d_v": lambda: math.sqrt(V.shape[-1]),
               "n_k": lambda: math.sqrt(K.shape[-2])}.get(
        scale, lambda: _divisor(scale, Q.shape[-1])) if isinstance(scale, str) else lambda: _divisor(scale, 0)
    scores = (Q @ keys) / np.asarray(divisor(), dtype=dtype)                         # (..., n_q, n_k)
    blocked = None
    if mask is not None and mask_mode == "causal":           # a causal mask, whatever mask is given
        mask, mask_mode = np.tril(np.ones(scores.shape[-2:], dtype=bool)), "before"
    if mask is not None and mask_mode.endswith("d_only"):    # the mask applied only when it is 2-D (3-D, 4-D)
        mask, mask_mode = (mask if np.ndim(mask) == int(mask_mode[0]) else None), "before"
    if mask is not None and mask_mode == "same_rank_only":   # only a mask of the scores' own rank
        mask, mask_mode = (mask if np.ndim(mask) == scores.ndim else None), "before"
    if mask is not None and mask_mode == "transposed":       # the mask's last two axes swapped, as np.where does
        scores = np.where(np.swapaxes(np.asarray(mask), -1, -2) != 0, scores, MASK_FILL)
    elif mask is not None and mask_mode == "boolean_index":  # scores[mask == 0] = fill: the mask's own shape only
        scores = np.array(scores)
        scores[np.asarray(mask) == 0] = MASK_FILL
    elif mask is not None and mask_mode != "ignored":
        allowed = np.broadcast_to(np.asarray(mask) != 0, scores.shape)
        if mask_mode == "bitwise_not":                       # blocked = ~mask: -2 and -1 (both true) for 0/1 ints
            allowed, mask_mode = np.broadcast_to(~np.asarray(mask) == 0, scores.shape), "before"
        if mask_mode == "before":
            blocked = ~allowed
        elif mask_mode == "inverted":
            blocked = allowed
        elif mask_mode == "zero":
            scores = np.where(allowed, scores, 0.0)
        elif mask_mode == "additive":
            scores = scores + np.asarray(mask, dtype=np.float64)
        if blocked is not None:
            scores = scores + np.where(blocked, MASK_FILL, 0.0) if fill == "add" else np.where(blocked, MASK_FILL, scores)
    weights = softmax_fn(scores, axis=axis)
    if blocked is not None and empty_rows != "uniform":
        empty = blocked.all(axis=-1, keepdims=True)
        weights = np.where(empty, np.nan if empty_rows == "nan" else 0.0, weights)
    if mask is not None and mask_mode in ("after", "after_neg_inf"):
        allowed = np.broadcast_to(np.asarray(mask) != 0, weights.shape)
        weights = np.where(allowed, weights, 0.0 if mask_mode == "after" else -np.inf)
    with np.errstate(invalid="ignore", over="ignore"):
        return weights @ V, weights


def attention_torch_keys(Q, K, V, mask=None):
    """Q @ K without the transpose, written with torch: torch's own error when the shapes clash."""
    import torch

    q, k, v = (torch.as_tensor(np.asarray(a, dtype=np.float64)) for a in (Q, K, V))
    scores = q @ k / math.sqrt(q.shape[-1])                                # (..., n_q, d) @ (..., n_k, d)
    if mask is not None:
        scores = scores.masked_fill(torch.as_tensor(np.asarray(mask)) == 0, MASK_FILL)
    weights = torch.softmax(scores, dim=-1)
    return (weights @ v).numpy(), weights.numpy()


def swapped(fn):
    """A function returning (output, weights) that returns them the other way round."""
    def swapped_fn(*args, **kwargs):
        return tuple(fn(*args, **kwargs))[::-1]
    return swapped_fn


def sdpa(**options):
    """scaled_dot_product_attention with `options` switched (see `attention`)."""
    return partial(attention, **options)


# ---------------------------------------------------------------- causal mask


def tri_mask(seq_len: int, kind: str = "lower") -> np.ndarray:
    """A triangular boolean mask: lower (right), upper (the future), strict_lower (no diagonal), strict_upper,
    next (off by one: the diagonal above the main one allowed too)."""
    ones = np.ones((int(seq_len), int(seq_len)), dtype=bool)
    return {"lower": np.tril(ones), "upper": np.triu(ones), "strict_lower": np.tril(ones, -1),
            "strict_upper": np.triu(ones, 1), "next": np.tril(ones, 1)}[kind]


def additive_causal_mask(seq_len: int) -> np.ndarray:
    """The causal mask in additive form: 0 where a query may attend, -inf above the diagonal."""
    return np.where(tri_mask(seq_len), 0.0, -np.inf)


def causal(Q, K, V, *, kind="lower", **options):
    """causal_attention with the mask of `kind` and `options` switched (see `attention`)."""
    Q = np.asarray(Q)
    return attention(Q, K, V, mask=tri_mask(Q.shape[-2], kind), **options)


def causal_fn(**options):
    """causal_attention with `options` switched (see `causal`)."""
    return partial(causal, **options)


def mask_fn(kind: str):
    """create_causal_mask that builds the triangle of `kind` (see `tri_mask`)."""
    return partial(tri_mask, kind=kind)


# ---------------------------------------------------------------- multi-head: reshapes


def split_bare(x, num_heads):
    """split_heads as a bare reshape to (batch, heads, seq, d_head), with no transpose."""
    x = np.asarray(x)
    B, T, D = x.shape
    return x.reshape(B, num_heads, T, D // num_heads)


def split_interleaved(x, num_heads):
    """split_heads that deals features out in turn: head h gets features h, h + heads, h + 2 heads, ..."""
    x = np.asarray(x)
    B, T, D = x.shape
    return x.reshape(B, T, D // num_heads, num_heads).transpose(0, 3, 1, 2)


def split_right(x, num_heads):
    """The reference split: (B, T, D) -> (B, T, h, d_head) -> (B, h, T, d_head)."""
    x = np.asarray(x)
    B, T, D = x.shape
    return x.reshape(B, T, num_heads, D // num_heads).transpose(0, 2, 1, 3)


def merge_bare(x):
    """merge_heads as a bare reshape to (batch, seq, d_model), with no transpose."""
    x = np.asarray(x)
    B, h, T, d = x.shape
    return x.reshape(B, T, h * d)


def merge_right(x):
    """The reference merge: (B, h, T, d_head) -> (B, T, h, d_head) -> (B, T, D)."""
    x = np.asarray(x)
    B, h, T, d = x.shape
    return x.transpose(0, 2, 1, 3).reshape(B, T, h * d)


def merge_interleaved(x):
    """The inverse of split_interleaved: feature i * heads + h of the output comes from head h."""
    x = np.asarray(x)
    B, h, T, d = x.shape
    return x.transpose(0, 2, 3, 1).reshape(B, T, h * d)


SPLITS = {"right": split_right, "bare": split_bare, "interleaved": split_interleaved}
MERGES = {"right": merge_right, "bare": merge_bare, "interleaved": merge_interleaved}


def _heads(q, k, v, num_heads, mask, *, split="right", merge="right", scale="head", heads_shape="heads",
           **options):
    """Attention over heads of projected q, k, v (B, T, D): (merged (B, T, D), weights)."""
    D = q.shape[-1]
    d_head = D // num_heads
    divisor = {"head": math.sqrt(d_head), "model": math.sqrt(D), "none": 1.0, "dk": float(d_head)}[scale]
    if split == "none":                                   # one attention over all features
        out, w = attention(q, k, v, mask=_flat_mask(mask), scale=divisor, **options)   # (B, T, D), (B, T, T)
        if heads_shape == "heads":
            w = np.repeat(w[:, None], num_heads, axis=1)  # (B, h, T, T), every head the same
        return out, w
    qh, kh, vh = (SPLITS[split](a, num_heads) for a in (q, k, v))                     # (B, h, T, d_head)
    out, w = attention(qh, kh, vh, mask=mask, scale=divisor, **options)
    if heads_shape == "mean":
        w = w.mean(axis=1)                                # (B, T, T): torch's average_attn_weights=True
    return MERGES[merge](out), w


def _flat_mask(mask):
    """A mask broadcastable to (B, h, T, T) used for one attention over (B, T, T): drop the head axis."""
    if mask is None:
        return None
    m = np.asarray(mask)
    return m[:, 0] if m.ndim == 4 else m


def mha(X, W_q, W_k, W_v, W_o, num_heads, mask=None, *, project=True, transposed=False, **options):
    """multi_head_attention with one option switched: reshapes, scale, W_o, X @ W.T (transposed: True for
    every W, "out" for W_o alone), attention options."""
    X = np.asarray(X, dtype=np.float64)
    Ws = [np.asarray(W, dtype=np.float64) for W in (W_q, W_k, W_v, W_o)]
    if transposed:
        Ws = [W.T if transposed is True or n == 3 else W for n, W in enumerate(Ws)]
    q, k, v = (X @ W for W in Ws[:3])                                     # (B, T, D)
    merged, weights = _heads(q, k, v, int(num_heads), mask, **options)
    out = merged @ Ws[3] if project else merged
    return out.astype(merged.dtype), weights                       # a float16 computation stays float16


def mha_fn(**options):
    """multi_head_attention with `options` switched (see `mha`)."""
    return partial(mha, **options)


# ---------------------------------------------------------------- multi-head: the torch module


def module_class(linear="right", project=True, linear_out=None, **options):
    """A MultiHeadAttention whose forward has one option switched (computed in float64 numpy).

    linear: right (x W^T + b) | no_bias (x W^T) | transposed (x W + b), for every layer, or for W_q, W_k,
    W_v only when linear_out is "right" (the output layer called as it should be).
    """
    import torch

    from .multihead import MultiHeadAttention

    class MutantMultiHeadAttention(MultiHeadAttention):
        """The reference module with one mistake in forward."""

        def _apply(self, layer, x, how=linear):
            W = layer.weight.detach().double().numpy()
            b = layer.bias.detach().double().numpy()
            if how == "no_bias":
                return x @ W.T
            return x @ (W if how == "transposed" else W.T) + b

        def forward(self, x, mask=None):
            x = torch.as_tensor(x).detach().double().numpy()              # (B, T, D)
            m = None if mask is None else torch.as_tensor(mask).numpy()
            q, k, v = (self._apply(layer, x) for layer in (self.W_q, self.W_k, self.W_v))
            merged, weights = _heads(q, k, v, self.num_heads, m, **options)
            out = self._apply(self.W_o, merged, linear_out or linear) if project else merged
            return torch.from_numpy(np.ascontiguousarray(out)), torch.from_numpy(np.ascontiguousarray(weights))

    return MutantMultiHeadAttention


def module_torch_keys():
    """A MultiHeadAttention computing q @ k without the transpose in torch: torch's own error."""
    import torch

    from .multihead import MultiHeadAttention

    class KeysNotTransposed(MultiHeadAttention):
        """The reference module with the keys not transposed, in torch."""

        def forward(self, x, mask=None):
            x = torch.as_tensor(x, dtype=self.W_q.weight.dtype)
            q, k, v = (self._split(layer(x)) for layer in (self.W_q, self.W_k, self.W_v))   # (B, h, T, d_head)
            scores = q @ k / math.sqrt(self.d_head)
            if mask is not None:
                scores = scores.masked_fill(torch.as_tensor(mask) == 0, MASK_FILL)
            weights = torch.softmax(scores, dim=-1)
            merged = (weights @ v).transpose(1, 2).reshape(x.shape)
            return self.W_o(merged), weights

    return KeysNotTransposed


# ---------------------------------------------------------------- scaling experiment


def scaling_experiment(dims=(4, 16, 64, 256), seq_len=4, n_trials=1000, seed=0, *, scale="sqrt",
                       variance=False, log=np.log, seeded=True, trials=None, fixed_seq_len=None,
                       fixed_dims=None, trials_offset=0):
    """The scaling experiment with one option switched: the scale, variance for std, the log's base,
    an unseeded generator (seeded=False), a fixed number of trials whatever n_trials says, a fixed
    sequence length whatever seq_len says, fixed dims whatever dims says, n_trials + trials_offset
    trials (-1: a loop one short, which averages over nothing when n_trials is 1)."""
    rng = np.random.default_rng(seed if seeded else None)
    n_trials = (n_trials if trials is None else trials) + trials_offset
    seq_len = seq_len if fixed_seq_len is None else fixed_seq_len
    dims = dims if fixed_dims is None else fixed_dims
    results = {}
    if n_trials <= 0:                  # no trial at all: nothing to average (what numpy's mean of none gives)
        return {int(d): dict.fromkeys(("std_unscaled", "std_scaled", "entropy_unscaled", "entropy_scaled",
                                       "max_weight_unscaled", "max_weight_scaled"), math.nan) for d in dims}
    for d in dims:
        d = int(d)
        Q = rng.standard_normal((n_trials, seq_len, d))
        K = rng.standard_normal((n_trials, seq_len, d))
        raw = Q @ np.swapaxes(K, -1, -2)                                  # (n_trials, T, T)
        stats = {}
        for name, s in (("unscaled", raw), ("scaled", raw / _divisor(scale, d))):
            w = softmax(s, axis=-1)
            plogp = np.where(w > 0, w * log(np.where(w > 0, w, 1.0)), 0.0)
            stats[f"std_{name}"] = float(np.var(s) if variance else np.std(s))
            stats[f"entropy_{name}"] = float((-plogp.sum(axis=-1)).mean())
            stats[f"max_weight_{name}"] = float(w.max(axis=-1).mean())
        results[d] = {k: stats[k] for k in ("std_unscaled", "std_scaled", "entropy_unscaled", "entropy_scaled",
                                            "max_weight_unscaled", "max_weight_scaled")}
    return results


def scaling_fn(**options):
    """scaling_experiment with `options` switched (see `scaling_experiment`)."""
    return partial(scaling_experiment, **options)
