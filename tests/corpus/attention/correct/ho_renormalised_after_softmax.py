import numpy as np


def softmax(x, axis=-1):
    e = np.exp(x - np.amax(x, axis=axis, keepdims=True))
    return e / e.sum(axis=axis, keepdims=True)


def scaled_dot_product_attention(Q, K, V, mask=None):
    """Mask after the softmax, then renormalise: the same distribution as masking before."""
    scores = Q @ np.swapaxes(K, -2, -1) / np.sqrt(Q.shape[-1])
    weights = softmax(scores)
    if mask is not None:
        weights = weights * (np.asarray(mask) != 0)
        weights = weights / weights.sum(axis=-1, keepdims=True)
    return weights @ V, weights
