# Tutorial style: one fused view/transpose per projection, masked_fill with -inf, einsum in numpy.
import math

import numpy as np
import torch
import torch.nn as nn


def split_heads(x, num_heads):
    b, t, d = x.shape
    return np.transpose(np.reshape(x, (b, t, num_heads, d // num_heads)), (0, 2, 1, 3))


def merge_heads(x):
    b, h, t, d = x.shape
    return np.transpose(x, (0, 2, 1, 3)).reshape(b, t, h * d)


def multi_head_attention(X, W_q, W_k, W_v, W_o, num_heads, mask=None):
    q, k, v = (split_heads(X @ W, num_heads) for W in (W_q, W_k, W_v))
    scores = np.einsum("bhqd,bhkd->bhqk", q, k) / math.sqrt(q.shape[-1])
    if mask is not None:
        scores = np.where(np.asarray(mask) != 0, scores, -np.inf)
    scores = scores - scores.max(axis=-1, keepdims=True)
    weights = np.exp(scores)
    weights /= weights.sum(axis=-1, keepdims=True)
    return merge_heads(np.einsum("bhqk,bhkd->bhqd", weights, v)) @ W_o, weights


class MultiHeadAttention(nn.Module):
    def __init__(self, d_model, num_heads):
        super().__init__()
        assert d_model % num_heads == 0
        self.h, self.d_k = num_heads, d_model // num_heads
        self.W_q = nn.Linear(d_model, d_model)
        self.W_k = nn.Linear(d_model, d_model)
        self.W_v = nn.Linear(d_model, d_model)
        self.W_o = nn.Linear(d_model, d_model)

    def forward(self, x, mask=None):
        nbatches, seq, _ = x.shape
        query, key, value = [lin(x).view(nbatches, -1, self.h, self.d_k).transpose(1, 2)
                             for lin in (self.W_q, self.W_k, self.W_v)]
        scores = torch.matmul(query, key.transpose(-2, -1)) / math.sqrt(self.d_k)
        if mask is not None:
            scores = scores.masked_fill(mask == 0, float("-inf"))
        p_attn = scores.softmax(dim=-1)
        x = torch.matmul(p_attn, value).transpose(1, 2).contiguous().view(nbatches, -1, self.h * self.d_k)
        return self.W_o(x), p_attn
