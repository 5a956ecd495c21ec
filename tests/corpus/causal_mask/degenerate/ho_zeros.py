import numpy as np


def create_causal_mask(seq_len):
    return np.zeros((seq_len, seq_len))


def causal_attention(Q, K, V):
    T = np.shape(Q)[-2]
    return np.zeros(np.shape(V)), np.zeros(np.shape(Q)[:-2] + (T, T))
