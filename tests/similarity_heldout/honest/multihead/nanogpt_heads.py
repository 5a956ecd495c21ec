import math

import numpy as np
import torch
import torch.nn as nn
from torch.nn import functional as F


def split_heads(x, num_heads):
    x = np.asarray(x)
    B, T, C = x.shape
    return np.swapaxes(x.reshape(B, T, num_heads, C // num_heads), 1, 2)


def merge_heads(x):
    x = np.asarray(x)
    B, nh, T, hs = x.shape
    return np.swapaxes(x, 1, 2).reshape(B, T, nh * hs)


def _np_softmax(att):
    att = att - att.max(-1, keepdims=True)
    att = np.exp(att)
    return att / att.sum(-1, keepdims=True)


def multi_head_attention(X, W_q, W_k, W_v, W_o, num_heads, mask=None):
    X = np.asarray(X, dtype=np.float64)
    q = split_heads(X @ W_q, num_heads)  # (B, nh, T, hs)
    k = split_heads(X @ W_k, num_heads)
    v = split_heads(X @ W_v, num_heads)
    att = (q @ np.swapaxes(k, -2, -1)) * (1.0 / math.sqrt(k.shape[-1]))
    if mask is not None:
        att = np.where(np.asarray(mask) == 0, float("-inf"), att)
    att = _np_softmax(att)
    y = att @ v  # (B, nh, T, T) x (B, nh, T, hs) -> (B, nh, T, hs)
    return merge_heads(y) @ W_o, att


class MultiHeadAttention(nn.Module):

    def __init__(self, d_model, num_heads):
        super().__init__()
        assert d_model % num_heads == 0
        self.W_q = nn.Linear(d_model, d_model)
        self.W_k = nn.Linear(d_model, d_model)
        self.W_v = nn.Linear(d_model, d_model)
        self.W_o = nn.Linear(d_model, d_model)
        self.n_head = num_heads
        self.n_embd = d_model

    def forward(self, x, mask=None):
        B, T, C = x.size()  # batch size, sequence length, embedding dimensionality (n_embd)
        q = self.W_q(x).view(B, T, self.n_head, C // self.n_head).transpose(1, 2)  # (B, nh, T, hs)
        k = self.W_k(x).view(B, T, self.n_head, C // self.n_head).transpose(1, 2)
        v = self.W_v(x).view(B, T, self.n_head, C // self.n_head).transpose(1, 2)
        att = (q @ k.transpose(-2, -1)) * (1.0 / math.sqrt(k.size(-1)))
        if mask is not None:
            att = att.masked_fill(torch.as_tensor(mask, device=x.device) == 0, float('-inf'))
        att = F.softmax(att, dim=-1)
        y = att @ v
        y = y.transpose(1, 2).contiguous().view(B, T, C)  # re-assemble all head outputs side by side
        return self.W_o(y), att
