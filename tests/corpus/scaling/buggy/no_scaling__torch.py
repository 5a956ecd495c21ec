# Forgot to scale, torch RNG.
import math

import matplotlib.pyplot as plt
import torch


def scaling_experiment(dims=(4, 16, 64, 256), seq_len=4, n_trials=1000, seed=0):
    gen = torch.Generator().manual_seed(seed)
    results = {}
    for d in dims:
        q = torch.randn(n_trials, seq_len, d, generator=gen, dtype=torch.float64)
        k = torch.randn(n_trials, seq_len, d, generator=gen, dtype=torch.float64)
        raw = q @ k.transpose(1, 2)
        row = {}
        for name, s in (("unscaled", raw), ("scaled", raw)):
            w = torch.softmax(s, dim=-1)
            row[f"std_{name}"] = s.std(unbiased=False).item()
            row[f"entropy_{name}"] = torch.special.entr(w).sum(-1).mean().item()
            row[f"max_weight_{name}"] = w.amax(-1).mean().item()
        results[d] = row
    return results


def plot_scaling(results):
    dims = sorted(results)
    fig, ax = plt.subplots()
    for key in ("max_weight_unscaled", "max_weight_scaled", "std_scaled"):
        ax.plot(dims, [results[d][key] for d in dims], label=key)
    ax.set_xlabel("d")
    ax.set_ylabel("value")
    ax.legend()
    return fig
