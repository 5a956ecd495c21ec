"""Causal attention as in nanoGPT's CausalSelfAttention, one head, no dropout."""
import math

import torch
import torch.nn.functional as F


def create_causal_mask(seq_len):
    return torch.tril(torch.ones(seq_len, seq_len)).numpy()


def causal_attention(Q, K, V):
    q = torch.as_tensor(Q, dtype=torch.float64)
    k = torch.as_tensor(K, dtype=torch.float64)
    v = torch.as_tensor(V, dtype=torch.float64)
    T = q.size(-2)
    bias = torch.tril(torch.ones(T, T)).view(1, 1, T, T)
    att = (q @ k.transpose(-2, -1)) * (1.0 / math.sqrt(k.size(-1)))
    att = att.masked_fill(bias[0, 0, :T, :T] == 0, float("-inf"))
    att = F.softmax(att, dim=-1)
    y = att @ v
    return y, att
