"""The scaling experiment's catalogue: the mistakes the grader names in scaling_experiment, each with
its mutants (mutants.py here) and its hint. A random experiment's runs are never equal to a mutant's,
so most entries are told by a property of the answer (recognisers.py here).

Adding a misconception to this exercise is adding one entry here (see
autograder/checks/misconception.py for what an entry holds). Entries are tried in this order.
"""

from __future__ import annotations

import numpy as np

from autograder.checks.scaling import (
    EXPERIMENT_ENTROPY, EXPERIMENT_KEYS, EXPERIMENT_MAX_WEIGHT, EXPERIMENT_N_TRIALS, EXPERIMENT_OTHER_DIMS, EXPERIMENT_SEED,
    EXPERIMENT_STD,
)
from autograder.checks.scaling import mutants as mu
from autograder.checks.scaling import recognisers as rc
from autograder.checks.misconception import Misconception, Overrides

STATISTICS = (EXPERIMENT_STD, EXPERIMENT_ENTROPY, EXPERIMENT_MAX_WEIGHT, EXPERIMENT_OTHER_DIMS)
# The seed and n_trials checks end by judging the std of one run: a wrong std fails them too.
STD_CHECKS = (EXPERIMENT_SEED, EXPERIMENT_N_TRIALS)


def _scaling(**options) -> Overrides:
    return lambda: {"scaling_experiment": mu.scaling_fn(**options)}


CATALOGUE: list[Misconception] = [
    Misconception(
        "no_scaling", "scaling",
        "Your 'scaled' statistics are the unscaled ones: the scores were never divided by sqrt(d) before the "
        "scaled std, entropy and max weight were taken, so std_scaled grows like sqrt(d) instead of staying "
        "near 1.",
        _scaling(scale="none"), STATISTICS + STD_CHECKS, matches=rc.never_scaled),
    Misconception(
        "scaled_by_dk", "scaling",
        "The scaled scores were divided by d instead of sqrt(d): std_scaled shrinks like 1/sqrt(d) instead of "
        "staying near 1. A sum of d products of unit-variance numbers has variance d and std sqrt(d).",
        _scaling(scale="dk"), STATISTICS + STD_CHECKS, matches=rc.scaled_by_d),
    Misconception(
        "variance_not_std", "scaling",
        "The 'std' entries hold the variance: std_unscaled grows like d, not sqrt(d). Report the standard "
        "deviation (the square root of the variance).",
        _scaling(variance=True), (EXPERIMENT_STD, EXPERIMENT_OTHER_DIMS) + STD_CHECKS,
        matches=rc.variance_reported),
    Misconception(
        "entropy_log2", "scaling",
        "The entropies are in bits (log base 2), about 1.44 times too large; the contract asks for the natural "
        "log (nats), so that a uniform row of n weights has entropy log(n).",
        _scaling(log=np.log2), (EXPERIMENT_KEYS, EXPERIMENT_ENTROPY, EXPERIMENT_OTHER_DIMS, *STD_CHECKS),
        matches=rc.entropy_in_bits),
    Misconception(
        "seed_ignored", "scaling",
        "The `seed` argument does not decide the numbers: two calls with the same seed differ, or two seeds give "
        "the same numbers. Make one generator from `seed` inside the function and draw every Q and K from it.",
        _scaling(seeded=False), (EXPERIMENT_SEED, EXPERIMENT_N_TRIALS), matches=rc.seed_ignored),
    Misconception(
        "n_trials_ignored", "scaling",
        "The statistics are not averaged over `n_trials` trials: asking for more trials does not make them any "
        "steadier from seed to seed. Draw n_trials independent pairs of Q and K for each d and average over them.",
        _scaling(trials=50), (EXPERIMENT_N_TRIALS,), matches=rc.n_trials_ignored),
    Misconception(
        "n_trials_off_by_one", "scaling",
        "The experiment runs one trial fewer than n_trials: with n_trials=1 it averages over no trial at all "
        "(nan, zeros, or a division by zero). Count the trials your loop or your arrays really hold: n_trials of "
        "them, from the first to the last.",
        _scaling(trials_offset=-1), (EXPERIMENT_N_TRIALS,), matches=rc.n_trials_off_by_one, raises=rc.no_trial_error),
    Misconception(
        "dims_ignored", "scaling",
        "The results do not follow the `dims` argument: asked for other dimensions, the function still reports "
        "its own (often the default ones). Loop over the dims you are given and key the results by them.",
        _scaling(fixed_dims=(4, 16, 64, 256)), (EXPERIMENT_OTHER_DIMS, EXPERIMENT_SEED, EXPERIMENT_N_TRIALS),
        matches=rc.dims_ignored),
    Misconception(
        "seq_len_ignored", "scaling",
        "The statistics do not follow the `seq_len` argument: Q and K are drawn with a fixed number of rows, "
        "so the entropies and largest weights are those of another sequence length. Draw Q and K of shape "
        "(seq_len, d).",
        _scaling(fixed_seq_len=4), (EXPERIMENT_OTHER_DIMS,)),
]
