import math

import numpy as np
import torch
from torch import nn


def split_heads(x, num_heads):
    b, s, d = x.shape
    return x.reshape(b, s, num_heads, d // num_heads).transpose(0, 2, 1, 3)  #SPLIT


def merge_heads(x):
    b, h, s, dh = x.shape
    return x.transpose(0, 2, 3, 1).reshape(b, s, h * dh)  #MERGE


def _softmax(x):
    e = np.exp(x - x.max(-1, keepdims=True))
    return e / e.sum(-1, keepdims=True)


def multi_head_attention(X, W_q, W_k, W_v, W_o, num_heads, mask=None):
    Q = split_heads(X @ W_q, num_heads)          # (b, h, s, dh)
    K = split_heads(X @ W_k, num_heads)
    V = split_heads(X @ W_v, num_heads)
    d_head = Q.shape[-1]
    scores = Q @ K.transpose(0, 1, 3, 2) / math.sqrt(d_head)   #NP_SCALE
    if mask is not None:  #NP_MASK
        scores = np.where(mask, scores, -1e9)  #NP_FILL
    weights = _softmax(scores)
    out = merge_heads(weights @ V) @ W_o  #NP_OUT
    return out, weights  #NP_RET


class MultiHeadAttention(nn.Module):
    def __init__(self, d_model, num_heads):
        super().__init__()
        assert d_model % num_heads == 0
        self.d_model, self.num_heads = d_model, num_heads
        self.d_head = d_model // num_heads
        self.W_q = nn.Linear(d_model, d_model)
        self.W_k = nn.Linear(d_model, d_model)
        self.W_v = nn.Linear(d_model, d_model)
        self.W_o = nn.Linear(d_model, d_model)

    def _split(self, t):
        b, s, _ = t.shape
        return t.view(b, s, self.num_heads, self.d_head).transpose(1, 2)   # (b, h, s, dh)  #T_SPLIT

    def forward(self, x, mask=None):
        b, s, _ = x.shape
        q, k, v = self._split(self.W_q(x)), self._split(self.W_k(x)), self._split(self.W_v(x))  #T_PROJ
        att = q @ k.transpose(-2, -1) / math.sqrt(self.d_head)  #T_SCALE
        if mask is not None:  #T_MASK
            att = att.masked_fill(torch.as_tensor(mask) == 0, float("-inf"))  #T_FILL
        att = torch.softmax(att, dim=-1)
        y = (att @ v).permute(0, 2, 3, 1).reshape(b, s, self.d_model)  #T_MERGE
        return self.W_o(y), att  #T_RET
