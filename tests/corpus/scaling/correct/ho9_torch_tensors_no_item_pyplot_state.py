import matplotlib.pyplot as plt
import torch


def scaling_experiment(dims=(4, 16, 64, 256), seq_len=4, n_trials=1000, seed=0):
    gen = torch.Generator().manual_seed(seed)
    res = {}
    for d in dims:
        q = torch.randn(n_trials, seq_len, d, generator=gen, dtype=torch.float64)
        k = torch.randn(n_trials, seq_len, d, generator=gen, dtype=torch.float64)
        s = q @ k.transpose(1, 2)
        r = {}
        for tag, x in (("unscaled", s), ("scaled", s / d ** 0.5)):
            w = x.softmax(-1)
            r["std_" + tag] = x.std(dim=(1, 2), unbiased=False).mean()          # 0-d tensors, no .item()
            r["entropy_" + tag] = -(w * w.log()).sum(-1).mean()
            r["max_weight_" + tag] = w.max(-1).values.mean()
        res[d] = r
    return res


def plot_scaling(results):
    ds = sorted(results)
    plt.figure()
    plt.plot(ds, [float(results[d]["max_weight_unscaled"]) for d in ds], label="max weight, unscaled")
    plt.plot(ds, [float(results[d]["max_weight_scaled"]) for d in ds], label="max weight, scaled")
    plt.xscale("log")
    plt.xlabel("d")
    plt.ylabel("largest weight")
    plt.legend()
    plt.show()
    return plt.gcf()
