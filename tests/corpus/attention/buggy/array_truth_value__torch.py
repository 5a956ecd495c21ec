import math

import torch


def softmax(x, axis=-1):
    return torch.softmax(torch.as_tensor(x), dim=axis).numpy()


def scaled_dot_product_attention(Q, K, V, mask=None):
    q, k, v = torch.as_tensor(Q), torch.as_tensor(K), torch.as_tensor(V)
    scores = q @ k.transpose(-2, -1) / math.sqrt(q.shape[-1])
    mask = None if mask is None else torch.as_tensor(mask)
    if mask:
        scores = scores.masked_fill(mask == 0, float("-inf"))
    w = torch.softmax(scores, dim=-1)
    return (w @ v).numpy(), w.numpy()
