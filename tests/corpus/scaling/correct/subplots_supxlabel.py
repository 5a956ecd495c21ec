# Three panels sharing their labels through fig.supxlabel / fig.supylabel, log x axis.
import matplotlib.pyplot as plt
import numpy as np


def softmax(x):
    x = x - x.max(-1, keepdims=True)
    e = np.exp(x)
    return e / e.sum(-1, keepdims=True)


def scaling_experiment(dims=(4, 16, 64, 256), seq_len=4, n_trials=1000, seed=0):
    gen = np.random.default_rng(seed)
    out = {}
    for d in dims:
        stats = {k: [] for k in ("su", "ss", "eu", "es", "mu", "ms")}
        for _ in range(n_trials):
            q = gen.normal(size=(seq_len, d))
            k = gen.normal(size=(seq_len, d))
            s = q @ k.T
            for tag, sc in (("u", s), ("s", s / np.sqrt(d))):
                w = softmax(sc)
                stats["s" + tag].append(sc.std())
                stats["e" + tag].append(float(np.mean(-np.sum(w * np.log(w + 1e-30), axis=-1))))
                stats["m" + tag].append(w.max(-1).mean())
        out[d] = {"std_unscaled": float(np.mean(stats["su"])), "std_scaled": float(np.mean(stats["ss"])),
                  "entropy_unscaled": float(np.mean(stats["eu"])), "entropy_scaled": float(np.mean(stats["es"])),
                  "max_weight_unscaled": float(np.mean(stats["mu"])),
                  "max_weight_scaled": float(np.mean(stats["ms"]))}
    return out


def plot_scaling(results):
    ds = sorted(results)
    fig, axs = plt.subplots(1, 3, figsize=(12, 3.5), sharex=True)
    for ax, (name, title) in zip(axs, [("std", "score std"), ("entropy", "entropy"), ("max_weight", "max weight")]):
        ax.semilogx(ds, [results[d][name + "_unscaled"] for d in ds], marker="o", label="unscaled")
        ax.semilogx(ds, [results[d][name + "_scaled"] for d in ds], marker="x", label="scaled")
        ax.set_title(title)
        ax.legend()
    fig.supxlabel("d (key dimension)")
    fig.supylabel("statistic")
    return fig
