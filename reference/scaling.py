"""The sqrt(d_k) scaling experiment (the reference for ``scaling.py``)."""

from __future__ import annotations

import math

import numpy as np

from .attention import softmax


def _row_stats(scores: np.ndarray) -> tuple[float, float, float]:
    """(std, mean row entropy, mean row max weight) of (n_trials, n, n) scores.

        std      = std of all n_trials * n * n scores       (pooled over the trials)
        entropy  = mean_{t,i} -sum_j w_tij log w_tij        (w = softmax(S, axis=-1), 0 log 0 = 0)
        max_w    = mean_{t,i} max_j w_tij
    """
    std = np.std(scores)
    w = softmax(scores, axis=-1)                                           # (n_trials, n, n)
    plogp = np.where(w > 0, w * np.log(np.where(w > 0, w, 1.0)), 0.0)     # (n_trials, n, n)
    entropy = (-plogp.sum(axis=-1)).mean()
    max_w = w.max(axis=-1).mean()
    return float(std), float(entropy), float(max_w)


def scaling_experiment(dims=(4, 16, 64, 256), seq_len: int = 4, n_trials: int = 1000, seed: int = 0):
    """Why attention divides by sqrt(d_k).

    For each d in ``dims``, draw Q, K ~ N(0, 1) of shape (seq_len, d), n_trials
    times (``rng = np.random.default_rng(seed)``; for each d, Q then K, all trials
    at once).  Each score q . k = sum_{l<d} q_l k_l has mean 0 and variance d, so

        std(Q K^T) ~ sqrt(d)          std(Q K^T / sqrt(d)) ~ 1.

    Unscaled, the softmax saturates as d grows (entropy falls towards 0, the
    largest weight towards 1); scaled, both stay flat.  Statistics use all
    trials: std is the std of all n_trials * seq_len**2 scores pooled (one
    4 x 4 matrix alone would underestimate it by a few percent); entropy and
    max weight are averaged over rows and trials.  Returns
    ``{d: {"std_unscaled", "std_scaled", "entropy_unscaled", "entropy_scaled",
    "max_weight_unscaled", "max_weight_scaled"}}`` with python floats.
    """
    if seq_len < 1 or n_trials < 1:
        raise ValueError(f"seq_len and n_trials must be >= 1, got {seq_len} and {n_trials}")
    rng = np.random.default_rng(seed)
    results = {}
    for d in dims:
        d = int(d)
        if d < 1:
            raise ValueError(f"every dimension must be >= 1, got {d}")
        Q = rng.standard_normal((n_trials, seq_len, d))                    # (n_trials, seq_len, d)
        K = rng.standard_normal((n_trials, seq_len, d))                    # (n_trials, seq_len, d)
        raw = Q @ np.swapaxes(K, -1, -2)                                   # (n_trials, seq_len, seq_len)
        std_u, ent_u, max_u = _row_stats(raw)
        std_s, ent_s, max_s = _row_stats(raw / math.sqrt(d))
        results[d] = {
            "std_unscaled": std_u,
            "std_scaled": std_s,
            "entropy_unscaled": ent_u,
            "entropy_scaled": ent_s,
            "max_weight_unscaled": max_u,
            "max_weight_scaled": max_s,
        }
    return results


def expected_statistics(dims, seq_len: int, rows: int = 40_000, seed: int = 12345):
    """What :func:`scaling_experiment` lands near with many trials, for a fraction of its cost.

    The entropy and the largest weight of a row of Q K^T depend on that row only. Given q_i,
    the row (q_i . k_1, ..., q_i . k_n) is n independent N(0, |q_i|^2) draws (the k_j are
    independent N(0, I_d)), and |q_i|^2 ~ chi^2(d). So a row is drawn as |q| * z with
    |q| = sqrt(chi^2(d)) and z ~ N(0, I_n): the same expectations as the experiment's rows,
    at a cost that does not grow with d: 40 000 independent rows, as many as 10 000 trials of
    4 rows have (which share their keys), in far less time. Same keys and statistics
    as :func:`scaling_experiment`.
    """
    rng = np.random.default_rng(seed)
    results = {}
    for d in dims:
        d = int(d)
        norms = np.sqrt(rng.chisquare(d, size=(rows, 1)))                  # (rows, 1)
        raw = norms * rng.standard_normal((rows, seq_len))                  # (rows, seq_len)
        std_u, ent_u, max_u = _row_stats(raw)
        std_s, ent_s, max_s = _row_stats(raw / math.sqrt(d))
        results[d] = {"std_unscaled": std_u, "std_scaled": std_s, "entropy_unscaled": ent_u,
                      "entropy_scaled": ent_s, "max_weight_unscaled": max_u, "max_weight_scaled": max_s}
    return results


_PANELS = (
    ("std", "std of the scores", "Score spread"),
    ("entropy", "mean row entropy (nats)", "Softmax entropy"),
    ("max_weight", "mean largest weight", "Largest attention weight"),
)


def plot_scaling(results):
    """Plot the statistics of :func:`scaling_experiment` against d.

    One panel per statistic (std, entropy, max weight), each with two labelled
    lines, "unscaled  QK^T" and "scaled  QK^T / sqrt(d)", x = d (log scale).
    Uses ``matplotlib.figure.Figure`` directly (no pyplot global state).
    """
    from matplotlib.figure import Figure

    dims = sorted(int(d) for d in results)
    stats = {int(d): v for d, v in results.items()}
    fig = Figure(figsize=(12, 3.8), layout="constrained")
    axes = fig.subplots(1, len(_PANELS))
    for ax, (key, ylabel, title) in zip(axes, _PANELS):
        for suffix, label, marker in (("unscaled", "unscaled  QK^T", "o"),
                                      ("scaled", "scaled  QK^T / sqrt(d)", "s")):
            ax.plot(dims, [stats[d][f"{key}_{suffix}"] for d in dims], marker=marker, label=label)
        ax.set_xscale("log", base=2)
        ax.set_xlabel("d (dimension of queries and keys)")
        ax.set_ylabel(ylabel)
        ax.set_title(title)
        ax.legend()
    fig.suptitle("Dividing the scores by sqrt(d) keeps the softmax from saturating")
    return fig
