import torch
import torch.nn.functional as F


def softmax(x, axis=-1):
    return torch.softmax(torch.as_tensor(x, dtype=torch.float64), dim=axis)


def scaled_dot_product_attention(Q, K, V, mask=None):
    q, k, v = (torch.as_tensor(a, dtype=torch.float64) for a in (Q, K, V))
    scores = q @ k.transpose(-2, -1) / k.shape[-1] ** 0.5
    if mask is not None:
        # nn.MultiheadAttention's convention: True means "not allowed"
        scores = scores.masked_fill(torch.as_tensor(mask).bool(), float("-inf"))
    w = torch.softmax(scores, -1)
    return w @ v, w
