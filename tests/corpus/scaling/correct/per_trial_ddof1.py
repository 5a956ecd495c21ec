"""One trial at a time with the legacy RandomState; std per trial (ddof=1), then averaged."""
import math

import numpy as np
from matplotlib.figure import Figure


def softmax_rows(m):
    m = m - m.max(axis=1, keepdims=True)
    e = np.exp(m)
    return e / e.sum(axis=1, keepdims=True)


def row_entropy(w):
    total = 0.0
    for row in w:
        total += -sum(p * math.log(p) for p in row if p > 0)
    return total / len(w)


def scaling_experiment(dims=(4, 16, 64, 256), seq_len=4, n_trials=1000, seed=0):
    rs = np.random.RandomState(seed)
    out = {}
    for d in dims:
        acc = {k: 0.0 for k in ("std_unscaled", "std_scaled", "entropy_unscaled", "entropy_scaled",
                                "max_weight_unscaled", "max_weight_scaled")}
        for _ in range(n_trials):
            q = rs.randn(seq_len, d)
            k = rs.randn(seq_len, d)
            s = q @ k.T
            for name, scores in (("unscaled", s), ("scaled", s / math.sqrt(d))):
                w = softmax_rows(scores)
                acc[f"std_{name}"] += scores.std(ddof=1)
                acc[f"entropy_{name}"] += row_entropy(w)
                acc[f"max_weight_{name}"] += w.max(axis=1).mean()
        out[d] = {k: v / n_trials for k, v in acc.items()}
    return out


def plot_scaling(results):
    dims = sorted(results)
    fig = Figure()
    ax = fig.add_subplot()
    for key, label in (("entropy_unscaled", "entropy, unscaled"), ("entropy_scaled", "entropy, scaled")):
        ax.plot(dims, [results[d][key] for d in dims], marker="o", label=label)
    ax.set_xlabel("dimension d")
    ax.set_ylabel("mean row entropy (nats)")
    ax.set_title("Softmax entropy against d")
    return fig
