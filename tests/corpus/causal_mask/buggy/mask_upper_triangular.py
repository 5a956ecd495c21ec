# np.triu instead of np.tril.
import numpy as np

from attention import scaled_dot_product_attention


def create_causal_mask(seq_len):
    return np.triu(np.ones((seq_len, seq_len), dtype=bool))


def causal_attention(Q, K, V):
    mask = create_causal_mask(Q.shape[-2])
    return scaled_dot_product_attention(Q, K, V, mask=mask)
