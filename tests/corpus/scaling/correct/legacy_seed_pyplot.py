# np.random.seed + pyplot state machine, loglog, a figure legend, trials in a loop.
import math

import matplotlib.pyplot as plt
import numpy as np


def scaling_experiment(dims=(4, 16, 64, 256), seq_len=4, n_trials=1000, seed=0):
    np.random.seed(seed)
    res = {}
    for d in dims:
        raw_all, sc_all = [], []
        for t in range(n_trials):
            Q = np.random.randn(seq_len, d)
            K = np.random.randn(seq_len, d)
            raw_all.append(Q @ K.T)
        raw = np.stack(raw_all)
        sc = raw / math.sqrt(d)
        row = {}
        for tag, s in (("unscaled", raw), ("scaled", sc)):
            e = np.exp(s - s.max(axis=-1, keepdims=True))
            w = e / e.sum(axis=-1, keepdims=True)
            logw = np.log(np.where(w > 0, w, 1.0))
            row["std_" + tag] = float(np.std(s))
            row["entropy_" + tag] = float(np.mean(-(w * logw).sum(axis=-1)))
            row["max_weight_" + tag] = float(np.mean(w.max(axis=-1)))
        res[d] = row
    return res


def plot_scaling(results):
    d = sorted(results.keys())
    fig = plt.figure()
    plt.loglog(d, [results[k]["std_unscaled"] for k in d], "o-")
    plt.loglog(d, [results[k]["std_scaled"] for k in d], "s--")
    plt.xlabel("d")
    plt.ylabel("std of the scores")
    plt.title("Scores grow like sqrt(d) unless scaled")
    plt.legend(["unscaled", "scaled"])
    return fig
