import numpy as np


def softmax(x, axis=-1):
    x = np.asarray(x, dtype=np.float32)
    z = x - x.max(axis=axis, keepdims=True)
    num = np.exp(z)
    return num / num.sum(axis=axis, keepdims=True)


def scaled_dot_product_attention(Q, K, V, mask=None):
    Q = np.asarray(Q, np.float32)
    K = np.asarray(K, np.float32)
    V = np.asarray(V, np.float32)
    scores = Q @ K.swapaxes(-2, -1) / np.float32(np.sqrt(Q.shape[-1]))
    if mask is not None:
        scores = scores + (1.0 - np.asarray(mask, dtype=np.float32)) * np.float32(-1e9)
    weights = softmax(scores)
    return weights @ V, weights
