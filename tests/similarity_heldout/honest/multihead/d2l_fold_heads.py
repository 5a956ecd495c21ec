"""d2l.ai's MultiHeadAttention: the heads are folded into the batch axis (transpose_qkv) so one
batched dot-product attention serves them all, then unfolded (transpose_output)."""
import math

import numpy as np
import torch
from torch import nn


def split_heads(x, num_heads):
    b, t, d = np.shape(x)
    x = np.reshape(x, (b, t, num_heads, d // num_heads))
    return np.transpose(x, (0, 2, 1, 3))


def merge_heads(x):
    b, h, t, dh = np.shape(x)
    return np.reshape(np.transpose(x, (0, 2, 1, 3)), (b, t, h * dh))


def transpose_qkv(X, num_heads):
    """Transposition for parallel computation of multiple attention heads."""
    X = X.reshape(X.shape[0], X.shape[1], num_heads, -1)
    X = X.permute(0, 2, 1, 3)
    return X.reshape(-1, X.shape[2], X.shape[3])


def transpose_output(X, num_heads):
    """Reverse the operation of transpose_qkv."""
    X = X.reshape(-1, num_heads, X.shape[1], X.shape[2])
    X = X.permute(0, 2, 1, 3)
    return X.reshape(X.shape[0], X.shape[1], -1)


def dot_product_attention(queries, keys, values, blocked=None):
    d = queries.shape[-1]
    scores = torch.bmm(queries, keys.transpose(1, 2)) / math.sqrt(d)
    if blocked is not None:
        scores = scores.masked_fill(blocked, -1e6)
    weights = nn.functional.softmax(scores, dim=-1)
    return torch.bmm(weights, values), weights


def _blocked(mask, batch, num_heads, t):
    if mask is None:
        return None
    allowed = torch.as_tensor(np.asarray(mask)).bool()
    return ~allowed.broadcast_to((batch, num_heads, t, t)).reshape(batch * num_heads, t, t)


def multi_head_attention(X, W_q, W_k, W_v, W_o, num_heads, mask=None):
    X = torch.tensor(np.asarray(X), dtype=torch.float64)
    batch, t, _ = X.shape
    proj = lambda w: torch.tensor(np.asarray(w), dtype=torch.float64)
    queries = transpose_qkv(X @ proj(W_q), num_heads)
    keys = transpose_qkv(X @ proj(W_k), num_heads)
    values = transpose_qkv(X @ proj(W_v), num_heads)
    output, weights = dot_product_attention(queries, keys, values, _blocked(mask, batch, num_heads, t))
    output_concat = transpose_output(output, num_heads)
    return (output_concat @ proj(W_o)).numpy(), weights.reshape(batch, num_heads, t, t).numpy()


class MultiHeadAttention(nn.Module):
    """Multi-head attention."""

    def __init__(self, d_model, num_heads):
        super().__init__()
        self.num_heads = num_heads
        self.W_q = nn.Linear(d_model, d_model, bias=True)
        self.W_k = nn.Linear(d_model, d_model, bias=True)
        self.W_v = nn.Linear(d_model, d_model, bias=True)
        self.W_o = nn.Linear(d_model, d_model, bias=True)

    def forward(self, x, mask=None):
        batch, t, _ = x.shape
        queries = transpose_qkv(self.W_q(x), self.num_heads)
        keys = transpose_qkv(self.W_k(x), self.num_heads)
        values = transpose_qkv(self.W_v(x), self.num_heads)
        output, weights = dot_product_attention(queries, keys, values, _blocked(mask, batch, self.num_heads, t))
        output_concat = transpose_output(output, self.num_heads)
        return self.W_o(output_concat), weights.reshape(batch, self.num_heads, t, t)
