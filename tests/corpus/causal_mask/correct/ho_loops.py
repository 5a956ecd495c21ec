import math


def create_causal_mask(seq_len):
    return [[1 if j <= i else 0 for j in range(seq_len)] for i in range(seq_len)]


def _attend(q, k, v):
    n = len(q)
    d = len(q[0])
    out, weights = [], []
    for i in range(n):
        s = [sum(q[i][t] * k[j][t] for t in range(d)) / math.sqrt(d) for j in range(i + 1)]
        m = max(s)
        e = [math.exp(x - m) for x in s]
        tot = sum(e)
        row = [x / tot for x in e] + [0.0] * (n - i - 1)
        weights.append(row)
        out.append([sum(row[j] * v[j][c] for j in range(n)) for c in range(len(v[0]))])
    return out, weights


def causal_attention(Q, K, V):
    import numpy as np
    Q, K, V = np.asarray(Q), np.asarray(K), np.asarray(V)
    if Q.ndim == 2:
        return _attend(Q.tolist(), K.tolist(), V.tolist())
    outs, ws = [], []
    for q, k, v in zip(Q, K, V):
        o, w = causal_attention(q, k, v)
        outs.append(o)
        ws.append(w)
    return np.array(outs), np.array(ws)
