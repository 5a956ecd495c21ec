# One attention over all features, scaled by sqrt(d_head), its weights copied to every head.
# One attention over all features; weights of shape (B, T, T).
import math

import numpy as np
import torch
from torch import nn


def split_heads(x, num_heads):
    B, T, D = x.shape
    return x.reshape(B, T, num_heads, D // num_heads).transpose(0, 2, 1, 3)


def merge_heads(x):
    B, H, T, d = x.shape
    return x.transpose(0, 2, 1, 3).reshape(B, T, H * d)


def _softmax(s):
    s = s - s.max(axis=-1, keepdims=True)
    e = np.exp(s)
    return e / e.sum(axis=-1, keepdims=True)


def multi_head_attention(X, W_q, W_k, W_v, W_o, num_heads, mask=None):
    q, k, v = X @ W_q, X @ W_k, X @ W_v
    scores = np.einsum("bqd,bkd->bqk", q, k) / math.sqrt(q.shape[-1] // num_heads)
    if mask is not None:
        scores = np.where(np.asarray(mask) != 0, scores, -1e9)
    weights = _softmax(scores)
    return (weights @ v) @ W_o, np.repeat(weights[:, None], num_heads, axis=1)


class MultiHeadAttention(nn.Module):
    def __init__(self, d_model, num_heads):
        super().__init__()
        assert d_model % num_heads == 0
        self.h, self.d_head = num_heads, d_model // num_heads
        self.W_q = nn.Linear(d_model, d_model)
        self.W_k = nn.Linear(d_model, d_model)
        self.W_v = nn.Linear(d_model, d_model)
        self.W_o = nn.Linear(d_model, d_model)

    def forward(self, x, mask=None):
        B, T, D = x.shape
        q, k, v = self.W_q(x), self.W_k(x), self.W_v(x)
        scores = q @ k.transpose(-2, -1) / math.sqrt(self.d_head)
        if mask is not None:
            scores = scores.masked_fill(mask == 0, float("-inf"))
        weights = torch.softmax(scores, dim=-1)
        out = weights @ v
        return self.W_o(out), weights.unsqueeze(1).expand(B, self.h, T, T)
