# No numpy in the experiment: the random module and lists. matplotlib for the picture.
import math
import random
import statistics

import matplotlib.pyplot as plt


def dot(a, b):
    return sum(x * y for x, y in zip(a, b))


def softmax_list(scores):
    top = max(scores)
    exps = [math.exp(s - top) for s in scores]
    z = sum(exps)
    return [e / z for e in exps]


def one_trial(rand, seq_len, d, scale):
    q = [[rand.gauss(0.0, 1.0) for _ in range(d)] for _ in range(seq_len)]
    k = [[rand.gauss(0.0, 1.0) for _ in range(d)] for _ in range(seq_len)]
    table = []
    for qi in q:
        table.append([dot(qi, kj) for kj in k])
    found = {}
    for tag, c in (("unscaled", 1.0), ("scaled", scale)):
        s = [[v / c for v in row] for row in table]
        ws = [softmax_list(row) for row in s]
        found["std_" + tag] = statistics.pstdev([v for row in s for v in row])
        found["entropy_" + tag] = statistics.fmean(-sum(p * math.log(p) for p in w if p > 0) for w in ws)
        found["max_weight_" + tag] = statistics.fmean(max(w) for w in ws)
    return found


def scaling_experiment(dims=(4, 16, 64, 256), seq_len=4, n_trials=1000, seed=0):
    rand = random.Random(seed)
    results = {}
    for d in dims:
        trials = [one_trial(rand, seq_len, d, math.sqrt(d)) for _ in range(n_trials)]
        results[d] = {key: statistics.fmean(t[key] for t in trials) for key in trials[0]}
    return results


def plot_scaling(results):
    ds = sorted(results)
    fig, ax = plt.subplots()
    ax.plot(ds, [results[d]["std_unscaled"] for d in ds], label="std unscaled")
    ax.plot(ds, [results[d]["std_scaled"] for d in ds], label="std scaled")
    ax.set_xlabel("d")
    ax.set_ylabel("std")
    ax.set_title("std of the scores")
    ax.legend()
    return fig
