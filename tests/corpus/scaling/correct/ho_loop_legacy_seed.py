import math

import matplotlib.pyplot as plt
import numpy as np


def scaling_experiment(dims=(4, 16, 64, 256), seq_len=4, n_trials=1000, seed=0):
    np.random.seed(seed)
    out = {}
    for d in dims:
        acc = {k: 0.0 for k in ("std_unscaled", "std_scaled", "entropy_unscaled", "entropy_scaled",
                                "max_weight_unscaled", "max_weight_scaled")}
        for _ in range(n_trials):
            Q = np.random.randn(seq_len, d)
            K = np.random.randn(seq_len, d)
            S = Q @ K.T
            for tag, M in (("unscaled", S), ("scaled", S / math.sqrt(d))):
                W = np.exp(M - M.max(axis=1, keepdims=True))
                W /= W.sum(axis=1, keepdims=True)
                acc["std_" + tag] += M.std()
                ent = -(W * np.log(np.clip(W, 1e-300, None))).sum(axis=1)
                acc["entropy_" + tag] += ent.mean()
                acc["max_weight_" + tag] += W.max(axis=1).mean()
        out[d] = {k: v / n_trials for k, v in acc.items()}
    return out


def plot_scaling(results):
    ds = list(results.keys())
    fig, ax = plt.subplots()
    ax.semilogy(ds, [results[d]["std_unscaled"] for d in ds], label="std unscaled")
    ax.semilogy(ds, [results[d]["std_scaled"] for d in ds], label="std scaled")
    ax.semilogy(ds, [results[d]["max_weight_unscaled"] for d in ds], label="max weight unscaled")
    ax.semilogy(ds, [results[d]["max_weight_scaled"] for d in ds], label="max weight scaled")
    ax.set_xscale("log")
    ax.set_xlabel("d_k")
    ax.set_ylabel("statistic")
    ax.set_title("Scaled vs unscaled attention scores")
    ax.legend()
    return fig
