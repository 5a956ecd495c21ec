import math

import torch


def create_causal_mask(seq_len):
    return torch.ones(seq_len, seq_len, dtype=torch.bool).tril()


def causal_attention(Q, K, V):
    q, k, v = (torch.as_tensor(a) for a in (Q, K, V))
    T = q.shape[-2]
    scores = torch.einsum("...id,...jd->...ij", q, k) / math.sqrt(q.shape[-1])
    scores = scores.masked_fill(~create_causal_mask(T), -math.inf)
    w = scores.softmax(-1)
    return w @ v, w
