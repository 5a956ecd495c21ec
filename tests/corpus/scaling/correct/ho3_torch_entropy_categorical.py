import matplotlib.pyplot as plt
import torch
from torch.distributions import Categorical


def scaling_experiment(dims=(4, 16, 64, 256), seq_len=4, n_trials=1000, seed=0):
    torch.manual_seed(seed)
    results = {}
    for d in dims:
        q = torch.randn(n_trials, seq_len, d, dtype=torch.float64)
        k = torch.randn(n_trials, seq_len, d, dtype=torch.float64)
        s = q @ k.mT
        entry = {}
        for name, x in (("unscaled", s), ("scaled", s / d ** 0.5)):
            p = x.softmax(-1)
            entry[f"std_{name}"] = x.reshape(n_trials, -1).std(1, correction=0).mean().item()
            entry[f"entropy_{name}"] = Categorical(probs=p).entropy().mean().item()
            entry[f"max_weight_{name}"] = p.max(-1).values.mean().item()
        results[d] = entry
    return results


def plot_scaling(results):
    d = sorted(results)
    fig, ax = plt.subplots(1, 2, figsize=(9, 3))
    for a, stat in zip(ax, ("std", "max_weight")):
        a.plot(d, [results[x][f"{stat}_unscaled"] for x in d], marker="o", label="unscaled")
        a.plot(d, [results[x][f"{stat}_scaled"] for x in d], marker="o", label="scaled")
        a.set_xscale("log", base=2)
        a.set_ylabel(stat)
        a.legend()
    fig.supxlabel("d")
    return fig
