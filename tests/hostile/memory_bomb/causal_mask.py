"""create_causal_mask asks for 40 GB, twice."""
import numpy as np


def create_causal_mask(seq_len):
    hoard = bytearray(40 * 1024**3)
    return np.ones((1 << 40,)) + len(hoard)


def causal_attention(Q, K, V):
    Q, K, V = (np.asarray(a, dtype=float) for a in (Q, K, V))
    T = Q.shape[-2]
    scores = Q @ np.swapaxes(K, -1, -2) / np.sqrt(Q.shape[-1])
    scores = np.where(np.tril(np.ones((T, T), dtype=bool)), scores, -np.inf)
    weights = np.exp(scores - scores.max(axis=-1, keepdims=True))
    weights = weights / weights.sum(axis=-1, keepdims=True)
    return weights @ V, weights
