import numpy as np


def softmax(x, axis=-1):
    return np.zeros_like(np.asarray(x, dtype=float))


def scaled_dot_product_attention(Q, K, V, mask=None):
    Q, K, V = (np.asarray(a) for a in (Q, K, V))
    return np.zeros(Q.shape[:-1] + V.shape[-1:]), np.zeros(Q.shape[:-1] + K.shape[-2:-1])
