import math


def _lse(row):
    m = max(row)
    return m + math.log(sum(math.exp(v - m) for v in row))


def softmax(x, axis=-1):
    import numpy as np
    a = np.moveaxis(np.asarray(x, dtype=float), axis, -1)
    flat = a.reshape(-1, a.shape[-1])
    out = [[math.exp(v - _lse(list(r))) for v in r] for r in flat]
    return np.moveaxis(np.array(out).reshape(a.shape), -1, axis).tolist()


def scaled_dot_product_attention(Q, K, V, mask=None):
    import numpy as np
    Q, K, V = map(np.asarray, (Q, K, V))
    scores = np.matmul(Q, np.swapaxes(K, -2, -1)) * (1.0 / math.sqrt(Q.shape[-1]))
    if mask is not None:
        scores = scores + np.where(np.asarray(mask).astype(bool), 0.0, -1e9)
    weights = np.asarray(softmax(scores, axis=-1))
    return (weights @ V).tolist(), weights.tolist()
