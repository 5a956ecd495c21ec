import numpy as np


def softmax(x, axis=-1):
    shifted = x - np.amax(x, axis=axis, keepdims=True)
    exps = np.exp(shifted)
    return exps / exps.sum(axis=axis, keepdims=True)


def scaled_dot_product_attention(Q, K, V, mask=None):
    """Blocked keys get a big negative number added to their score."""
    Q = np.array(Q, dtype=np.float64)
    K = np.array(K, dtype=np.float64)
    V = np.array(V, dtype=np.float64)
    scores = np.matmul(Q, np.swapaxes(K, -2, -1)) / np.sqrt(K.shape[-1])
    if mask is not None:
        blocked = 1.0 - np.asarray(mask).astype(np.float64)   # 1 where a key is blocked
        scores = scores + blocked * -1e9
    weights = softmax(scores, axis=-1)
    return np.matmul(weights, V), weights
