import numpy as np


def create_causal_mask(seq_len):
    i, j = np.indices((seq_len, seq_len))
    return (j <= i).astype(np.uint8)


def causal_attention(Q, K, V):
    T, d = Q.shape[-2], Q.shape[-1]
    s = (Q @ np.swapaxes(K, -1, -2)) / np.sqrt(d)
    s = np.where(create_causal_mask(T) == 1, s, np.finfo(s.dtype).min)
    s = s - s.max(axis=-1, keepdims=True)
    w = np.exp(s)
    w = w / w.sum(axis=-1, keepdims=True)
    return np.einsum("...ij,...jd->...id", w, V), w
