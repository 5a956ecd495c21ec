# In the spirit of d2l.ai's notebooks: small helpers, then one plotting helper for several lines.
import math
import numpy as np
from matplotlib import pyplot as plt


def softmax(X):
    X_exp = np.exp(X - X.max(axis=-1, keepdims=True))
    return X_exp / X_exp.sum(axis=-1, keepdims=True)


def entropy(P):
    return -(P * np.log(P + 1e-30)).sum(axis=-1)


def statistics(scores):
    P = softmax(scores)
    spread = scores.reshape(scores.shape[0], -1).std(axis=1)
    return spread.mean(), entropy(P).mean(), P.max(axis=-1).mean()


def scaling_experiment(dims=(4, 16, 64, 256), seq_len=4, n_trials=1000, seed=0):
    rng = np.random.default_rng(seed)
    results = dict()
    for d in dims:
        queries = rng.standard_normal(size=(n_trials, seq_len, d))
        keys = rng.standard_normal(size=(n_trials, seq_len, d))
        scores = np.matmul(queries, np.transpose(keys, (0, 2, 1)))
        u_std, u_ent, u_max = statistics(scores)
        s_std, s_ent, s_max = statistics(scores / math.sqrt(d))
        results[d] = dict(std_unscaled=float(u_std), std_scaled=float(s_std),
                          entropy_unscaled=float(u_ent), entropy_scaled=float(s_ent),
                          max_weight_unscaled=float(u_max), max_weight_scaled=float(s_max))
    return results


def plot(X, Ys, legend, xlabel, ylabel, axes):
    for Y, name in zip(Ys, legend):
        axes.plot(X, Y, label=name)
    axes.set_xlabel(xlabel)
    axes.set_ylabel(ylabel)
    axes.set_xscale("log")
    axes.legend()


def plot_scaling(results):
    X = sorted(results)
    fig, axes = plt.subplots(1, 2, figsize=(9, 3.5))
    plot(X, [[results[d]["entropy_unscaled"] for d in X], [results[d]["entropy_scaled"] for d in X]],
         ["unscaled", "scaled"], "d", "entropy", axes[0])
    plot(X, [[results[d]["std_unscaled"] for d in X], [results[d]["std_scaled"] for d in X]],
         ["unscaled", "scaled"], "d", "std", axes[1])
    fig.suptitle("The effect of dividing by sqrt(d)")
    return fig
