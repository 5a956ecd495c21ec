# ---
# jupyter:
#   jupytext:
#     text_representation:
#       extension: .py
#       format_name: percent
#       format_version: '1.3'
#   kernelspec:
#     display_name: Python 3
#     language: python
#     name: python3
# ---
# This file is yours: fill in every TODO.

# %% [markdown]
# # Exercise 4 - Why divide by $\sqrt{d_k}$?
#
# Attention divides every score by $\sqrt{d_k}$. This exercise measures why, with an
# experiment rather than a proof.
#
# **The variance argument.** Let $q$ and $k$ have $d$ independent entries, each with
# mean 0 and variance 1. Their dot product $q \cdot k = \sum_{m=1}^{d} q_m k_m$ is a sum of
# $d$ independent terms, and each term $q_m k_m$ has mean 0 and variance
# $E[q_m^2]\,E[k_m^2] = 1$. Variances of independent terms add, so
#
# $$\operatorname{Var}(q \cdot k) = d, \qquad \operatorname{std}(q \cdot k) = \sqrt{d}.$$
#
# **Why that hurts.** With $d = 256$ the scores have a standard deviation of 16, so two
# keys' scores typically differ by a dozen or more - and $e^{12} \approx 160\,000$. The
# softmax then puts nearly all of the weight on a single key: it *saturates*. A saturated
# softmax is almost flat for small changes of its inputs, so its gradients nearly vanish
# and learning stalls; and the "blend of values" collapses to picking one.
#
# Dividing by $\sqrt{d}$ brings the standard deviation of the scores back to 1 whatever
# $d$ is, and the softmax stays in its useful, graded range.
#
# **Two measures of how peaked a row of weights $p$ is.**
# * its *entropy* $H(p) = -\sum_j p_j \ln p_j$ (natural log): $\ln n$ for the uniform
#   distribution over $n$ keys, and 0 for a one-hot row;
# * its *largest weight* $\max_j p_j$: $1/n$ when uniform, 1 when one-hot.
#
# You may use numpy, torch, matplotlib, math and the standard library. Replace each
# `TODO(...)` and its `raise NotImplementedError` line; cells starting with
# `if __name__ == "__main__":` are demos that the grader does not run.

# %%
import math

import matplotlib.pyplot as plt
import numpy as np

# %% [markdown]
# ## 1. The experiment
#
# For each dimension `d` in `dims`, draw `Q` and `K` of shape `(seq_len, d)` from the
# standard normal distribution, `n_trials` times, and compute the scores `Q @ K^T`
# (`(seq_len, seq_len)`) both unscaled and divided by $\sqrt{d}$. For each of the two,
# measure per trial: the standard deviation of the score matrix, the mean entropy of the
# rows of its softmax, and the mean over rows of the largest weight. Report each
# measurement averaged over the trials:
#
# ```
# {4: {"std_unscaled": ..., "std_scaled": ..., "entropy_unscaled": ..., "entropy_scaled": ...,
#      "max_weight_unscaled": ..., "max_weight_scaled": ...},
#  16: {...}, ...}
# ```
#
# Use `np.random.default_rng(seed)` so the results are reproducible, and compare scaled
# and unscaled on the **same** draws.
#
# **Be quick.** Do not loop over the trials in Python: draw all of them at once, as arrays
# of shape `(n_trials, seq_len, d)`, and let the batched matrix product and reductions over
# the last axes do the work. The whole experiment should take a small fraction of a second.
#
# **Check yourself.**
# * `std_unscaled` is close to $\sqrt{d}$ (2, 4, 8, 16 for the default dims) and `std_scaled`
#   close to 1. (A standard deviation computed from only $4 \times 4$ numbers per trial runs
#   5-10% low; that is expected.)
# * `entropy_scaled` stays roughly level as `d` grows, below the uniform $\ln 4 \approx 1.386$;
#   `entropy_unscaled` falls towards 0 while `max_weight_unscaled` climbs towards 1.
# * Mistakes to avoid: the log base (use the natural log); $0 \cdot \ln 0$ evaluates to
#   `nan` in floating point - define it as 0; a softmax over the wrong axis; Python `int`
#   keys and `float` values in the result (not numpy scalars).

# %%
def scaling_experiment(
    dims: tuple[int, ...] = (4, 16, 64, 256),
    seq_len: int = 4,
    n_trials: int = 1000,
    seed: int = 0,
) -> dict[int, dict[str, float]]:
    """Measure how the spread of Q K^T and the peakedness of its softmax grow with d.

    For each d: Q, K ~ N(0, 1) of shape (seq_len, d), n_trials times;
    S = Q K^T (unscaled) and S / sqrt(d) (scaled), each (seq_len, seq_len);
    per trial: std of S, mean row entropy -sum p ln p of softmax(S), mean row max of
    softmax(S); each averaged over the trials. Expect std_unscaled ~ sqrt(d), std_scaled ~ 1.

    Args:
        dims: the dimensions d to try.
        seq_len: number of queries and of keys per trial.
        n_trials: number of random draws per dimension.
        seed: seed of ``np.random.default_rng``.

    Returns:
        {d: {"std_unscaled", "std_scaled", "entropy_unscaled", "entropy_scaled",
             "max_weight_unscaled", "max_weight_scaled"}} with int keys and float values.
    """
    # TODO(scaling.scaling_experiment): replace this comment and the raise below with your code.
    raise NotImplementedError("scaling.scaling_experiment: not implemented yet in scaling.py; work done in scaling.ipynb is imported only once downloaded as scaling.py")


# %%
if __name__ == "__main__":
    try:
        results = scaling_experiment()
        print(f"{'d':>5} {'sqrt(d)':>8} {'std':>7} {'std/sqrt':>9} {'H':>7} {'H/sqrt':>8} {'max w':>7} {'max w/sqrt':>10}")
        for d, r in results.items():
            print(f"{d:>5} {math.sqrt(d):>8.2f} {r['std_unscaled']:>7.3f} {r['std_scaled']:>9.3f} "
                  f"{r['entropy_unscaled']:>7.3f} {r['entropy_scaled']:>8.3f} "
                  f"{r['max_weight_unscaled']:>7.3f} {r['max_weight_scaled']:>10.3f}")
    except NotImplementedError as err:
        print(f"not implemented yet: {err}")

# %% [markdown]
# ## 2. The picture
#
# `plot_scaling(results)` draws the results against `d` and returns the matplotlib
# `Figure`. It must show scaled against unscaled for at least one statistic: at least two
# labelled series with `d` on the x axis, labelled axes, and a title or a legend. One
# panel per statistic, each with an "unscaled" and a "scaled" line, tells the whole story;
# since `d` grows by factors of 4, a logarithmic x axis spaces the points evenly.
#
# Create the figure with `plt.subplots(...)` and `return` it (do not only `plt.show()` it:
# the grader inspects the returned object).

# %%
def plot_scaling(results: dict[int, dict[str, float]]) -> plt.Figure:
    """Plot the output of ``scaling_experiment`` against d, scaled vs unscaled.

    One panel per statistic (std of the scores, row entropy, largest weight), each with
    a labelled "unscaled" and a labelled "scaled" series over x = d.

    Args:
        results: {d: {statistic_name: value}} as returned by ``scaling_experiment``.

    Returns:
        The matplotlib Figure (labelled axes, titles and legends).
    """
    # TODO(scaling.plot_scaling): replace this comment and the raise below with your code.
    raise NotImplementedError("scaling.plot_scaling: not implemented yet in scaling.py; work done in scaling.ipynb is imported only once downloaded as scaling.py")


# %%
if __name__ == "__main__":
    try:
        figure = plot_scaling(scaling_experiment())
        plt.show()
    except NotImplementedError as err:
        print(f"not implemented yet: {err}")
