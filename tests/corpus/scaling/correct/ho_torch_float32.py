import matplotlib.pyplot as plt
import torch


def scaling_experiment(dims=(4, 16, 64, 256), seq_len=4, n_trials=1000, seed=0):
    g = torch.Generator().manual_seed(seed)
    res = {}
    for d in dims:
        q = torch.randn(n_trials, seq_len, d, generator=g)
        k = torch.randn(n_trials, seq_len, d, generator=g)
        s = q @ k.transpose(-2, -1)
        stats = {}
        for name, x in (("unscaled", s), ("scaled", s / d ** 0.5)):
            w = torch.softmax(x, dim=-1)
            stats[f"std_{name}"] = x.flatten(1).std(dim=1, unbiased=False).mean().item()
            stats[f"entropy_{name}"] = (-(w * torch.log(w.clamp_min(1e-30))).sum(-1)).mean().item()
            stats[f"max_weight_{name}"] = w.amax(-1).mean().item()
        res[d] = stats
    return res


def plot_scaling(results):
    d = sorted(results)
    fig = plt.figure()
    ax1 = fig.add_subplot(2, 1, 1)
    ax2 = fig.add_subplot(2, 1, 2)
    ax1.plot(d, [results[x]["entropy_unscaled"] for x in d], label="unscaled")
    ax1.plot(d, [results[x]["entropy_scaled"] for x in d], label="scaled")
    ax1.set_ylabel("entropy (nats)")
    ax1.legend()
    ax2.plot(d, [results[x]["max_weight_unscaled"] for x in d], label="unscaled")
    ax2.plot(d, [results[x]["max_weight_scaled"] for x in d], label="scaled")
    ax2.set_xlabel("d")
    ax2.set_ylabel("max weight")
    ax1.set_title("Why divide by sqrt(d)")
    return fig
