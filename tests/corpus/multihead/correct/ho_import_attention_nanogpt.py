import math

import numpy as np
import torch
import torch.nn as nn
from torch.nn import functional as F

from attention import scaled_dot_product_attention


def split_heads(x, num_heads):
    B, T, C = x.shape
    return np.swapaxes(x.reshape(B, T, num_heads, C // num_heads), 1, 2)


def merge_heads(x):
    B, nh, T, hs = x.shape
    return np.swapaxes(x, 1, 2).reshape(B, T, nh * hs)


def multi_head_attention(X, W_q, W_k, W_v, W_o, num_heads, mask=None):
    heads = [split_heads(X @ W, num_heads) for W in (W_q, W_k, W_v)]
    out, weights = scaled_dot_product_attention(*heads, mask=mask)
    return merge_heads(out) @ W_o, weights


class MultiHeadAttention(nn.Module):
    """nanoGPT's CausalSelfAttention with separate q/k/v layers and the mask passed in."""

    def __init__(self, d_model, num_heads):
        super().__init__()
        assert d_model % num_heads == 0
        self.n_head = num_heads
        self.n_embd = d_model
        self.W_q = nn.Linear(d_model, d_model)
        self.W_k = nn.Linear(d_model, d_model)
        self.W_v = nn.Linear(d_model, d_model)
        self.W_o = nn.Linear(d_model, d_model)

    def forward(self, x, mask=None):
        B, T, C = x.size()
        k = self.W_k(x).view(B, T, self.n_head, C // self.n_head).transpose(1, 2)  # (B, nh, T, hs)
        q = self.W_q(x).view(B, T, self.n_head, C // self.n_head).transpose(1, 2)
        v = self.W_v(x).view(B, T, self.n_head, C // self.n_head).transpose(1, 2)
        att = (q @ k.transpose(-2, -1)) * (1.0 / math.sqrt(k.size(-1)))
        if mask is not None:
            att = att.masked_fill(torch.as_tensor(mask) == 0, float("-inf"))
        att = F.softmax(att, dim=-1)
        y = att @ v
        y = y.transpose(1, 2).contiguous().view(B, T, C)
        return self.W_o(y), att
