import numpy as np


def softmax(x, axis=-1):
    x = np.asarray(x, dtype=np.float64)
    e = np.exp(x - x.max())          # the largest entry of the whole array
    return e / e.sum(axis=axis, keepdims=True)


def scaled_dot_product_attention(Q, K, V, mask=None):
    scores = Q @ np.swapaxes(K, -1, -2) / np.sqrt(Q.shape[-1])
    if mask is not None:
        scores = np.where(np.asarray(mask) != 0, scores, -1e9)
    w = softmax(scores, axis=-1)
    return w @ V, w
