import math

import torch


def softmax(x, axis=-1):
    t = torch.tensor(x, dtype=torch.float64, requires_grad=True)
    return torch.softmax(t, dim=axis)


def scaled_dot_product_attention(Q, K, V, mask=None):
    q, k, v = (torch.tensor(a, dtype=torch.float64, requires_grad=True) for a in (Q, K, V))
    s = q @ k.transpose(-2, -1) / math.sqrt(k.shape[-1])
    if mask is not None:
        s = s.masked_fill(torch.as_tensor(mask) == 0, -1e9)
    w = torch.softmax(s, dim=-1)
    return w @ v, w
