"""Causal (look-ahead) masking (the reference for ``causal_mask.py``)."""

from __future__ import annotations

import numpy as np

from .attention import scaled_dot_product_attention


def create_causal_mask(seq_len: int) -> np.ndarray:
    """Lower-triangular boolean mask of shape (seq_len, seq_len).

        mask_ij = True  if j <= i   (query i may attend to key j: past and present)
                  False if j >  i   (the future is blocked)
    """
    if isinstance(seq_len, bool) or int(seq_len) != seq_len or seq_len < 0:
        raise ValueError(f"seq_len must be a non-negative integer, got {seq_len!r}")
    n = int(seq_len)
    return np.tril(np.ones((n, n), dtype=bool))        # (n, n)


def causal_attention(Q, K, V):
    """Scaled dot-product attention in which position i sees only positions <= i.

        weights = softmax(where(j <= i, Q K^T / sqrt(d_k), -1e9))
        output  = weights V

    Q, K, V: (..., seq_len, d).  Weights above the diagonal are exactly 0
    (exp(-1e9 - max) underflows to 0.0).  Returns ``(output, weights)``.
    """
    Q, K = np.asarray(Q), np.asarray(K)
    if Q.ndim < 2 or K.ndim < 2:
        raise ValueError(f"Q and K must have at least 2 dimensions, got {Q.shape} and {K.shape}")
    if Q.shape[-2] != K.shape[-2]:
        raise ValueError(
            f"causal attention needs as many queries as keys, got n_q={Q.shape[-2]} and n_k={K.shape[-2]}"
        )
    mask = create_causal_mask(Q.shape[-2])              # (seq_len, seq_len), broadcast over batch dims
    return scaled_dot_product_attention(Q, K, V, mask=mask)
