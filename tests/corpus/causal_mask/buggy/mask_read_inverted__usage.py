# The mask is right, but it is applied as 'True = blocked'.
import numpy as np


def create_causal_mask(seq_len):
    return np.tril(np.ones((seq_len, seq_len)))


def softmax(x):
    e = np.exp(x - np.max(x, axis=-1, keepdims=True))
    return e / np.sum(e, axis=-1, keepdims=True)


def causal_attention(Q, K, V):
    seq_len, d = Q.shape[-2], Q.shape[-1]
    scores = Q @ np.swapaxes(K, -1, -2) / np.sqrt(d)
    mask = create_causal_mask(seq_len)
    scores = np.where(mask == 1, -np.inf, scores)
    weights = softmax(scores)
    return weights @ V, weights
