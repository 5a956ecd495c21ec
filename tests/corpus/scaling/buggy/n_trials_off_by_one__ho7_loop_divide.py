import math

import matplotlib.pyplot as plt
import numpy as np


def scaling_experiment(dims=(4, 16, 64, 256), seq_len=4, n_trials=1000, seed=0):
    rng = np.random.default_rng(seed)
    out = {}
    for d in dims:
        sums = dict.fromkeys(("std_unscaled", "std_scaled", "entropy_unscaled", "entropy_scaled",
                              "max_weight_unscaled", "max_weight_scaled"), 0.0)
        for trial in range(1, n_trials):            # one short
            Q = rng.normal(size=(seq_len, d))
            K = rng.normal(size=(seq_len, d))
            S = Q @ K.T
            for tag, M in (("unscaled", S), ("scaled", S / math.sqrt(d))):
                W = np.exp(M - M.max(1, keepdims=True))
                W /= W.sum(1, keepdims=True)
                sums["std_" + tag] += M.std()
                sums["entropy_" + tag] += float(-(W * np.log(W)).sum(1).mean())
                sums["max_weight_" + tag] += float(W.max(1).mean())
        out[d] = {k: v / (n_trials - 1) for k, v in sums.items()}
    return out


def plot_scaling(results):
    ds = sorted(results)
    fig, ax = plt.subplots()
    ax.plot(ds, [results[d]["entropy_unscaled"] for d in ds], label="unscaled")
    ax.plot(ds, [results[d]["entropy_scaled"] for d in ds], label="scaled")
    ax.set_xlabel("d"); ax.set_ylabel("entropy"); ax.set_title("entropy vs d"); ax.legend()
    return fig
