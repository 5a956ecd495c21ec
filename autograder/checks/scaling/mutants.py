"""Wrong implementations of the scaling experiment, each one mistake away from the reference."""

from __future__ import annotations

import math
from functools import partial

import numpy as np

from autograder.checks.attention.mutants import score_divisor
from reference.attention import softmax

# ---------------------------------------------------------------- scaling experiment


def scaling_experiment(dims=(4, 16, 64, 256), seq_len=4, n_trials=1000, seed=0, *, scale="sqrt",
                       variance=False, log=np.log, seeded=True, trials=None, fixed_seq_len=None,
                       fixed_dims=None, trials_offset=0):
    """The scaling experiment with one option switched: the scale, variance for std, the log's base,
    an unseeded generator (seeded=False), a fixed number of trials whatever n_trials says, a fixed
    sequence length whatever seq_len says, fixed dims whatever dims says, n_trials + trials_offset
    trials (-1: a loop one short, which averages over nothing when n_trials is 1)."""
    rng = np.random.default_rng(seed if seeded else None)
    n_trials = (n_trials if trials is None else trials) + trials_offset
    seq_len = seq_len if fixed_seq_len is None else fixed_seq_len
    dims = dims if fixed_dims is None else fixed_dims
    results = {}
    if n_trials <= 0:                  # no trial at all: nothing to average (what numpy's mean of none gives)
        return {int(d): dict.fromkeys(("std_unscaled", "std_scaled", "entropy_unscaled", "entropy_scaled",
                                       "max_weight_unscaled", "max_weight_scaled"), math.nan) for d in dims}
    for d in dims:
        d = int(d)
        Q = rng.standard_normal((n_trials, seq_len, d))
        K = rng.standard_normal((n_trials, seq_len, d))
        raw = Q @ np.swapaxes(K, -1, -2)                                  # (n_trials, T, T)
        stats = {}
        for name, s in (("unscaled", raw), ("scaled", raw / score_divisor(scale, d))):
            w = softmax(s, axis=-1)
            plogp = np.where(w > 0, w * log(np.where(w > 0, w, 1.0)), 0.0)
            stats[f"std_{name}"] = float(np.var(s) if variance else np.std(s))
            stats[f"entropy_{name}"] = float((-plogp.sum(axis=-1)).mean())
            stats[f"max_weight_{name}"] = float(w.max(axis=-1).mean())
        results[d] = {k: stats[k] for k in ("std_unscaled", "std_scaled", "entropy_unscaled", "entropy_scaled",
                                            "max_weight_unscaled", "max_weight_scaled")}
    return results


def scaling_fn(**options):
    """scaling_experiment with `options` switched (see `scaling_experiment`)."""
    return partial(scaling_experiment, **options)
