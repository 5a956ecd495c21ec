import numpy as np
import torch
from torch import nn


def split_heads(x, num_heads):
    b, t, d = x.shape
    return x.reshape(b, t, num_heads, d // num_heads).transpose(0, 2, 1, 3)   # (B, h, T, d_head)


def merge_heads(x):
    b, h, t, dh = x.shape
    return x.transpose(0, 2, 1, 3).reshape(b, t, h * dh)                       # (B, T, h*d_head)


def multi_head_attention(X, W_q, W_k, W_v, W_o, num_heads, mask=None):
    q, k, v = (split_heads(X @ W, num_heads) for W in (W_q, W_k, W_v))        # (B, h, T, d_head)
    scores = q @ k.swapaxes(-1, -2) / np.sqrt(q.shape[-1])                   # (B, h, T, T)
    if mask is not None:
        scores = np.where(np.asarray(mask) != 0, scores, -1e9)
    w = np.exp(scores - scores.max(-1, keepdims=True))
    w = w / w.sum(-1, keepdims=True)
    return merge_heads(w @ v) @ W_o, w


class MultiHeadAttention(nn.Module):
    def __init__(self, d_model, num_heads):
        super().__init__()
        self.h, self.d_head = num_heads, d_model // num_heads
        self.W_q, self.W_k, self.W_v, self.W_o = (nn.Linear(d_model, d_model) for _ in range(4))

    def forward(self, x, mask=None):
        b, t, d = x.shape
        def split(y):
            return y.view(b, t, self.h, self.d_head).transpose(1, 2)          # (B, h, T, d_head)
        q, k, v = split(self.W_q(x)), split(self.W_k(x)), split(self.W_v(x))
        scores = q @ k.transpose(-2, -1) / self.d_head ** 0.5                 # (B, h, T, T)
        if mask is not None:
            scores = scores.masked_fill(torch.as_tensor(mask) == 0, float("-inf"))
        w = torch.softmax(scores, dim=-1)
        out = (w @ v).transpose(1, 2).reshape(b, t, d)                        # (B, T, d_model)
        return self.W_o(out), w
