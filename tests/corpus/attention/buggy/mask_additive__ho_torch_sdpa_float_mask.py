import torch
import torch.nn.functional as F


def softmax(x, axis=-1):
    return torch.softmax(torch.as_tensor(x, dtype=torch.float64), dim=axis)


def scaled_dot_product_attention(Q, K, V, mask=None):
    q, k, v = (torch.as_tensor(a, dtype=torch.float64) for a in (Q, K, V))
    attn_mask = None if mask is None else torch.as_tensor(mask, dtype=torch.float64)  # float mask is ADDED by torch
    scores = q @ k.transpose(-2, -1) / k.shape[-1] ** 0.5
    if attn_mask is not None:
        scores = scores + attn_mask
    weights = torch.softmax(scores, dim=-1)
    out = F.scaled_dot_product_attention(q, k, v, attn_mask=attn_mask)
    return out, weights
