# The weights are averaged over the heads, as torch does by default.
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
    q, k, v = (split_heads(X @ W, num_heads) for W in (W_q, W_k, W_v))
    scores = q @ k.transpose(0, 1, 3, 2) / math.sqrt(q.shape[-1])
    if mask is not None:
        scores = np.where(np.asarray(mask) != 0, scores, -1e9)
    weights = _softmax(scores)
    return merge_heads(weights @ v) @ W_o, weights.mean(axis=1)


class MultiHeadAttention(nn.Module):
    def __init__(self, d_model, num_heads):
        super().__init__()
        self.h, self.d_head = num_heads, d_model // num_heads
        self.W_q = nn.Linear(d_model, d_model)
        self.W_k = nn.Linear(d_model, d_model)
        self.W_v = nn.Linear(d_model, d_model)
        self.W_o = nn.Linear(d_model, d_model)

    def forward(self, x, mask=None):
        B, T, D = x.shape
        q, k, v = (lin(x).view(B, T, self.h, self.d_head).transpose(1, 2) for lin in (self.W_q, self.W_k, self.W_v))
        scores = q @ k.transpose(-2, -1) / math.sqrt(self.d_head)
        if mask is not None:
            scores = scores.masked_fill(mask == 0, -1e9)
        p = torch.softmax(scores, dim=-1)
        out = (p @ v).transpose(1, 2).reshape(B, T, D)
        return self.W_o(out), p.mean(dim=1)
