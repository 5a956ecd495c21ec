import numpy as np


def softmax(x, axis=-1):
    a = np.array(x, dtype=float)
    a = a - a.max(axis=axis, keepdims=True)
    a = np.exp(a)
    a /= a.sum(axis=axis, keepdims=True)
    return a.tolist()                     # plain lists are allowed by the contract


def scaled_dot_product_attention(Q, K, V, mask=None):
    Q, K, V = np.array(Q, float), np.array(K, float), np.array(V, float)
    scores = Q @ K.swapaxes(-1, -2) / np.sqrt(Q.shape[-1])
    if mask is not None:
        keep = np.array(mask, dtype=float)
        scores = scores * keep + (1.0 - keep) * -1e12
    weights = np.array(softmax(scores))
    return (weights @ V).tolist(), weights.tolist()
