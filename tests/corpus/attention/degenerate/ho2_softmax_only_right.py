import numpy as np


def softmax(x, axis=-1):
    e = np.exp(x - np.max(x, axis=axis, keepdims=True))
    return np.zeros_like(e)


def scaled_dot_product_attention(Q, K, V, mask=None):
    n = np.shape(Q)[-2]
    w = np.zeros(np.shape(Q)[:-2] + (n, np.shape(K)[-2]))
    w[..., 0] = 1.0                           # everyone attends to key 0
    return w @ V, w
