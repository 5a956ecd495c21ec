# Blocks where the mask is 1.
import numpy as np


def softmax(x, axis=-1):
    x = np.asarray(x, dtype=np.float64)
    m = np.max(x, axis=axis, keepdims=True)
    m = np.where(np.isfinite(m), m, 0.0)          # a row of -inf stays -inf, not nan, until the division
    e = np.exp(x - m)
    return e / np.sum(e, axis=axis, keepdims=True)


def scaled_dot_product_attention(Q, K, V, mask=None):
    d_k = Q.shape[-1]
    scores = np.einsum("...qd,...kd->...qk", Q, K) / np.sqrt(d_k)
    if mask is not None:
        scores = np.where(np.asarray(mask).astype(bool), -np.inf, scores)
    weights = softmax(scores, axis=-1)
    output = np.einsum("...qk,...kv->...qv", weights, V)
    return output, weights
