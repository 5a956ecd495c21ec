import torch
import torch.nn.functional as F
from torch import nn


def split_heads(x, num_heads):
    t = torch.as_tensor(x)
    b, s, d = t.shape
    return t.view(b, s, num_heads, d // num_heads).permute(0, 2, 1, 3).contiguous()


def merge_heads(x):
    t = torch.as_tensor(x)
    b, h, s, dh = t.shape
    return t.permute(0, 2, 1, 3).reshape(b, s, h * dh)


def _attend(q, k, v, mask):
    scale = q.shape[-1] ** -0.5
    scores = torch.matmul(q, k.transpose(-1, -2)) * scale
    if mask is not None:
        scores = scores.masked_fill(torch.logical_not(mask.bool()), torch.finfo(scores.dtype).min)
    return torch.softmax(scores, -1)


def multi_head_attention(X, W_q, W_k, W_v, W_o, num_heads, mask=None):
    X = torch.as_tensor(X, dtype=torch.float64)
    W_q, W_k, W_v, W_o = (torch.as_tensor(w, dtype=torch.float64) for w in (W_q, W_k, W_v, W_o))
    q, k, v = (split_heads(X @ w, num_heads) for w in (W_q, W_k, W_v))
    m = None if mask is None else torch.as_tensor(mask)
    w = _attend(q, k, v, m)
    return merge_heads(w @ v) @ W_o, w


class MultiHeadAttention(nn.Module):
    def __init__(self, d_model, num_heads):
        super().__init__()
        self.h = num_heads
        self.W_q, self.W_k, self.W_v, self.W_o = (nn.Linear(d_model, d_model) for _ in range(4))

    def forward(self, x, mask=None):
        q, k, v = (split_heads(layer(x), self.h) for layer in (self.W_q, self.W_k, self.W_v))
        m = None if mask is None else torch.as_tensor(mask).bool()
        out = F.scaled_dot_product_attention(q, k, v, attn_mask=m)
        weights = _attend(q, k, v, m)
        return self.W_o(merge_heads(out)), weights
