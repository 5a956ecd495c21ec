"""The whole experiment as batched torch tensors; a torch.Generator makes it reproducible."""
import math

import matplotlib
import torch
from matplotlib.figure import Figure


def scaling_experiment(dims=(4, 16, 64, 256), seq_len=4, n_trials=1000, seed=0):
    g = torch.Generator().manual_seed(int(seed))
    table = {}
    for d in dims:
        q = torch.randn((n_trials, seq_len, d), generator=g, dtype=torch.float64)
        k = torch.randn((n_trials, seq_len, d), generator=g, dtype=torch.float64)
        logits = torch.bmm(q, k.transpose(1, 2))
        entry = {}
        for tag, divisor in (("unscaled", 1.0), ("scaled", math.sqrt(d))):
            s = logits / divisor
            p = torch.softmax(s, dim=-1)
            h = -(p * torch.log(p.clamp_min(1e-300))).sum(-1)
            entry["std_" + tag] = s.flatten(1).std(dim=1, unbiased=False).mean().item()
            entry["entropy_" + tag] = h.mean().item()
            entry["max_weight_" + tag] = p.max(dim=-1).values.mean().item()
        table[d] = entry
    return table


def plot_scaling(results):
    ds = sorted(results)
    fig = Figure(figsize=(11, 3.5))
    for i, stat in enumerate(("std", "entropy", "max_weight")):
        ax = fig.add_subplot(1, 3, i + 1)
        for variant, style in (("unscaled", "--"), ("scaled", "-")):
            ax.semilogx([float(d) for d in ds], [results[d][f"{stat}_{variant}"] for d in ds], style,
                        marker=".", label=variant, base=2)
        ax.set_xlabel("d")
        ax.set_ylabel(stat.replace("_", " "))
        ax.legend()
    fig.suptitle("scaled vs unscaled dot products")
    return fig
