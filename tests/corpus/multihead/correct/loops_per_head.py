"""One head at a time, with the kit's attention for the numpy version."""
import numpy as np
import torch

from attention import scaled_dot_product_attention


def split_heads(x, num_heads):
    x = np.asarray(x)
    d_head = x.shape[-1] // num_heads
    return np.stack([x[:, :, h * d_head:(h + 1) * d_head] for h in range(num_heads)], axis=1)


def merge_heads(x):
    x = np.asarray(x)
    return np.concatenate([x[:, h] for h in range(x.shape[1])], axis=-1)


def multi_head_attention(X, W_q, W_k, W_v, W_o, num_heads, mask=None):
    X = np.asarray(X)
    Q, K, V = split_heads(X @ W_q, num_heads), split_heads(X @ W_k, num_heads), split_heads(X @ W_v, num_heads)
    outs, weights = [], []
    m = None if mask is None else np.broadcast_to(mask, (X.shape[0], num_heads, X.shape[1], X.shape[1]))
    for h in range(num_heads):
        o, w = scaled_dot_product_attention(Q[:, h], K[:, h], V[:, h], None if m is None else m[:, h])
        outs.append(o)
        weights.append(w)
    return merge_heads(np.stack(outs, axis=1)) @ W_o, np.stack(weights, axis=1)


class MultiHeadAttention(torch.nn.Module):
    def __init__(self, d_model, num_heads):
        super().__init__()
        self.num_heads = num_heads
        self.W_q, self.W_k, self.W_v, self.W_o = (torch.nn.Linear(d_model, d_model) for _ in range(4))

    def forward(self, x, mask=None):
        d_head = x.shape[-1] // self.num_heads
        q, k, v = self.W_q(x), self.W_k(x), self.W_v(x)
        B, T, _ = x.shape
        if mask is not None:   # one (B, T, T) mask per head, whatever shape it broadcasts from
            mask = torch.as_tensor(mask).bool().expand(B, self.num_heads, T, T)
        head_outputs, head_weights = [], []
        for h in range(self.num_heads):
            cols = slice(h * d_head, (h + 1) * d_head)
            s = q[..., cols] @ k[..., cols].transpose(-1, -2) / d_head ** 0.5
            if mask is not None:
                s = torch.where(mask[:, h], s, torch.tensor(-1e9, dtype=s.dtype))
            w = s.softmax(dim=-1)
            head_weights.append(w)
            head_outputs.append(w @ v[..., cols])
        return self.W_o(torch.cat(head_outputs, dim=-1)), torch.stack(head_weights, dim=1)
