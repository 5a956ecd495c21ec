import numpy as np


def create_causal_mask(seq_len):
    return np.tri(seq_len, dtype=bool)


def causal_attention(Q, K, V):
    T = Q.shape[-2]
    s = np.einsum("...td,...sd->...ts", Q, K) / np.sqrt(Q.shape[-1])
    s = np.where(create_causal_mask(T), s, -np.inf)
    s = s - s.max(-1, keepdims=True)
    w = np.exp(s)
    w /= w.sum(-1, keepdims=True)
    return w @ V, w
