# d2l.ai's `sequence_mask` idea: position i may see the first i + 1 keys (its "valid length").
import math

import numpy as np


def sequence_mask(valid_len, maxlen):
    return np.arange(maxlen)[None, :] < valid_len[:, None]


def create_causal_mask(seq_len):
    valid_len = np.arange(1, seq_len + 1)
    return sequence_mask(valid_len, seq_len)


def masked_softmax(X, mask):
    X = np.where(mask, X, -1e6)
    X = X - X.max(axis=-1, keepdims=True)
    e = np.exp(X)
    e = e * mask
    return e / e.sum(axis=-1, keepdims=True)


def causal_attention(Q, K, V):
    Q, K, V = np.asarray(Q, float), np.asarray(K, float), np.asarray(V, float)
    scores = Q @ np.swapaxes(K, -1, -2) / math.sqrt(Q.shape[-1])
    weights = masked_softmax(scores, create_causal_mask(Q.shape[-2]))
    return weights @ V, weights
