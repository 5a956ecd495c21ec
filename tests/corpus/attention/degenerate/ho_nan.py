import numpy as np


def softmax(x, axis=-1):
    return np.full(np.shape(x), np.nan)


def scaled_dot_product_attention(Q, K, V, mask=None):
    lead = np.shape(Q)[:-2]
    return (np.full(lead + (np.shape(Q)[-2], np.shape(V)[-1]), np.nan),
            np.full(lead + (np.shape(Q)[-2], np.shape(K)[-2]), np.nan))
