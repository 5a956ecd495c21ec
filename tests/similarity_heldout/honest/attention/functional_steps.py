import numpy as np
from math import sqrt


def stable_exp(values, axis):
    return np.exp(values - values.max(axis=axis, keepdims=True))


def softmax(x, axis=-1):
    values = np.asarray(x)
    if values.dtype.kind in "iub":
        values = values.astype(np.float64)
    numerators = stable_exp(values, axis)
    return numerators / numerators.sum(axis=axis, keepdims=True)


def similarity_scores(queries, keys):
    keys_t = np.swapaxes(keys, -1, -2)
    return np.matmul(queries, keys_t) / sqrt(queries.shape[-1])


def block(scores, mask):
    if mask is None:
        return scores
    keep = np.asarray(mask).astype(bool)
    return np.where(keep, scores, -np.inf)


def scaled_dot_product_attention(Q, K, V, mask=None):
    scores = block(similarity_scores(np.asarray(Q, float), np.asarray(K, float)), mask)
    weights = softmax(scores, axis=-1)
    return np.matmul(weights, np.asarray(V, float)), weights
