import math

import torch
from torch.nn import functional as F


def softmax(x, axis=-1):
    return F.softmax(torch.tensor(x, dtype=torch.float64), dim=axis)


def scaled_dot_product_attention(Q, K, V, mask=None):
    q = torch.tensor(Q, dtype=torch.float64)
    k = torch.tensor(K, dtype=torch.float64)
    v = torch.tensor(V, dtype=torch.float64)
    # manual implementation of attention, as in nanoGPT's CausalSelfAttention
    att = (q @ k.transpose(-2, -1)) * (1.0 / math.sqrt(k.size(-1)))
    if mask is not None:
        att = att.masked_fill(torch.tensor(mask) == 0, float('-inf'))
    att = F.softmax(att, dim=-1)
    y = att @ v  # (..., T, T) x (..., T, hs) -> (..., T, hs)
    return y, att
