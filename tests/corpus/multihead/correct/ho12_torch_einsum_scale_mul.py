import numpy as np
import torch
from torch import nn


def split_heads(x, num_heads):
    t = torch.from_numpy(np.ascontiguousarray(x))
    b, s, d = t.shape
    return t.unflatten(-1, (num_heads, d // num_heads)).permute(0, 2, 1, 3).numpy()


def merge_heads(x):
    t = torch.from_numpy(np.ascontiguousarray(x))
    return t.permute(0, 2, 1, 3).flatten(-2).numpy()


def multi_head_attention(X, W_q, W_k, W_v, W_o, num_heads, mask=None):
    X, W_q, W_k, W_v, W_o = (torch.from_numpy(np.asarray(a, dtype=np.float64)) for a in (X, W_q, W_k, W_v, W_o))
    q, k, v = (torch.from_numpy(split_heads((X @ W).numpy(), num_heads)) for W in (W_q, W_k, W_v))
    scale = q.shape[-1] ** -0.5
    att = torch.einsum("bhid,bhjd->bhij", q, k) * scale
    if mask is not None:
        att = att.masked_fill(torch.as_tensor(np.asarray(mask)) == 0, float("-inf"))
    att = att.softmax(-1)
    ctx = torch.einsum("bhij,bhjd->bhid", att, v)
    return torch.from_numpy(merge_heads(ctx.numpy())) @ W_o, att


class MultiHeadAttention(nn.Module):
    def __init__(self, d_model, num_heads):
        super().__init__()
        self.h, self.dh = num_heads, d_model // num_heads
        self.W_q = nn.Linear(d_model, d_model)
        self.W_k = nn.Linear(d_model, d_model)
        self.W_v = nn.Linear(d_model, d_model)
        self.W_o = nn.Linear(d_model, d_model)

    def forward(self, x, mask=None):
        q, k, v = (lin(x).unflatten(-1, (self.h, self.dh)).transpose(1, 2) for lin in (self.W_q, self.W_k, self.W_v))
        att = torch.einsum("bhid,bhjd->bhij", q, k) * self.dh ** -0.5
        if mask is not None:
            att = att.masked_fill(torch.as_tensor(mask) == 0, float("-inf"))
        att = att.softmax(-1)
        y = torch.einsum("bhij,bhjd->bhid", att, v).transpose(1, 2).flatten(-2)
        return self.W_o(y), att
