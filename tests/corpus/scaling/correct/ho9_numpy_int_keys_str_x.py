import numpy as np
import matplotlib.pyplot as plt


def _softmax(s):
    e = np.exp(s - s.max(-1, keepdims=True))
    return e / e.sum(-1, keepdims=True)


def _stats(scores, tag):
    w = _softmax(scores)
    ent = -(w * np.log(np.maximum(w, 1e-300))).sum(-1)   # (trials, seq)
    return {f"std_{tag}": float(scores.std(axis=(-2, -1)).mean()),
            f"entropy_{tag}": float(ent.mean()),
            f"max_weight_{tag}": float(w.max(-1).mean())}


def scaling_experiment(dims=(4, 16, 64, 256), seq_len=4, n_trials=1000, seed=0):
    rng = np.random.default_rng(seed)  #RNG
    results = {}
    for d in np.asarray(dims):  #DIMS
        Q = rng.standard_normal((n_trials, seq_len, d))  #Q
        K = rng.standard_normal((n_trials, seq_len, d))  #K
        S = Q @ np.swapaxes(K, -1, -2)
        results[d] = _stats(S, "unscaled") | _stats(S / np.sqrt(d), "scaled")  #SCALED
    return results


def plot_scaling(results):
    dims = sorted(results)
    fig, ax = plt.subplots()
    for stat in ("entropy", "max_weight"):
        ax.plot([str(d) for d in dims], [results[d][f"{stat}_unscaled"] for d in dims], label=f"{stat} unscaled")  #PLOT_U
        ax.plot([str(d) for d in dims], [results[d][f"{stat}_scaled"] for d in dims], label=f"{stat} scaled")
    pass
    ax.set_xlabel("d")
    ax.set_ylabel("value")
    ax.set_title("scaling")
    ax.legend()
    return fig
