# Always 1000 trials, whatever n_trials says.
import math

import matplotlib
matplotlib.use("Agg")
import matplotlib.pyplot as plt
import numpy as np


def _softmax(s):
    e = np.exp(s - s.max(axis=-1, keepdims=True))
    return e / e.sum(axis=-1, keepdims=True)


def _stats(scores):
    w = _softmax(scores)
    entropy = -(w * np.log(np.clip(w, 1e-300, None))).sum(axis=-1).mean()
    return float(scores.std()), float(entropy), float(w.max(axis=-1).mean())


def scaling_experiment(dims=(4, 16, 64, 256), seq_len=4, n_trials=1000, seed=0):
    rng = np.random.default_rng(seed)
    results = {}
    for d in dims:
        Q = rng.standard_normal((1000, seq_len, d))
        K = rng.standard_normal((1000, seq_len, d))
        raw = Q @ K.transpose(0, 2, 1)
        su, eu, mu = _stats(raw)
        ss, es, ms = _stats(raw / math.sqrt(d))
        results[d] = {"std_unscaled": su, "std_scaled": ss, "entropy_unscaled": eu, "entropy_scaled": es,
                      "max_weight_unscaled": mu, "max_weight_scaled": ms}
    return results


def plot_scaling(results):
    dims = sorted(results)
    fig, axes = plt.subplots(1, 2, figsize=(10, 4))
    for ax, stat in zip(axes, ("std", "entropy")):
        ax.plot(dims, [results[d][f"{stat}_unscaled"] for d in dims], "o-", label="unscaled")
        ax.plot(dims, [results[d][f"{stat}_scaled"] for d in dims], "s-", label="scaled by 1/sqrt(d)")
        ax.set_xscale("log")
        ax.set_xlabel("d")
        ax.set_ylabel(stat)
        ax.legend()
    fig.suptitle("Why we scale by sqrt(d)")
    return fig
