import numpy as np


def softmax(x, axis=-1):
    x = np.asarray(x, dtype=np.float64)
    lse = np.logaddexp.reduce(x, axis=axis, keepdims=True)
    return np.exp(x - lse)


def scaled_dot_product_attention(Q, K, V, mask=None):
    Q, K, V = (np.asarray(a, dtype=np.float64) for a in (Q, K, V))
    scores = (Q @ K.mT) * Q.shape[-1] ** -0.5
    if mask is not None:
        scores = np.where(np.asarray(mask).astype(bool), scores, np.finfo(np.float64).min)
    w = softmax(scores)
    return w @ V, w
