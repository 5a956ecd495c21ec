import matplotlib
import matplotlib.pyplot as plt
import numpy as np


def _softmax(s):
    e = np.exp(s - s.max(-1, keepdims=True))
    return e / e.sum(-1, keepdims=True)


def _entropy(w):
    return float(np.mean(-np.sum(w * np.log(w + 1e-300), axis=-1)))


def scaling_experiment(dims=(4, 16, 64, 256), seq_len=4, n_trials=1000, seed=0):
    rng = np.random.default_rng(seed)
    results = {}
    for d in dims:
        Q = rng.standard_normal((n_trials, seq_len, d))   # (trials, seq, d)
        K = rng.standard_normal((n_trials, seq_len, d))
        raw = Q @ K.transpose(0, 2, 1)                    # (trials, seq, seq)
        scaled = raw / np.sqrt(d)
        w_raw, w_scaled = _softmax(raw), _softmax(scaled)
        results[d] = {
            "std_unscaled": float(raw.std(axis=(1, 2)).mean()),
            "std_scaled": float(scaled.std(axis=(1, 2)).mean()),
            "entropy_unscaled": _entropy(w_raw),
            "entropy_scaled": _entropy(w_scaled),
            "max_weight_unscaled": float(w_raw.max(-1).mean()),
            "max_weight_scaled": float(w_scaled.max(-1).mean()),
        }
    return results


def plot_scaling(results):
    dims = sorted(results)
    fig, axes = plt.subplots(1, 3, figsize=(12, 3.5))
    for ax, stat in zip(axes, ("std", "entropy", "max_weight")):
        ax.plot(dims, [results[d][f"{stat}_unscaled"] for d in dims], "o-", label="unscaled")
        ax.plot(dims, [results[d][f"{stat}_scaled"] for d in dims], "s--", label="scaled")
        ax.set_xscale("log", base=2)
        ax.set_title(stat)
        ax.legend()
    fig.supxlabel("d (key dimension)")
    fig.supylabel("value, averaged over trials")
    fig.suptitle("Effect of the 1/sqrt(d) scaling")
    return fig
