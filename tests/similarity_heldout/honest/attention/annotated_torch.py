# Ported from The Annotated Transformer (its `attention` function), kept in torch.
import math

import numpy as np
import torch
import torch.nn.functional as F


def attention(query, key, value, mask=None):
    "Compute 'Scaled Dot Product Attention'"
    d_k = query.size(-1)
    scores = torch.matmul(query, key.transpose(-2, -1)) / math.sqrt(d_k)
    if mask is not None:
        scores = scores.masked_fill(mask == 0, -1e9)
    p_attn = F.softmax(scores, dim=-1)
    return torch.matmul(p_attn, value), p_attn


def softmax(x, axis=-1):
    t = torch.from_numpy(np.array(x, dtype=np.float64, copy=True))
    return F.softmax(t, dim=axis).numpy()


def scaled_dot_product_attention(Q, K, V, mask=None):
    query, key, value = [torch.from_numpy(np.array(a, dtype=np.float64, copy=True)) for a in (Q, K, V)]
    if mask is not None:
        mask = torch.from_numpy(np.array(mask, copy=True))
    out, p_attn = attention(query, key, value, mask=mask)
    return out.numpy(), p_attn.numpy()
