"""Adapted from Raschka's MultiHeadAttention (LLMs from scratch, ch. 3) to the contract's names."""
import numpy as np
import torch
import torch.nn as nn


def split_heads(x, num_heads):
    b, num_tokens, d_out = x.shape
    return x.reshape(b, num_tokens, num_heads, d_out // num_heads).transpose(0, 2, 1, 3)


def merge_heads(x):
    b, num_heads, num_tokens, head_dim = x.shape
    return x.transpose(0, 2, 1, 3).reshape(b, num_tokens, num_heads * head_dim)


def multi_head_attention(X, W_q, W_k, W_v, W_o, num_heads, mask=None):
    queries, keys, values = (split_heads(X @ W, num_heads) for W in (W_q, W_k, W_v))
    attn_scores = queries @ keys.transpose(0, 1, 3, 2)
    if mask is not None:
        attn_scores = np.where(np.asarray(mask, dtype=bool), attn_scores, -np.inf)
    attn_scores = attn_scores / keys.shape[-1] ** 0.5
    attn_scores = attn_scores - attn_scores.max(-1, keepdims=True)
    attn_weights = np.exp(attn_scores)
    attn_weights /= attn_weights.sum(-1, keepdims=True)
    return merge_heads(attn_weights @ values) @ W_o, attn_weights


class MultiHeadAttention(nn.Module):
    def __init__(self, d_model, num_heads, dropout=0.0, qkv_bias=True):
        super().__init__()
        assert d_model % num_heads == 0, "d_out must be divisible by num_heads"
        self.d_out = d_model
        self.num_heads = num_heads
        self.head_dim = d_model // num_heads
        self.W_q = nn.Linear(d_model, d_model, bias=qkv_bias)
        self.W_k = nn.Linear(d_model, d_model, bias=qkv_bias)
        self.W_v = nn.Linear(d_model, d_model, bias=qkv_bias)
        self.W_o = nn.Linear(d_model, d_model)
        self.dropout = nn.Dropout(dropout)

    def forward(self, x, mask=None):
        b, num_tokens, d_in = x.shape
        keys = self.W_k(x).view(b, num_tokens, self.num_heads, self.head_dim).transpose(1, 2)
        queries = self.W_q(x).view(b, num_tokens, self.num_heads, self.head_dim).transpose(1, 2)
        values = self.W_v(x).view(b, num_tokens, self.num_heads, self.head_dim).transpose(1, 2)
        attn_scores = queries @ keys.transpose(2, 3)
        if mask is not None:
            attn_scores = attn_scores.masked_fill(torch.as_tensor(mask) == 0, -torch.inf)
        attn_weights = torch.softmax(attn_scores / keys.shape[-1] ** 0.5, dim=-1)
        attn_weights = self.dropout(attn_weights)
        context_vec = (attn_weights @ values).transpose(1, 2)
        context_vec = context_vec.contiguous().view(b, num_tokens, self.d_out)
        return self.W_o(context_vec), attn_weights
