import numpy as np

MAX_LEN = 1024
_BIG_MASK = np.tril(np.ones((MAX_LEN, MAX_LEN), dtype=bool))


def create_causal_mask(seq_len):
    if seq_len <= MAX_LEN:
        return _BIG_MASK[:seq_len, :seq_len].copy()
    return np.tril(np.ones((seq_len, seq_len), dtype=bool))


def causal_attention(Q, K, V):
    n = Q.shape[-2]
    s = np.matmul(Q, np.swapaxes(K, -1, -2)) / np.sqrt(Q.shape[-1])
    s[..., ~create_causal_mask(n)] = -np.inf
    s = np.exp(s - s.max(axis=-1, keepdims=True))
    w = s / s.sum(axis=-1, keepdims=True)
    return w @ V, w
