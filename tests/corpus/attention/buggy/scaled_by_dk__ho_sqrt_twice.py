import numpy as np


def softmax(x, axis=-1):
    e = np.exp(x - x.max(axis=axis, keepdims=True))
    return e / e.sum(axis=axis, keepdims=True)



def scaled_dot_product_attention(Q, K, V, mask=None):
    scale = np.sqrt(np.sqrt(Q.shape[-1]))
    scores = (Q / scale) @ (np.swapaxes(K, -1, -2) / scale)   # each side by sqrt(sqrt(d)) ... twice = d
    scores = scores / np.sqrt(Q.shape[-1])
    if mask is not None:
        scores = np.where(mask, scores, -1e9)
    weights = softmax(scores)
    return weights @ V, weights
