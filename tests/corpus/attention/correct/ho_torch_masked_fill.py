"""Annotated-Transformer style attention, run in torch and handed back as numpy."""
import math

import numpy as np
import torch


def softmax(x, axis=-1):
    t = torch.as_tensor(np.asarray(x), dtype=torch.float64)
    return torch.softmax(t, dim=axis).numpy()


def attention(query, key, value, mask=None):
    d_k = query.size(-1)
    scores = torch.matmul(query, key.transpose(-2, -1)) / math.sqrt(d_k)
    if mask is not None:
        scores = scores.masked_fill(mask == 0, -1e9)
    p_attn = scores.softmax(dim=-1)
    return torch.matmul(p_attn, value), p_attn


def scaled_dot_product_attention(Q, K, V, mask=None):
    q, k, v = (torch.from_numpy(np.asarray(a, dtype=np.float64)) for a in (Q, K, V))
    m = None if mask is None else torch.from_numpy(np.asarray(mask))
    out, w = attention(q, k, v, m)
    return out.numpy(), w.numpy()
