# Divides by d_k, in float32.
import numpy as np

DTYPE = np.float32          # I work in single precision everywhere, like a GPU would


def softmax(x, axis=-1):
    x = np.asarray(x, dtype=DTYPE)
    shifted = x - x.max(axis=axis, keepdims=True)
    e = np.exp(shifted)
    return (e / e.sum(axis=axis, keepdims=True)).astype(DTYPE)


def scaled_dot_product_attention(Q, K, V, mask=None):
    Q, K, V = (np.asarray(a, dtype=DTYPE) for a in (Q, K, V))
    d_k = DTYPE(Q.shape[-1])
    scores = np.matmul(Q, np.swapaxes(K, -1, -2)) / d_k
    if mask is not None:
        scores = np.where(np.asarray(mask, dtype=bool), scores, DTYPE(-1e9))
    weights = softmax(scores)
    return np.matmul(weights, V), weights
