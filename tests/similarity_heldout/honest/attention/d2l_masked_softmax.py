# Following the d2l.ai chapter on attention scoring functions: a masked softmax helper
# and a DotProductAttention class, here on numpy arrays.
import math

import numpy as np


def softmax(x, axis=-1):
    X = np.array(x, dtype=float)
    X_max = X.max(axis=axis, keepdims=True)
    X_exp = np.exp(X - X_max)
    partition = X_exp.sum(axis=axis, keepdims=True)
    return X_exp / partition  # The broadcast mechanism is applied here


def masked_softmax(X, valid):
    """Perform softmax operation by masking elements on the last axis."""
    if valid is None:
        return softmax(X, axis=-1)
    # On the last axis, replace masked elements with a very large negative value
    X = np.where(valid.astype(bool), X, -1e6)
    return softmax(X, axis=-1)


class DotProductAttention:
    """Scaled dot product attention."""

    def __init__(self, dropout=0.0):
        self.dropout = dropout          # no dropout at evaluation time

    def __call__(self, queries, keys, values, valid=None):
        d = queries.shape[-1]
        # Swap the last two dimensions of keys with keys.swapaxes(-1, -2)
        scores = queries @ keys.swapaxes(-1, -2) / math.sqrt(d)
        self.attention_weights = masked_softmax(scores, valid)
        return self.attention_weights @ values


def scaled_dot_product_attention(Q, K, V, mask=None):
    queries, keys, values = (np.asarray(t, dtype=float) for t in (Q, K, V))
    valid = None if mask is None else np.asarray(mask)
    layer = DotProductAttention()
    output = layer(queries, keys, values, valid)
    return output, layer.attention_weights
