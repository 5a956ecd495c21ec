# nanoGPT keeps a lower-triangular `bias` buffer and masks the attention matrix with it.
import math

import torch
from torch.nn import functional as F

block_size = 64
bias = torch.tril(torch.ones(block_size, block_size)).view(1, 1, block_size, block_size)


def create_causal_mask(seq_len):
    if seq_len <= block_size:
        return bias[0, 0, :seq_len, :seq_len].bool()
    return torch.tril(torch.ones(seq_len, seq_len)).bool()


def causal_attention(Q, K, V):
    q, k, v = (torch.as_tensor(t).double() for t in (Q, K, V))
    T = q.size(-2)
    att = (q @ k.transpose(-2, -1)) * (1.0 / math.sqrt(k.size(-1)))
    att = att.masked_fill(~create_causal_mask(T), float('-inf'))
    att = F.softmax(att, dim=-1)
    return att @ v, att
