"""My numpy port of the Annotated Transformer's attention: same steps, no torch."""
import numpy as np


def softmax(x, axis=-1):
    x = np.asarray(x)
    if not np.issubdtype(x.dtype, np.floating):
        x = x.astype(np.float64)
    shifted = x - np.max(x, axis=axis, keepdims=True)
    exp_x = np.exp(shifted)
    return exp_x / np.sum(exp_x, axis=axis, keepdims=True)


def scaled_dot_product_attention(Q, K, V, mask=None):
    query, key, value = np.asarray(Q, dtype=np.float64), np.asarray(K, dtype=np.float64), np.asarray(V, dtype=np.float64)
    d_k = query.shape[-1]
    # scores: (..., n_q, n_k)
    scores = np.matmul(query, np.swapaxes(key, -2, -1)) / np.sqrt(d_k)
    if mask is not None:
        scores = np.where(np.asarray(mask) == 0, -1e9, scores)
    p_attn = softmax(scores, axis=-1)
    return np.matmul(p_attn, value), p_attn
