import numpy as np


def softmax(x, axis=-1):
    x = np.asarray(x).astype(np.float16)
    e = np.exp(x - x.max(axis=axis, keepdims=True))
    return e / e.sum(axis=axis, keepdims=True)


def scaled_dot_product_attention(Q, K, V, mask=None):
    Q, K, V = (np.asarray(a, dtype=np.float16) for a in (Q, K, V))
    scores = Q @ np.swapaxes(K, -1, -2) / np.float16(np.sqrt(Q.shape[-1]))
    if mask is not None:
        scores = np.where(mask, scores, np.float16(-6e4))
    weights = softmax(scores)
    return weights @ V, weights
