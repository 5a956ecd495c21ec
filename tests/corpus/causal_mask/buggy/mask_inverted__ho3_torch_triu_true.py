import math

import torch


def create_causal_mask(seq_len):
    # True marks the positions to hide (torch's convention)
    return torch.triu(torch.ones(seq_len, seq_len, dtype=torch.bool), diagonal=1).numpy()


def causal_attention(Q, K, V):
    q, k, v = (torch.as_tensor(a) for a in (Q, K, V))
    T = q.shape[-2]
    s = q @ k.transpose(-2, -1) / math.sqrt(q.shape[-1])
    s = s.masked_fill(torch.as_tensor(create_causal_mask(T)), float("-inf"))
    w = torch.softmax(s, dim=-1)
    return w @ v, w
