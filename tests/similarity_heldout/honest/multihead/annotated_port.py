# Multi-head attention as The Annotated Transformer writes it (MultiHeadedAttention), with the
# kit's attribute names in place of its list of four linears, and a numpy twin of it.
import math

import numpy as np
import torch
import torch.nn as nn


def attention(query, key, value, mask=None):
    d_k = query.size(-1)
    scores = torch.matmul(query, key.transpose(-2, -1)) / math.sqrt(d_k)
    if mask is not None:
        scores = scores.masked_fill(mask == 0, -1e9)
    p_attn = scores.softmax(dim=-1)
    return torch.matmul(p_attn, value), p_attn


def split_heads(x, num_heads):
    nbatches, length, d_model = x.shape
    return np.asarray(x).reshape(nbatches, length, num_heads, d_model // num_heads).transpose(0, 2, 1, 3)


def merge_heads(x):
    nbatches, h, length, d_k = x.shape
    return np.asarray(x).transpose(0, 2, 1, 3).reshape(nbatches, length, h * d_k)


def multi_head_attention(X, W_q, W_k, W_v, W_o, num_heads, mask=None):
    X = torch.as_tensor(np.asarray(X, dtype=np.float64))
    W = [torch.as_tensor(np.asarray(w, dtype=np.float64)) for w in (W_q, W_k, W_v, W_o)]
    nbatches, length, d_model = X.shape
    d_k = d_model // num_heads
    query, key, value = [(X @ w).view(nbatches, -1, num_heads, d_k).transpose(1, 2) for w in W[:3]]
    if mask is not None:
        mask = torch.as_tensor(np.asarray(mask))
    x, p_attn = attention(query, key, value, mask=mask)
    x = x.transpose(1, 2).contiguous().view(nbatches, -1, num_heads * d_k)
    return (x @ W[3]).numpy(), p_attn.numpy()


class MultiHeadAttention(nn.Module):
    def __init__(self, d_model, num_heads):
        "Take in model size and number of heads."
        super().__init__()
        assert d_model % num_heads == 0
        # We assume d_v always equals d_k
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
        # 1) Do all the linear projections in batch from d_model => h x d_k
        query, key, value = [
            lin(x).view(nbatches, -1, self.h, self.d_k).transpose(1, 2)
            for lin in (self.W_q, self.W_k, self.W_v)
        ]
        # 2) Apply attention on all the projected vectors in batch.
        x, self.attn = attention(query, key, value, mask=mask)
        # 3) "Concat" using a view and apply a final linear.
        x = x.transpose(1, 2).contiguous().view(nbatches, -1, self.h * self.d_k)
        return self.W_o(x), self.attn
