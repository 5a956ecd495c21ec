import math

import torch


def softmax(x, axis=-1):
    t = torch.as_tensor(x, dtype=torch.float64)
    e = torch.exp(t - t.max(dim=axis, keepdim=True).values)
    return (e / e.sum(dim=axis)).numpy()


def scaled_dot_product_attention(Q, K, V, mask=None):
    q, k, v = (torch.as_tensor(a, dtype=torch.float64) for a in (Q, K, V))
    s = q @ k.transpose(-2, -1) / math.sqrt(q.shape[-1])
    if mask is not None:
        s = s.masked_fill(torch.as_tensor(mask) == 0, -1e9)
    w = torch.as_tensor(softmax(s.numpy(), axis=-1))
    return (w @ v).numpy(), w.numpy()
