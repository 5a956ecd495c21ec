import numpy as np


def softmax(x, axis=-1):
    x = np.asarray(x, dtype=float)
    y = np.exp(x - x.max(axis=axis, keepdims=True))
    return y / y.sum(axis=axis, keepdims=True)


def scaled_dot_product_attention(Q, K, V, mask=None):
    Q = np.asarray(Q, dtype=float); K = np.asarray(K, dtype=float); V = np.asarray(V, dtype=float)
    axes = list(range(K.ndim))
    axes[-1], axes[-2] = axes[-2], axes[-1]
    scores = Q @ np.transpose(K, axes) / np.sqrt(K.shape[-1])
    if mask is not None:
        scores = np.where(np.broadcast_to(mask, scores.shape) == 0, float("-inf"), scores)
    attn = softmax(scores, axis=-1)
    return attn @ V, attn
