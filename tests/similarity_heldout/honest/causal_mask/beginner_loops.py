import math
import numpy as np


def create_causal_mask(seq_len):
    mask = []
    for i in range(seq_len):
        row = []
        for j in range(seq_len):
            if j <= i:
                row.append(1)
            else:
                row.append(0)
        mask.append(row)
    return np.array(mask)


def causal_attention(Q, K, V):
    Q = np.array(Q, dtype=float)
    K = np.array(K, dtype=float)
    V = np.array(V, dtype=float)
    T = Q.shape[-2]
    d = Q.shape[-1]
    lead = np.broadcast_shapes(Q.shape[:-2], K.shape[:-2], V.shape[:-2])
    Q = np.broadcast_to(Q, lead + (T, d))
    K = np.broadcast_to(K, lead + (T, d))
    V = np.broadcast_to(V, lead + V.shape[-2:])
    weights = np.zeros(lead + (T, T))
    output = np.zeros(lead + (T, V.shape[-1]))
    for idx in np.ndindex(*lead):
        for i in range(T):
            # only keys 0..i are visible to query i
            scores = [float(np.dot(Q[idx][i], K[idx][j])) / math.sqrt(d) for j in range(i + 1)]
            top = max(scores)
            exps = [math.exp(s - top) for s in scores]
            total = sum(exps)
            for j in range(i + 1):
                weights[idx + (i, j)] = exps[j] / total
                output[idx + (i,)] += weights[idx + (i, j)] * V[idx][j]
    return output, weights
