import numpy as np


def softmax(x, axis=-1):
    x = np.moveaxis(np.array(x, dtype=float), axis, -1)
    out = np.empty_like(x)
    for idx in np.ndindex(*x.shape[:-1]):
        row = x[idx]
        e = np.exp(row - row.max())
        out[idx] = e / e.sum()
    return np.moveaxis(out, -1, axis)


def _one(q, k, v, m):
    # q (n_q, d), k (n_k, d), v (n_k, d_v), m (n_q, n_k) or None
    s = q @ k.T / np.sqrt(q.shape[-1])
    if m is not None:
        s = s.copy()
        s[m == 0] = -1e9
    w = softmax(s, axis=-1)
    return w @ v, w


def scaled_dot_product_attention(Q, K, V, mask=None):
    Q, K, V = np.asarray(Q), np.asarray(K), np.asarray(V)
    lead = np.broadcast_shapes(Q.shape[:-2], K.shape[:-2], V.shape[:-2])
    n_q, n_k = Q.shape[-2], K.shape[-2]
    if mask is not None:
        mask = np.broadcast_to(np.asarray(mask), lead + (n_q, n_k))
    Qb = np.broadcast_to(Q, lead + Q.shape[-2:])
    Kb = np.broadcast_to(K, lead + K.shape[-2:])
    Vb = np.broadcast_to(V, lead + V.shape[-2:])
    out = np.zeros(lead + (n_q, V.shape[-1]))
    weights = np.zeros(lead + (n_q, n_k))
    for idx in np.ndindex(*lead):
        o, w = _one(Qb[idx], Kb[idx], Vb[idx], None if mask is None else mask[idx])
        out[idx] = o
        weights[idx] = w
    return out, weights
