import torch
import torch.nn.functional as F


def softmax(x, axis=-1):
    t = torch.tensor(x, dtype=torch.float64)
    return F.softmax(t, dim=axis)


def scaled_dot_product_attention(Q, K, V, mask=None):
    q = torch.tensor(Q, dtype=torch.float64)
    k = torch.tensor(K, dtype=torch.float64)
    v = torch.tensor(V, dtype=torch.float64)
    scores = q @ k.transpose(-2, -1) / k.shape[-1] ** 0.5
    attn_mask = None
    if mask is not None:
        attn_mask = torch.as_tensor(mask).bool()
        scores = scores.masked_fill(~attn_mask, float("-inf"))
    weights = torch.softmax(scores, dim=-1)
    out = F.scaled_dot_product_attention(q, k, v, attn_mask=attn_mask)
    return out.tolist(), weights.tolist()
