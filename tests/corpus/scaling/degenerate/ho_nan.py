import math


def scaling_experiment(dims=(4, 16, 64, 256), seq_len=4, n_trials=1000, seed=0):
    keys = ("std_unscaled", "std_scaled", "entropy_unscaled", "entropy_scaled", "max_weight_unscaled", "max_weight_scaled")
    return {d: {k: math.nan for k in keys} for d in dims}


def plot_scaling(results):
    import matplotlib.pyplot as plt
    return plt.figure()
