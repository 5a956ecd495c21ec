"""Recognisers of the scaling experiment: a random experiment's runs are never equal to a mutant's,
so its mistakes are told by properties of the answer (a statistic that grows like d, runs that do
not follow their seed, n_trials, dims) or by the error they raise. They live in the handout's
judge (autograder/judge/recognisers.py, raised.py), which check.py applies
too, by name.

An answer predicate is (answer, expected, ctx, check) -> bool | None (None: compare with the
entry's mutants instead). An error predicate is (RaisedError) -> bool. See
autograder/checks/misconception.py.
"""

from autograder.judge.raised import EMPTY_WORDS, no_trial_error  # noqa: F401 - the catalogue's
from autograder.judge.recognisers import (  # noqa: F401 - the catalogue's recognisers
    dims_ignored, entropy_in_bits, n_trials_ignored, n_trials_off_by_one, never_scaled, scaled_by_d, seed_ignored,
    std_pattern, variance_reported)
