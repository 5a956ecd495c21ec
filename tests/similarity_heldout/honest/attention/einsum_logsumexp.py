"""Vectorised with einsum; the softmax through the log-sum-exp trick."""
import numpy as np

NEG = -1.0e30


def _logsumexp(a, axis):
    peak = np.max(a, axis=axis, keepdims=True)
    return peak + np.log(np.sum(np.exp(a - peak), axis=axis, keepdims=True))


def softmax(x, axis=-1):
    a = np.asarray(x)
    a = a if np.issubdtype(a.dtype, np.floating) else a.astype(float)
    return np.exp(a - _logsumexp(a, axis))


def scaled_dot_product_attention(Q, K, V, mask=None):
    Q = np.asarray(Q, dtype=float)
    K = np.asarray(K, dtype=float)
    V = np.asarray(V, dtype=float)
    logits = np.einsum("...id,...jd->...ij", Q, K) * Q.shape[-1] ** -0.5
    if mask is not None:
        logits = np.where(np.asarray(mask, dtype=bool), logits, NEG)
    attn = softmax(logits)
    context = np.einsum("...ij,...jd->...id", attn, V)
    return context, attn
