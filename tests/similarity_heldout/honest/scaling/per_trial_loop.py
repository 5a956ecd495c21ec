import math

import matplotlib.pyplot as plt
import numpy as np


def row_softmax(m):
    out = np.empty_like(m)
    for r in range(m.shape[0]):
        e = np.exp(m[r] - m[r].max())
        out[r] = e / e.sum()
    return out


def entropy_of_rows(w):
    total = 0.0
    for row in w:
        total += -sum(p * math.log(p) for p in row if p > 0)
    return total / len(w)


def scaling_experiment(dims=(4, 16, 64, 256), seq_len=4, n_trials=1000, seed=0):
    rng = np.random.default_rng(seed)
    out = {}
    for d in dims:
        sums = {"std_unscaled": 0.0, "std_scaled": 0.0, "entropy_unscaled": 0.0, "entropy_scaled": 0.0,
                "max_weight_unscaled": 0.0, "max_weight_scaled": 0.0}
        for trial in range(n_trials):
            Q = rng.normal(0.0, 1.0, size=(seq_len, d))
            K = rng.normal(0.0, 1.0, size=(seq_len, d))
            raw = Q @ K.T
            for label, S in (("unscaled", raw), ("scaled", raw / math.sqrt(d))):
                W = row_softmax(S)
                sums["std_" + label] += S.std()
                sums["entropy_" + label] += entropy_of_rows(W)
                sums["max_weight_" + label] += W.max(axis=1).mean()
        out[d] = {name: float(total / n_trials) for name, total in sums.items()}
    return out


def plot_scaling(results):
    xs = sorted(results)
    fig = plt.figure(figsize=(6, 4))
    plt.plot(xs, [results[x]["max_weight_unscaled"] for x in xs], "r-o", label="max weight, unscaled")
    plt.plot(xs, [results[x]["max_weight_scaled"] for x in xs], "b-o", label="max weight, scaled")
    plt.xlabel("d")
    plt.ylabel("max weight")
    plt.title("Largest attention weight as d grows")
    plt.legend()
    return fig
