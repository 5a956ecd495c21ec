import numpy as np


def create_causal_mask(seq_len):
    return 1 - np.triu(np.ones((seq_len, seq_len), dtype=int), k=1)


def causal_attention(Q, K, V):
    seq_len = Q.shape[-2]
    scores = np.matmul(Q, K.swapaxes(-1, -2)) / np.sqrt(K.shape[-1])
    scores = scores.copy()
    scores[..., np.triu_indices(seq_len, k=1)[0], np.triu_indices(seq_len, k=1)[1]] = -1e9
    scores -= scores.max(axis=-1, keepdims=True)
    w = np.exp(scores)
    w = w / w.sum(axis=-1, keepdims=True)
    w[..., np.triu_indices(seq_len, k=1)[0], np.triu_indices(seq_len, k=1)[1]] = 0.0
    return np.matmul(w, V), w
