import numpy as np


def create_causal_mask(seq_len):
    rows, cols = np.indices((seq_len, seq_len))
    return cols <= rows


def _softmax_last(z):
    z = z - np.max(z, axis=-1, keepdims=True)
    p = np.exp(z)
    return p / np.sum(p, axis=-1, keepdims=True)


def causal_attention(Q, K, V):
    Q = np.asarray(Q, dtype=np.float64)
    K = np.asarray(K, dtype=np.float64)
    seq = Q.shape[-2]
    s = np.einsum("...qd,...kd->...qk", Q, K) / np.sqrt(Q.shape[-1])
    s[..., ~create_causal_mask(seq)] = -np.inf
    p = _softmax_last(s)
    return np.einsum("...qk,...kd->...qd", p, np.asarray(V, dtype=np.float64)), p
