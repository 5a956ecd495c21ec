import numpy as np


def softmax(x, axis=-1):
    e = np.exp(x - x.max(axis=axis, keepdims=True))
    return e / e.sum(axis=axis, keepdims=True)



def scaled_dot_product_attention(Q, K, V, mask=None):
    scores = np.matmul(Q, K.transpose()) / K.shape[-1] ** 0.5
    if mask is not None:
        scores[np.asarray(mask) == 0] = -np.inf
    weights = softmax(scores)
    return np.matmul(weights, V), weights
