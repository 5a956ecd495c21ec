"""The module computes with torch's own multi_head_attention_forward on the four Linear layers."""
import math

import numpy as np
import torch
import torch.nn.functional as F
from torch import nn


def split_heads(x, num_heads):
    b, s, d = np.shape(x)
    return np.ascontiguousarray(np.asarray(x).reshape(b, s, num_heads, -1).transpose(0, 2, 1, 3))


def merge_heads(x):
    b, h, s, dh = np.shape(x)
    return np.asarray(x).transpose(0, 2, 1, 3).reshape(b, s, -1)


def multi_head_attention(X, W_q, W_k, W_v, W_o, num_heads, mask=None):
    q, k, v = (split_heads(X @ W, num_heads) for W in (W_q, W_k, W_v))
    s = q @ k.swapaxes(-1, -2) / math.sqrt(q.shape[-1])
    if mask is not None:
        s = np.where(np.asarray(mask) != 0, s, -np.inf)
    w = np.exp(s - s.max(-1, keepdims=True))
    w /= w.sum(-1, keepdims=True)
    return merge_heads(w @ v) @ W_o, w


class MultiHeadAttention(nn.Module):
    def __init__(self, d_model, num_heads):
        super().__init__()
        self.d_model, self.num_heads = d_model, num_heads
        self.W_q = nn.Linear(d_model, d_model)
        self.W_k = nn.Linear(d_model, d_model)
        self.W_v = nn.Linear(d_model, d_model)
        self.W_o = nn.Linear(d_model, d_model)

    def forward(self, x, mask=None):
        b, s, _ = x.shape
        attn_mask = None
        if mask is not None:
            allowed = torch.as_tensor(mask).bool().expand(b, self.num_heads, s, s)
            attn_mask = allowed.reshape(b * self.num_heads, s, s)     # passed on as it is
        xt = x.transpose(0, 1)                                          # (seq, batch, d_model)
        out, w = F.multi_head_attention_forward(
            xt, xt, xt, self.d_model, self.num_heads,
            in_proj_weight=torch.cat([self.W_q.weight, self.W_k.weight, self.W_v.weight]),
            in_proj_bias=torch.cat([self.W_q.bias, self.W_k.bias, self.W_v.bias]),
            bias_k=None, bias_v=None, add_zero_attn=False, dropout_p=0.0,
            out_proj_weight=self.W_o.weight, out_proj_bias=self.W_o.bias,
            training=False, attn_mask=attn_mask, need_weights=True, average_attn_weights=False)
        return out.transpose(0, 1), w
