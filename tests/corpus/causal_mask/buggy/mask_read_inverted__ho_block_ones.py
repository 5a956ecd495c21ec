import numpy as np


def _softmax(x):
    e = np.exp(x - x.max(-1, keepdims=True))
    return e / e.sum(-1, keepdims=True)



def create_causal_mask(seq_len):
    return np.tril(np.ones((seq_len, seq_len), dtype=bool))


def causal_attention(Q, K, V):
    s = Q @ np.swapaxes(K, -1, -2) / np.sqrt(Q.shape[-1])
    s = np.where(create_causal_mask(Q.shape[-2]), -1e9, s)
    w = _softmax(s)
    return w @ V, w
