import math
import numpy as np
import torch


def split_heads(x, num_heads):
    x = np.array(x)
    batch, seq, d_model = x.shape
    size = d_model // num_heads
    heads = []
    for h in range(num_heads):
        heads.append(x[:, :, h * size:(h + 1) * size])
    return np.stack(heads, axis=1)


def merge_heads(x):
    x = np.array(x)
    pieces = []
    for h in range(x.shape[1]):
        pieces.append(x[:, h, :, :])
    return np.concatenate(pieces, axis=-1)


def softmax_rows(scores):
    biggest = np.max(scores, axis=-1, keepdims=True)
    e = np.exp(scores - biggest)
    return e / np.sum(e, axis=-1, keepdims=True)


def multi_head_attention(X, W_q, W_k, W_v, W_o, num_heads, mask=None):
    X = np.array(X, dtype=float)
    batch, seq, d_model = X.shape
    size = d_model // num_heads
    Q = split_heads(np.matmul(X, W_q), num_heads)
    K = split_heads(np.matmul(X, W_k), num_heads)
    V = split_heads(np.matmul(X, W_v), num_heads)
    if mask is not None:
        mask = np.broadcast_to(np.array(mask), (batch, num_heads, seq, seq))
    all_weights = np.zeros((batch, num_heads, seq, seq))
    results = np.zeros((batch, num_heads, seq, size))
    for b in range(batch):
        for h in range(num_heads):
            scores = np.matmul(Q[b, h], K[b, h].T) / math.sqrt(size)
            if mask is not None:
                scores[mask[b, h] == 0] = -1e9
            w = softmax_rows(scores)
            all_weights[b, h] = w
            results[b, h] = np.matmul(w, V[b, h])
    return np.matmul(merge_heads(results), W_o), all_weights


class MultiHeadAttention(torch.nn.Module):
    def __init__(self, d_model, num_heads):
        super().__init__()
        self.num_heads = num_heads
        self.head_size = d_model // num_heads
        self.W_q = torch.nn.Linear(d_model, d_model)
        self.W_k = torch.nn.Linear(d_model, d_model)
        self.W_v = torch.nn.Linear(d_model, d_model)
        self.W_o = torch.nn.Linear(d_model, d_model)

    def forward(self, x, mask=None):
        batch, seq, d_model = x.shape
        Q, K, V = self.W_q(x), self.W_k(x), self.W_v(x)
        if mask is not None:
            mask = torch.as_tensor(mask).expand(batch, self.num_heads, seq, seq)
        outputs, weights = [], []
        for h in range(self.num_heads):
            part = slice(h * self.head_size, (h + 1) * self.head_size)
            scores = Q[:, :, part] @ K[:, :, part].transpose(1, 2) / math.sqrt(self.head_size)
            if mask is not None:
                scores = scores.masked_fill(mask[:, h] == 0, -1e9)
            w = torch.softmax(scores, dim=-1)
            weights.append(w)
            outputs.append(w @ V[:, :, part])
        return self.W_o(torch.cat(outputs, dim=-1)), torch.stack(weights, dim=1)
