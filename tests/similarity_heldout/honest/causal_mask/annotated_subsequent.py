"""After the Annotated Transformer's `subsequent_mask`, which builds the upper triangle and flips it."""
import numpy as np

from attention import scaled_dot_product_attention


def subsequent_mask(size):
    "Mask out subsequent positions."
    attn_shape = (1, size, size)
    upper = np.triu(np.ones(attn_shape), k=1).astype("uint8")
    return upper == 0


def create_causal_mask(seq_len):
    return subsequent_mask(seq_len)[0]


def causal_attention(Q, K, V):
    n = np.shape(Q)[-2]
    return scaled_dot_product_attention(Q, K, V, mask=create_causal_mask(n))
