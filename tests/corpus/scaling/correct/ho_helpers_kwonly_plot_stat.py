import numpy as np
import matplotlib.pyplot as plt

STATS = ("std", "entropy", "max_weight")


def softmax(x, axis=-1):
    z = np.exp(x - np.max(x, axis=axis, keepdims=True))
    return z / np.sum(z, axis=axis, keepdims=True)


def row_entropy(w, *, eps=1e-12):
    return -np.sum(w * np.log(w + eps), axis=-1)


def trial(rng, seq_len, d):
    Q = rng.normal(0.0, 1.0, size=(seq_len, d))
    K = rng.normal(0.0, 1.0, size=(seq_len, d))
    return Q @ K.T


def summarise(scores, *, tag):
    w = softmax(scores)
    return {f"std_{tag}": np.std(scores), f"entropy_{tag}": row_entropy(w).mean(),
            f"max_weight_{tag}": w.max(axis=-1).mean()}


def scaling_experiment(dims=(4, 16, 64, 256), seq_len=4, n_trials=1000, seed=0):
    rng = np.random.default_rng(seed)
    results = {}
    for d in dims:
        rows = []
        for _ in range(n_trials):
            s = trial(rng, seq_len, d)
            rows.append(summarise(s, tag="unscaled") | summarise(s / np.sqrt(d), tag="scaled"))
        results[int(d)] = {k: float(np.mean([r[k] for r in rows])) for k in rows[0]}
    return results


def plot_scaling(results):
    dims = sorted(results)
    fig, axs = plt.subplots(3, 1, sharex=True, figsize=(5, 9))
    for ax, stat in zip(axs, STATS):
        for tag, style in (("unscaled", "r-o"), ("scaled", "b-o")):
            ax.plot(dims, [results[d][f"{stat}_{tag}"] for d in dims], style, label=tag)
        ax.set_ylabel(stat)
        ax.grid(True)
    axs[0].legend()
    axs[0].set_title("scaled vs unscaled")
    axs[-1].set_xlabel("dimension d")
    axs[-1].set_xscale("log")
    return fig
