import math
import numpy as np


def softmax(x, axis=-1):
    x = np.asarray(x, dtype=float)
    m = x.max(axis=axis, keepdims=True)
    z = np.exp(x - m)
    return z / z.sum(axis=axis, keepdims=True)


def scaled_dot_product_attention(Q, K, V, mask=None):
    d = Q.shape[-1]
    scores = np.einsum("...id,...jd->...ij", Q, K) * (1.0 / math.sqrt(d))
    if mask is not None:
        mask = np.asarray(mask).astype(bool)
        scores = np.where(mask, scores, -np.inf)
    w = softmax(scores)
    out = np.einsum("...ij,...jd->...id", w, V)
    return out, w
