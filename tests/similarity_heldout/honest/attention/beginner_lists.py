import math
import numpy as np


def softmax(x, axis=-1):
    arr = np.array(x, dtype=float)
    arr = np.swapaxes(arr, axis, -1)
    result = np.zeros(arr.shape)
    for index in np.ndindex(arr.shape[:-1]):
        row = arr[index]
        largest = row[0]
        for value in row:
            if value > largest:
                largest = value
        exps = []
        for value in row:
            exps.append(math.exp(value - largest))
        total = 0.0
        for e in exps:
            total = total + e
        for j in range(len(exps)):
            result[index + (j,)] = exps[j] / total
    return np.swapaxes(result, axis, -1)


def attend_one(q_rows, k_rows, v_rows, allowed):
    d = len(q_rows[0])
    weights, outputs = [], []
    for i in range(len(q_rows)):
        scores = []
        for j in range(len(k_rows)):
            s = 0.0
            for t in range(d):
                s = s + q_rows[i][t] * k_rows[j][t]
            s = s / math.sqrt(d)
            if allowed is not None and not allowed[i][j]:
                s = -1e9
            scores.append(s)
        w = softmax(np.array(scores))
        weights.append(list(w))
        out = [0.0] * len(v_rows[0])
        for j in range(len(v_rows)):
            for t in range(len(v_rows[0])):
                out[t] = out[t] + w[j] * v_rows[j][t]
        outputs.append(out)
    return outputs, weights


def scaled_dot_product_attention(Q, K, V, mask=None):
    Q, K, V = np.array(Q, dtype=float), np.array(K, dtype=float), np.array(V, dtype=float)
    lead = np.broadcast_shapes(Q.shape[:-2], K.shape[:-2], V.shape[:-2])
    if mask is not None:
        mask = np.array(mask)
        lead = np.broadcast_shapes(lead, mask.shape[:-2])
        mask = np.broadcast_to(mask, lead + (Q.shape[-2], K.shape[-2]))
    Q = np.broadcast_to(Q, lead + Q.shape[-2:])
    K = np.broadcast_to(K, lead + K.shape[-2:])
    V = np.broadcast_to(V, lead + V.shape[-2:])
    all_out = np.zeros(lead + (Q.shape[-2], V.shape[-1]))
    all_w = np.zeros(lead + (Q.shape[-2], K.shape[-2]))
    for index in np.ndindex(lead):
        allowed = None if mask is None else mask[index]
        out, w = attend_one(Q[index], K[index], V[index], allowed)
        all_out[index] = out
        all_w[index] = w
    return all_out, all_w
