import numpy as np


def create_causal_mask(seq_len):
    return np.triu(np.ones((seq_len, seq_len)), k=1) == 0


def causal_attention(Q, K, V):
    T = Q.shape[-2]
    scores = Q @ np.swapaxes(K, -1, -2) / np.sqrt(Q.shape[-1])
    scores = np.where(create_causal_mask(T), scores, -np.inf)
    w = np.exp(scores - scores.max(axis=-1, keepdims=True))
    w /= w.sum(axis=-1, keepdims=True)
    return w @ V, w
