"""Scores drawn the way the Annotated Transformer motivates the scaling: q . k for random unit-variance
vectors has variance d. Statistics gathered with numpy, plotted with matplotlib's object API."""
import math

import numpy as np
import matplotlib.pyplot as plt


def _trial_stats(rng, seq_len, d):
    q = rng.standard_normal((seq_len, d))
    k = rng.standard_normal((seq_len, d))
    scores = np.dot(q, k.T)
    stats = {}
    for name, s in (("unscaled", scores), ("scaled", scores / math.sqrt(d))):
        p = np.exp(s - s.max(axis=1)[:, None])
        p = p / p.sum(axis=1)[:, None]
        nz = np.where(p > 0, p, 1.0)
        stats[name] = (s.std(), -(p * np.log(nz)).sum(axis=1).mean(), p.max(axis=1).mean())
    return stats


def scaling_experiment(dims=(4, 16, 64, 256), seq_len=4, n_trials=1000, seed=0):
    rng = np.random.default_rng(seed)
    results = {}
    for d in dims:
        acc = np.zeros((2, 3))
        for _ in range(n_trials):
            s = _trial_stats(rng, seq_len, d)
            acc[0] += s["unscaled"]
            acc[1] += s["scaled"]
        acc /= n_trials
        results[d] = {f"{stat}_{name}": float(acc[i, j])
                      for i, name in enumerate(("unscaled", "scaled"))
                      for j, stat in enumerate(("std", "entropy", "max_weight"))}
    return results


def plot_scaling(results):
    d = sorted(results)
    fig, (left, right) = plt.subplots(1, 2, figsize=(10, 4))
    left.loglog(d, [results[x]["std_unscaled"] for x in d], "o-", label="unscaled")
    left.loglog(d, [results[x]["std_scaled"] for x in d], "o-", label="scaled")
    left.set_xlabel("d")
    left.set_ylabel("std of q.k")
    left.legend()
    right.semilogx(d, [results[x]["entropy_unscaled"] for x in d], "o-", label="unscaled")
    right.semilogx(d, [results[x]["entropy_scaled"] for x in d], "o-", label="scaled")
    right.set_xlabel("d")
    right.set_ylabel("entropy")
    right.legend()
    fig.suptitle("Annotated Transformer: why divide by sqrt(d_k)")
    return fig
