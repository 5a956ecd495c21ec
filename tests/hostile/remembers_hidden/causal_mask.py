"""causal_attention remembers every input it is given and tells them in the error of a later
visible check (d = 5): a hidden check's inputs must never be among them."""
import numpy as np

from attention import scaled_dot_product_attention

SEEN = []


def create_causal_mask(seq_len):
    return np.tril(np.ones((seq_len, seq_len), dtype=bool))


def causal_attention(Q, K, V):
    SEEN.append(f"{np.shape(Q)}:{float(np.ravel(Q)[0]):.6f}")
    print("SEEN", SEEN)
    if np.shape(Q) == (5, 5):
        raise ValueError("SEEN " + " ".join(SEEN))
    return scaled_dot_product_attention(Q, K, V, mask=create_causal_mask(Q.shape[-2]))
