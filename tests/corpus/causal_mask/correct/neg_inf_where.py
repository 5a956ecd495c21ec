"""Causal attention from scratch: the mask from index comparisons, -inf before the softmax."""
import numpy as np


def create_causal_mask(seq_len):
    i = np.arange(seq_len)[:, None]
    j = np.arange(seq_len)[None, :]
    return (j <= i).astype(np.int64)          # 1 = may attend


def _softmax(x):
    x = x - x.max(axis=-1, keepdims=True)     # the diagonal is never -inf, so the max is finite
    e = np.exp(x)
    return e / e.sum(axis=-1, keepdims=True)


def causal_attention(Q, K, V):
    Q, K, V = np.asarray(Q, float), np.asarray(K, float), np.asarray(V, float)
    T, d = Q.shape[-2], Q.shape[-1]
    scores = np.einsum("...id,...jd->...ij", Q, K) / np.sqrt(d)
    scores = np.where(create_causal_mask(T) == 1, scores, -np.inf)
    weights = _softmax(scores)
    return weights @ V, weights
