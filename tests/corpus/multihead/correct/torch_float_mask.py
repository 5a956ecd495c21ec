# Numpy function via torch; the module turns any mask into an additive float mask.
import math

import numpy as np
import torch
from torch import nn


def split_heads(x, num_heads):
    t = torch.from_numpy(np.asarray(x))
    B, T, D = t.shape
    return t.reshape(B, T, num_heads, D // num_heads).permute(0, 2, 1, 3).numpy()


def merge_heads(x):
    t = torch.from_numpy(np.asarray(x))
    B, H, T, Dh = t.shape
    return t.permute(0, 2, 1, 3).reshape(B, T, H * Dh).numpy()


def multi_head_attention(X, W_q, W_k, W_v, W_o, num_heads, mask=None):
    X = torch.tensor(X)
    Wq, Wk, Wv, Wo = (torch.tensor(W) for W in (W_q, W_k, W_v, W_o))
    B, T, D = X.shape
    dh = D // num_heads
    q = (X @ Wq).view(B, T, num_heads, dh).transpose(1, 2)
    k = (X @ Wk).view(B, T, num_heads, dh).transpose(1, 2)
    v = (X @ Wv).view(B, T, num_heads, dh).transpose(1, 2)
    s = q @ k.transpose(-1, -2) / math.sqrt(dh)
    if mask is not None:
        s = s + (1.0 - torch.as_tensor(np.asarray(mask), dtype=s.dtype)) * -1e9
    w = torch.softmax(s, dim=-1)
    out = (w @ v).transpose(1, 2).reshape(B, T, D) @ Wo
    return out.numpy(), w.numpy()


class MultiHeadAttention(nn.Module):
    def __init__(self, d_model, num_heads):
        super().__init__()
        self.num_heads = num_heads
        self.W_q, self.W_k = nn.Linear(d_model, d_model), nn.Linear(d_model, d_model)
        self.W_v, self.W_o = nn.Linear(d_model, d_model), nn.Linear(d_model, d_model)

    def forward(self, x, mask=None):
        B, T, D = x.shape
        dh = D // self.num_heads

        def heads(t):
            return t.view(B, T, self.num_heads, dh).transpose(1, 2)

        s = heads(self.W_q(x)) @ heads(self.W_k(x)).transpose(-1, -2) / dh ** 0.5
        if mask is not None:
            s = s + (1.0 - mask.to(s.dtype)) * -1e9
        w = s.softmax(-1)
        out = (w @ heads(self.W_v(x))).transpose(1, 2).reshape(B, T, D)
        return self.W_o(out), w
