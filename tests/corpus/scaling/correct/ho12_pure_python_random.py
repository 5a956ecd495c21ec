import math
import random

import matplotlib.pyplot as plt


def _softmax(row):
    m = max(row)
    e = [math.exp(v - m) for v in row]
    s = sum(e)
    return [v / s for v in e]


def _std(values):
    mu = sum(values) / len(values)
    return math.sqrt(sum((v - mu) ** 2 for v in values) / len(values))


def scaling_experiment(dims=(4, 16, 64, 256), seq_len=4, n_trials=1000, seed=0):
    rnd = random.Random(seed)
    results = {}
    for d in dims:
        acc = dict.fromkeys(["std_unscaled", "std_scaled", "entropy_unscaled", "entropy_scaled",
                             "max_weight_unscaled", "max_weight_scaled"], 0.0)
        for _ in range(n_trials):
            Q = [[rnd.gauss(0, 1) for _ in range(d)] for _ in range(seq_len)]
            K = [[rnd.gauss(0, 1) for _ in range(d)] for _ in range(seq_len)]
            S = [[sum(a * b for a, b in zip(q, k)) for k in K] for q in Q]
            for tag, scale in (("unscaled", 1.0), ("scaled", math.sqrt(d))):
                rows = [[v / scale for v in r] for r in S]
                acc["std_" + tag] += _std([v for r in rows for v in r])
                W = [_softmax(r) for r in rows]
                acc["entropy_" + tag] += sum(-sum(p * math.log(p) for p in w if p > 0) for w in W) / seq_len
                acc["max_weight_" + tag] += sum(max(w) for w in W) / seq_len
        results[d] = {k: v / n_trials for k, v in acc.items()}
    return results


def plot_scaling(results):
    ds = sorted(results)
    fig, ax = plt.subplots()
    for key in ("std_unscaled", "std_scaled"):
        ax.plot(ds, [results[d][key] for d in ds], marker="o", label=key.replace("_", " "))
    ax.set_xscale("log")
    ax.set_yscale("log")
    ax.set_xlabel("d")
    ax.set_ylabel("std of the scores")
    ax.legend()
    return fig
