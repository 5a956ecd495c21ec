import math

import numpy as np


def create_causal_mask(seq_len):
    m = np.zeros((seq_len, seq_len), dtype=bool)
    for i in range(seq_len):
        m[i, : i + 1] = True
    return m


def causal_attention(Q, K, V):
    Q, K, V = (np.asarray(a, dtype=float) for a in (Q, K, V))
    T, d = Q.shape[-2], Q.shape[-1]
    out = np.zeros(Q.shape[:-1] + (V.shape[-1],))
    W = np.zeros(Q.shape[:-1] + (T,))
    for idx in np.ndindex(*Q.shape[:-2]):
        for i in range(T):
            s = K[idx][: i + 1] @ Q[idx][i] / math.sqrt(d)      # only the past and i itself
            e = np.exp(s - s.max())
            W[idx][i, : i + 1] = e / e.sum()
            out[idx][i] = W[idx][i, : i + 1] @ V[idx][: i + 1]
    return out, W
