"""Wrong softmaxes and attentions, each one mistake away from the reference.

These are the "mutants" of the attention exercise's catalogue (misconceptions.py here): the
grader runs them on a check's inputs and asks whether a student's answer is what one of them
produces. `attention` is one parametrised function, so that a mutant is "the reference with one
option switched"; the options are the mistakes. The causal mask's and multi-head attention's
mutants are built on it, as their references are built on attention's.

Never shipped into the sandbox (only reference/<stem>.py are); numpy and torch only.
"""

from __future__ import annotations

import math
from functools import partial

import numpy as np

from reference.attention import MASK_FILL, softmax

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


def score_divisor(scale, d_k: int) -> float:
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
        scale, lambda: score_divisor(scale, Q.shape[-1])) if isinstance(scale, str) else lambda: score_divisor(scale, 0)
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


# ---------------------------------------------------------------- arguments changed in place

def softmax_shifts_in_place(x, axis=-1):
    """Softmax that subtracts the maximum from its argument in place (x -= x.max(...))."""
    x -= x.max(axis=axis, keepdims=True)
    e = np.exp(x)
    return e / e.sum(axis=axis, keepdims=True)


def scales_queries_in_place(fn):
    """`fn` (an attention of Q, K, V) whose caller's Q is divided by sqrt(d_k) in place (Q /= ...) first."""
    def wrong(Q, K, V, *args, **kwargs):
        scale = math.sqrt(Q.shape[-1])
        Q /= scale
        return fn(Q * scale, K, V, *args, **kwargs)
    return wrong
