"""Attention with explicit Python loops: slow, but every number is visible."""
import math

import numpy as np


def softmax(x, axis=-1):
    x = np.asarray(x, dtype=float)
    moved = np.moveaxis(x, axis, -1)
    flat = moved.reshape(-1, moved.shape[-1])
    out = np.empty_like(flat)
    for r in range(flat.shape[0]):
        row = flat[r]
        biggest = max(row)
        exps = [math.exp(v - biggest) for v in row]
        total = sum(exps)
        for c in range(len(row)):
            out[r, c] = exps[c] / total
    return np.moveaxis(out.reshape(moved.shape), -1, axis)


def scaled_dot_product_attention(Q, K, V, mask=None):
    Q, K, V = (np.asarray(a, dtype=float) for a in (Q, K, V))
    n_q, d_k = Q.shape[-2:]
    n_k, d_v = V.shape[-2:]
    batch = np.broadcast_shapes(Q.shape[:-2], K.shape[:-2], V.shape[:-2])
    Qb = np.broadcast_to(Q, batch + (n_q, d_k)).reshape(-1, n_q, d_k)
    Kb = np.broadcast_to(K, batch + (n_k, d_k)).reshape(-1, n_k, d_k)
    Vb = np.broadcast_to(V, batch + (n_k, d_v)).reshape(-1, n_k, d_v)
    if mask is None:
        allowed = np.ones((Qb.shape[0], n_q, n_k), dtype=bool)
    else:
        allowed = np.broadcast_to(np.asarray(mask) != 0, batch + (n_q, n_k)).reshape(-1, n_q, n_k)
    weights = np.zeros((Qb.shape[0], n_q, n_k))
    output = np.zeros((Qb.shape[0], n_q, d_v))
    for b in range(Qb.shape[0]):
        for i in range(n_q):
            scores = []
            for j in range(n_k):
                dot = 0.0
                for f in range(d_k):
                    dot += Qb[b, i, f] * Kb[b, j, f]
                scores.append(dot / math.sqrt(d_k) if allowed[b, i, j] else -1e9)
            weights[b, i] = softmax(np.array(scores))
            for j in range(n_k):
                output[b, i] += weights[b, i, j] * Vb[b, j]
    return output.reshape(batch + (n_q, d_v)), weights.reshape(batch + (n_q, n_k))
