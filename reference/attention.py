"""Softmax and scaled dot-product attention (the reference for ``attention.py``).

Masking convention used by every reference module
-------------------------------------------------
A mask holds 1/True where a query MAY attend and 0/False where it is blocked
(bool or numeric masks; any non-zero value counts as "may attend").  Blocked
scores are replaced by the large negative *finite* number ``MASK_FILL = -1e9``
before the softmax.  Consequences:

* a blocked position next to at least one allowed position gets weight
  ``exp(-1e9 - max) == 0.0`` exactly (so causal weights above the diagonal are
  exactly 0);
* a row in which EVERY position is blocked has all scores equal to -1e9, so its
  softmax is uniform (1 / n_k each) instead of NaN.
"""

from __future__ import annotations

import math

import numpy as np

MASK_FILL = -1e9


def _as_float(x) -> np.ndarray:
    """np.asarray(x), cast to float64 unless it already is a floating dtype."""
    x = np.asarray(x)
    if not np.issubdtype(x.dtype, np.floating):
        x = x.astype(np.float64)
    return x


def softmax(x, axis: int = -1) -> np.ndarray:
    """Numerically stable softmax along ``axis``.

        softmax(x)_i = exp(x_i - m) / sum_j exp(x_j - m),   m = max_j x_j

    Subtracting the row maximum m leaves the result unchanged (it cancels
    between numerator and denominator) but keeps every exponent <= 0, so the
    result is finite for inputs as large as 1e4 (or -1e4).

    Entries equal to -inf get weight 0.  A slice that is entirely -inf has no
    finite maximum; it is given uniform weights (the same answer a fully masked
    row gets with the finite ``MASK_FILL``) rather than NaN.  The dtype of a
    floating input is kept; other inputs are computed in float64.
    """
    x = _as_float(x)
    m = np.max(x, axis=axis, keepdims=True)
    all_neg_inf = np.isneginf(m)
    if np.any(all_neg_inf):
        x = np.where(all_neg_inf, 0.0, x)          # fully -inf slices -> uniform
        m = np.where(all_neg_inf, 0.0, m)
    e = np.exp(x - m)
    return e / np.sum(e, axis=axis, keepdims=True)


def apply_mask(scores: np.ndarray, mask) -> np.ndarray:
    """Replace blocked scores (mask == 0/False) by ``MASK_FILL``.

        masked_ij = scores_ij  if mask_ij != 0  else  -1e9

    ``mask`` must broadcast to ``scores.shape`` without enlarging it.
    """
    allowed = np.asarray(mask) != 0
    try:
        allowed = np.broadcast_to(allowed, scores.shape)                   # (..., n_q, n_k)
    except ValueError:
        raise ValueError(
            f"mask of shape {np.shape(mask)} does not broadcast to the scores' shape {scores.shape}"
        ) from None
    return np.where(allowed, scores, MASK_FILL)


def scaled_dot_product_attention(Q, K, V, mask=None):
    """Scaled dot-product attention with optional mask and arbitrary batch dims.

        scores  = Q K^T / sqrt(d_k)                       (..., n_q, n_k)
        scores  = where(mask, scores, -1e9)               (if a mask is given)
        weights = softmax(scores, axis=-1)                rows sum to 1
        output  = weights V                               (..., n_q, d_v)

    Q: (..., n_q, d_k), K: (..., n_k, d_k), V: (..., n_k, d_v); leading
    dimensions broadcast like numpy's matmul.  ``mask`` (None, bool or 0/1
    numeric, 1 = may attend) must broadcast to (..., n_q, n_k).
    Returns ``(output, weights)``.
    """
    Q, K, V = _as_float(Q), _as_float(K), _as_float(V)
    for name, a in (("Q", Q), ("K", K), ("V", V)):
        if a.ndim < 2:
            raise ValueError(f"{name} must have at least 2 dimensions (..., n, d), got shape {a.shape}")
    if Q.shape[-1] != K.shape[-1]:
        raise ValueError(f"Q and K must share d_k: Q {Q.shape}, K {K.shape}")
    if K.shape[-2] != V.shape[-2]:
        raise ValueError(f"K and V must have the same number of keys: K {K.shape}, V {V.shape}")
    d_k = Q.shape[-1]
    scores = Q @ np.swapaxes(K, -1, -2)          # (..., n_q, d_k) @ (..., d_k, n_k) -> (..., n_q, n_k)
    scores = scores / math.sqrt(d_k)             # (..., n_q, n_k)
    if mask is not None:
        scores = apply_mask(scores, mask)        # (..., n_q, n_k)
    weights = softmax(scores, axis=-1)           # (..., n_q, n_k)
    output = weights @ V                         # (..., n_q, n_k) @ (..., n_k, d_v) -> (..., n_q, d_v)
    return output, weights
