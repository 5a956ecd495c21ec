# Only a 2-D mask is applied; masks with batch axes fall through.
import numpy as np


def softmax(x, axis=-1):
    e = np.exp(x - np.max(x, axis=axis, keepdims=True))
    return e / np.sum(e, axis=axis, keepdims=True)


def scaled_dot_product_attention(Q, K, V, mask=None):
    scores = np.matmul(Q, np.swapaxes(K, -1, -2)) / np.sqrt(K.shape[-1])
    if mask is not None and np.ndim(mask) == 2:
        scores = np.where(np.asarray(mask) != 0, scores, -1e9)
    weights = softmax(scores, axis=-1)
    return np.matmul(weights, V), weights
