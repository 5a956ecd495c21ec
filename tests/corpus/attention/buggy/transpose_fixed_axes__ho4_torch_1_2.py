import torch


def softmax(x, axis=-1):
    return torch.softmax(torch.as_tensor(x, dtype=torch.float64), dim=axis)


def scaled_dot_product_attention(Q, K, V, mask=None):
    q, k, v = (torch.as_tensor(a, dtype=torch.float64) for a in (Q, K, V))
    scores = q @ k.transpose(1, 2) / k.shape[-1] ** 0.5        # (batch, n_q, n_k) for 3-D input only
    if mask is not None:
        scores = scores.masked_fill(torch.as_tensor(mask) == 0, float("-inf"))
    w = torch.softmax(scores, dim=-1)
    return w @ v, w
