"""A loop over heads in numpy; the module in the d2l.ai style (transpose_qkv / transpose_output)."""
import math

import numpy as np
import torch
from torch import nn


def split_heads(x, num_heads):
    d_head = x.shape[-1] // num_heads
    heads = [x[:, :, h * d_head:(h + 1) * d_head] for h in range(num_heads)]
    return np.stack(heads, axis=1)          # (batch, heads, seq, d_head)


def merge_heads(x):
    return np.concatenate([x[:, h] for h in range(x.shape[1])], axis=-1)


def multi_head_attention(X, W_q, W_k, W_v, W_o, num_heads, mask=None):
    Q = split_heads(X @ W_q, num_heads)
    K = split_heads(X @ W_k, num_heads)
    V = split_heads(X @ W_v, num_heads)
    batch, heads, seq, d_head = Q.shape
    full_mask = None if mask is None else np.broadcast_to(np.asarray(mask), (batch, heads, seq, seq))
    ctx = np.empty_like(Q)
    weights = np.empty((batch, heads, seq, seq))
    for b in range(batch):
        for h in range(heads):
            s = Q[b, h] @ K[b, h].T / math.sqrt(d_head)
            if full_mask is not None:
                s = np.where(full_mask[b, h].astype(bool), s, -np.inf)
            e = np.exp(s - s.max(axis=1, keepdims=True))
            weights[b, h] = e / e.sum(axis=1, keepdims=True)
            ctx[b, h] = weights[b, h] @ V[b, h]
    return merge_heads(ctx) @ W_o, weights


def transpose_qkv(X, num_heads):
    X = X.reshape(X.shape[0], X.shape[1], num_heads, -1)
    X = X.permute(0, 2, 1, 3)
    return X.reshape(-1, X.shape[2], X.shape[3])          # (batch*heads, seq, d_head)


def transpose_output(X, num_heads):
    X = X.reshape(-1, num_heads, X.shape[1], X.shape[2])
    X = X.permute(0, 2, 1, 3)
    return X.reshape(X.shape[0], X.shape[1], -1)


class MultiHeadAttention(nn.Module):
    def __init__(self, d_model, num_heads, **kwargs):
        super().__init__(**kwargs)
        self.num_heads = num_heads
        self.W_q = nn.Linear(d_model, d_model, bias=True)
        self.W_k = nn.Linear(d_model, d_model, bias=True)
        self.W_v = nn.Linear(d_model, d_model, bias=True)
        self.W_o = nn.Linear(d_model, d_model, bias=True)

    def forward(self, x, mask=None):
        batch, seq, _ = x.shape
        q = transpose_qkv(self.W_q(x), self.num_heads)
        k = transpose_qkv(self.W_k(x), self.num_heads)
        v = transpose_qkv(self.W_v(x), self.num_heads)
        scores = torch.bmm(q, k.transpose(1, 2)) / math.sqrt(q.shape[-1])
        if mask is not None:
            m = torch.as_tensor(mask).to(torch.bool)
            m = torch.broadcast_to(m, (batch, self.num_heads, seq, seq)).reshape(-1, seq, seq)
            scores = scores.masked_fill(~m, -1e6)
        attn = nn.functional.softmax(scores, dim=-1)
        out = transpose_output(torch.bmm(attn, v), self.num_heads)
        return self.W_o(out), attn.reshape(batch, self.num_heads, seq, seq)
