import math
import numpy as np


def softmax(x, axis=-1):
    m = x.max(axis=axis, keepdims=True)
    ex = np.exp(x - m)
    return ex / ex.sum(axis=axis, keepdims=True)


def scaled_dot_product_attention(Q, K, V, mask=None):
    scores = np.matmul(Q, np.swapaxes(K, -1, -2)) / math.sqrt(K.shape[-1])
    if mask is not None:
        blocked = np.logical_not(np.asarray(mask, dtype=bool))
        scores = np.where(blocked, -np.inf, scores)
    w = softmax(scores)
    return np.matmul(w, V), w
