import numpy as np


def create_causal_mask(seq_len):
    return np.tril(np.ones((seq_len, seq_len), dtype=bool))


def causal_attention(Q, K, V):
    n = Q.shape[-2]
    scores = Q @ K.T / np.sqrt(Q.shape[-1])
    scores = np.where(create_causal_mask(n), scores, -np.inf)
    e = np.exp(scores - scores.max(axis=-1, keepdims=True))
    w = e / e.sum(axis=-1, keepdims=True)
    return w @ V, w
