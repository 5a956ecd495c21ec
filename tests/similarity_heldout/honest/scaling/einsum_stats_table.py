import numpy as np
import matplotlib.pyplot as plt

STATS = ("std", "entropy", "max_weight")
VARIANTS = ("unscaled", "scaled")


def scaling_experiment(dims=(4, 16, 64, 256), seq_len=4, n_trials=1000, seed=0):
    gen = np.random.default_rng(seed)
    results = {}
    for d in dims:
        qk = gen.standard_normal((2, n_trials, seq_len, d))
        raw = np.einsum("ntd,nsd->nts", qk[0], qk[1])
        row = {}
        for variant, s in zip(VARIANTS, (raw, raw / d ** 0.5)):
            z = s - s.max(axis=-1, keepdims=True)
            logp = z - np.log(np.exp(z).sum(axis=-1, keepdims=True))
            p = np.exp(logp)
            row[f"std_{variant}"] = float(np.mean(np.std(s, axis=(-2, -1))))
            row[f"entropy_{variant}"] = float(np.mean(-(p * logp).sum(axis=-1)))
            row[f"max_weight_{variant}"] = float(np.mean(p.max(axis=-1)))
        results[d] = row
    return results


def plot_scaling(results):
    d_values = np.array(sorted(results))
    fig, axs = plt.subplots(len(STATS), 1, figsize=(5, 9), sharex=True)
    for ax, stat in zip(axs, STATS):
        for variant, marker in zip(VARIANTS, "ox"):
            ax.plot(d_values, [results[d][f"{stat}_{variant}"] for d in d_values], marker=marker, label=variant)
        ax.set_ylabel(stat)
        ax.set_xscale("log", base=2)
        ax.legend(title=stat)
    axs[-1].set_xlabel("d")
    fig.suptitle("sqrt(d) scaling")
    return fig
