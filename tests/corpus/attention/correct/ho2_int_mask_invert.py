import numpy as np


def softmax(x, axis=-1):
    x = np.array(x, dtype=np.float64, copy=True)
    x -= x.max(axis=axis, keepdims=True)
    np.exp(x, out=x)
    x /= x.sum(axis=axis, keepdims=True)
    return x


def scaled_dot_product_attention(Q, K, V, mask=None):
    d_k = np.shape(K)[-1]
    scores = np.matmul(Q, np.moveaxis(K, -1, -2)) / d_k ** 0.5
    if mask is not None:
        blocked = ~np.asarray(mask).astype(bool)
        scores = np.ma.masked_array(scores, mask=np.broadcast_to(blocked, scores.shape)).filled(-np.inf)
    w = softmax(scores)
    return w @ V, w
