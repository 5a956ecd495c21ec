import numpy as np
import matplotlib.pyplot as plt


def scaling_experiment(dims=(4, 16, 64, 256), seq_len=4, n_trials=1000, seed=0):
    rng = np.random.default_rng(seed)
    out = {}
    for d in dims:
        Q = rng.standard_normal((n_trials, seq_len, d))
        K = rng.standard_normal((n_trials, seq_len, d))
        S = Q @ K.transpose(0, 2, 1)
        row = {}
        for tag, M in (("unscaled", S), ("scaled", S / np.sqrt(d))):
            W = np.exp(M - M.max(-1, keepdims=True)); W /= W.sum(-1, keepdims=True)
            row["std_" + tag] = float(M.std(axis=(1, 2)).mean())
            row["entropy_" + tag] = float((-(W * np.log(W)).sum(-1)).mean())
            row["max_weight_" + tag] = float(W.max(-1).mean())
        out[f"d={d}"] = row
    return out


def plot_scaling(results):
    ks = list(results)
    ds = [int(k[2:]) for k in ks]
    fig, ax = plt.subplots()
    ax.plot(ds, [results[k]["entropy_unscaled"] for k in ks], label="unscaled")
    ax.plot(ds, [results[k]["entropy_scaled"] for k in ks], label="scaled")
    ax.set_xlabel("d"); ax.set_ylabel("entropy"); ax.legend()
    return fig
