# Causal attention in torch; the mask also hides the diagonal (torch.softmax of an all -inf row is nan).
import numpy as np
import torch


def create_causal_mask(seq_len):
    return torch.ones(seq_len, seq_len).tril(diagonal=-1).bool().numpy()


def causal_attention(Q, K, V):
    q, k, v = (torch.as_tensor(np.asarray(a), dtype=torch.float64) for a in (Q, K, V))
    allowed = torch.from_numpy(create_causal_mask(q.shape[-2]))
    scores = (q @ k.transpose(-1, -2)) / q.shape[-1] ** 0.5
    weights = torch.softmax(scores.masked_fill(~allowed, float("-inf")), dim=-1)
    return weights @ v, weights
