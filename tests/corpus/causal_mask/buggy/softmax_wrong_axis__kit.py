# Re-implements the attention with the kit's softmax, over axis 0.
import numpy as np

from attention import softmax


def create_causal_mask(seq_len):
    return np.tril(np.ones((seq_len, seq_len), dtype=bool))


def causal_attention(Q, K, V):
    mask = create_causal_mask(Q.shape[-2])
    scores = Q @ np.swapaxes(K, -1, -2) / np.sqrt(Q.shape[-1])
    weights = softmax(np.where(mask, scores, -1e9), axis=0)
    return weights @ V, weights
