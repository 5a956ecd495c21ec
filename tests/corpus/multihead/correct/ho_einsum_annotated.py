"""numpy with einsum; the module adapted from the Annotated Transformer's MultiHeadedAttention."""
import math

import numpy as np
import torch
import torch.nn as nn


def split_heads(x, num_heads):
    batch, seq, d_model = x.shape
    d_head = d_model // num_heads
    return np.transpose(np.reshape(x, (batch, seq, num_heads, d_head)), (0, 2, 1, 3))


def merge_heads(x):
    batch, heads, seq, d_head = x.shape
    return np.reshape(np.transpose(x, (0, 2, 1, 3)), (batch, seq, heads * d_head))


def multi_head_attention(X, W_q, W_k, W_v, W_o, num_heads, mask=None):
    q = split_heads(np.einsum("bsd,de->bse", X, W_q), num_heads)
    k = split_heads(np.einsum("bsd,de->bse", X, W_k), num_heads)
    v = split_heads(np.einsum("bsd,de->bse", X, W_v), num_heads)
    scores = np.einsum("bhqd,bhkd->bhqk", q, k) / np.sqrt(q.shape[-1])
    if mask is not None:
        scores = np.where(np.asarray(mask) == 0, -1e9, scores)
    scores = scores - scores.max(axis=-1, keepdims=True)
    p = np.exp(scores)
    p /= p.sum(axis=-1, keepdims=True)
    ctx = np.einsum("bhqk,bhkd->bhqd", p, v)
    return np.einsum("bse,ef->bsf", merge_heads(ctx), W_o), p


def attention(query, key, value, mask=None, dropout=None):
    d_k = query.size(-1)
    scores = torch.matmul(query, key.transpose(-2, -1)) / math.sqrt(d_k)
    if mask is not None:
        scores = scores.masked_fill(mask == 0, -1e9)
    p_attn = scores.softmax(dim=-1)
    if dropout is not None:
        p_attn = dropout(p_attn)
    return torch.matmul(p_attn, value), p_attn


class MultiHeadAttention(nn.Module):
    def __init__(self, d_model, num_heads):
        super(MultiHeadAttention, self).__init__()
        assert d_model % num_heads == 0
        self.d_k = d_model // num_heads
        self.h = num_heads
        self.W_q = nn.Linear(d_model, d_model)
        self.W_k = nn.Linear(d_model, d_model)
        self.W_v = nn.Linear(d_model, d_model)
        self.W_o = nn.Linear(d_model, d_model)
        self.attn = None

    def forward(self, x, mask=None):
        if mask is not None:
            mask = torch.as_tensor(mask)
        nbatches = x.size(0)
        query, key, value = [
            lin(x).view(nbatches, -1, self.h, self.d_k).transpose(1, 2)
            for lin in (self.W_q, self.W_k, self.W_v)
        ]
        x, self.attn = attention(query, key, value, mask=mask)
        x = x.transpose(1, 2).contiguous().view(nbatches, -1, self.h * self.d_k)
        return self.W_o(x), self.attn
