# Object-oriented matplotlib, scatter for one series, the d values given as floats.
import matplotlib
matplotlib.use("Agg")
from matplotlib.figure import Figure
import numpy as np
import torch


def scaling_experiment(dims=(4, 16, 64, 256), seq_len=4, n_trials=1000, seed=0):
    g = torch.Generator().manual_seed(seed)
    results = {}
    for d in dims:
        q = torch.randn(n_trials, seq_len, d, generator=g, dtype=torch.float64)
        k = torch.randn(n_trials, seq_len, d, generator=g, dtype=torch.float64)
        raw = q @ k.transpose(1, 2)
        entry = {}
        for tag, s in (("unscaled", raw), ("scaled", raw / d ** 0.5)):
            w = torch.softmax(s, dim=-1)
            ent = -(w * torch.log(w.clamp_min(1e-300))).sum(-1)
            entry["std_" + tag] = s.std(unbiased=False).item()
            entry["entropy_" + tag] = ent.mean().item()
            entry["max_weight_" + tag] = w.max(-1).values.mean().item()
        results[d] = entry
    return results


def plot_scaling(results):
    fig = Figure(figsize=(6, 4))
    ax = fig.add_subplot()
    xs = np.array(sorted(results), dtype=float)
    ax.scatter(xs, [results[int(x)]["entropy_unscaled"] for x in xs], label="entropy, unscaled")
    ax.plot(xs, [results[int(x)]["entropy_scaled"] for x in xs], label="entropy, scaled")
    ax.set_xscale("log", base=2)
    ax.set_xlabel("d")
    ax.set_ylabel("mean row entropy (nats)")
    ax.legend()
    return fig
