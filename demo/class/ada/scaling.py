import math

import matplotlib.pyplot as plt
import numpy as np


def _softmax(s):
    e = np.exp(s - s.max(axis=-1, keepdims=True))
    return e / e.sum(axis=-1, keepdims=True)


def _stats(scores):
    w = _softmax(scores)
    entropy = -(w * np.log(w + 1e-30)).sum(axis=-1).mean()
    return scores.std(), entropy, w.max(axis=-1).mean()


def scaling_experiment(dims=(4, 16, 64, 256), seq_len=4, n_trials=1000, seed=0):
    rng = np.random.default_rng(seed)
    results = {}
    for d in dims:
        Q = rng.standard_normal((n_trials, seq_len, d))
        K = rng.standard_normal((n_trials, seq_len, d))
        raw = Q @ K.transpose(0, 2, 1)
        su, eu, mu = _stats(raw)
        ss, es, ms = _stats(raw / math.sqrt(d))
        results[d] = {"std_unscaled": float(su), "std_scaled": float(ss),
                      "entropy_unscaled": float(eu), "entropy_scaled": float(es),
                      "max_weight_unscaled": float(mu), "max_weight_scaled": float(ms)}
    return results


def plot_scaling(results):
    dims = sorted(results)
    fig, ax = plt.subplots()
    ax.plot(dims, [results[d]["entropy_unscaled"] for d in dims], "o-", label="entropy, unscaled")
    ax.plot(dims, [results[d]["entropy_scaled"] for d in dims], "s-", label="entropy, scaled")
    ax.set_xscale("log", base=2)
    ax.set_xlabel("d_k")
    ax.set_ylabel("mean row entropy (nats)")
    ax.legend()
    return fig
