# The style of the well-known "annotated transformer" tutorial: torch all the way, masked_fill.
import math

import torch


def softmax(x, axis=-1):
    return torch.softmax(torch.as_tensor(x, dtype=torch.float64), dim=axis).numpy()


def scaled_dot_product_attention(Q, K, V, mask=None):
    query, key, value = (torch.as_tensor(a, dtype=torch.float64) for a in (Q, K, V))
    d_k = query.size(-1)
    scores = torch.matmul(query, key.transpose(-2, -1)) / math.sqrt(d_k)
    if mask is not None:
        scores = scores.masked_fill(torch.as_tensor(mask) == 0, -1e9)
    p_attn = scores.softmax(dim=-1)
    return torch.matmul(p_attn, value).numpy(), p_attn.numpy()
