"""Every product an einsum, even the projections; torch.einsum in the module."""
import numpy as np
import torch
from torch import nn


def split_heads(x, num_heads):
    b, t, d = x.shape
    return np.einsum("bthe->bhte", np.reshape(x, (b, t, num_heads, d // num_heads)))


def merge_heads(x):
    b, h, t, e = x.shape
    return np.reshape(np.einsum("bhte->bthe", x), (b, t, h * e))


def multi_head_attention(X, W_q, W_k, W_v, W_o, num_heads, mask=None):
    X = np.asarray(X, dtype=float)
    q, k, v = (split_heads(np.einsum("btd,de->bte", X, np.asarray(W, dtype=float)), num_heads)
               for W in (W_q, W_k, W_v))
    logits = np.einsum("bhqe,bhke->bhqk", q, k) / np.sqrt(q.shape[-1])
    if mask is not None:
        logits = np.where(np.asarray(mask).astype(bool), logits, -np.inf)
    logits = logits - logits.max(axis=-1, keepdims=True)
    probs = np.exp(logits)
    probs /= probs.sum(axis=-1, keepdims=True)
    heads = np.einsum("bhqk,bhke->bhqe", probs, v)
    return np.einsum("btd,de->bte", merge_heads(heads), np.asarray(W_o, dtype=float)), probs


class MultiHeadAttention(nn.Module):
    def __init__(self, d_model, num_heads):
        super().__init__()
        self.heads = num_heads
        self.W_q, self.W_k, self.W_v, self.W_o = (nn.Linear(d_model, d_model) for _ in range(4))

    def forward(self, x, mask=None):
        b, t, d = x.shape
        q, k, v = (layer(x).reshape(b, t, self.heads, d // self.heads) for layer in (self.W_q, self.W_k, self.W_v))
        logits = torch.einsum("bqhe,bkhe->bhqk", q, k) / (d // self.heads) ** 0.5
        if mask is not None:
            logits = torch.where(torch.as_tensor(mask).bool(), logits, torch.tensor(float("-inf")))
        probs = logits.softmax(-1)
        heads = torch.einsum("bhqk,bkhe->bqhe", probs, v)
        return self.W_o(heads.reshape(b, t, d)), probs
