"""The scaling experiment exercise (scaling.py), graded by statistical properties, not by equality.

Honest experiments differ in their RNG, in pooled versus per-trial std and in ddof, so a
statistic is accepted within a band around what theory (std) or a large reference run
(entropy, max weight) says, and the trends across d must hold.

Its checks and descriptor are here; beside them: precise.py (the large reference run those
statistics are compared with, kept on disk), and the mistakes it recognises: misconceptions.py
(the catalogue), mutants.py (wrong experiments), recognisers.py (mistakes told by the answer's
properties: random runs are never equal to a mutant's).
"""

from __future__ import annotations

from autograder.checks.base import Check, Context, compare_property
from autograder.judge import figure_reading
from autograder.checks.scaling.precise import precise_run
from autograder.checks.exercise import Exercise, WrittenQuestion
# The comparisons are shared with the handout's check.py: one verdict on the student's laptop and here.
from autograder.judge.properties import Reseeded

# 500 trials keep every entropy / max weight at least 7 standard deviations of the experiment's own noise
# inside STAT_ATOL of the large reference run (1000 were 9; the cost is the student's, per submission).
DEFAULT = {"dims": (4, 16, 64, 256), "seq_len": 4, "n_trials": 500, "seed": 0}
OTHER = {"dims": (8, 32, 128), "seq_len": 6, "n_trials": 500, "seed": 7}


def _experiment(args: dict):
    def run(impl, i):
        answer = Reseeded(impl.scaling_experiment(dims=args["dims"], seq_len=args["seq_len"],
                                                  n_trials=args["n_trials"], seed=args["seed"]))
        # A small run (one d, few trials, the next seed): drawn numbers differ from the big run's.
        answer.other = impl.scaling_experiment(dims=args["dims"][:1], seq_len=args["seq_len"],
                                               n_trials=RESEED_TRIALS, seed=args["seed"] + 1)
        return answer
    return run


RESEED_TRIALS = 50


def _precise_expected(args):
    """The reference with many trials: the value an honest experiment lands near (made once per
    dims and seq_len, shared by the entropy and max_weight checks, kept on disk across runs)."""
    def run(impl, i):
        return precise_run(impl, tuple(args["dims"]), args["seq_len"])
    return run


def _compare_experiment(args, test: str, stat: str | None = None):
    """The judge's test (properties.py) of one run: "plausible", "std", "trend" (of `stat`) or "other" (std and
    the entropy's trend), with the course's tolerances."""
    def params(ctx, expected):
        tol = ctx.course.tolerances.scaling
        return {"dims": args["dims"], "seq_len": args["seq_len"], "test": test, "stat": stat,
                "std_rel": tol.std_rel, "slack": tol.entropy_slack,
                "expected": expected if test in ("trend", "other") else None}
    return compare_property("scaling_experiment", params)


# ---------------------------------------------------------------- the arguments are used

SEEDED = {"dims": (4, 16), "seq_len": 4, "n_trials": 200}
SEED_A, SEED_B = 3, 4
# The spread across seeds with few trials is cheap to measure well (30 seeds); with many trials it is
# small, and 5 seeds bound it: about half the trials of 10 + 10 seeds, and a wider margin over the
# 4-fold bar (simulated over 200 RNG streams, pooled and per-trial std: smallest ratio 7.4 vs 6.3).
SPREAD = {"dims": (16,), "seq_len": 4, "few": 2, "many": 800,
          "few_seeds": tuple(range(1, 31)), "many_seeds": tuple(range(1, 6))}


def _seed_run(impl, i):
    """The same seed twice, then another seed: fresh calls, never a cached answer."""
    return tuple(impl.fresh_each("scaling_experiment", [{**SEEDED, "seed": seed} for seed in (SEED_A, SEED_A, SEED_B)]))


_compare_seed = compare_property("scaling_seed", lambda ctx, expected: {
    "args": SEEDED, "seeds": (SEED_A, SEED_A, SEED_B), "std_rel": ctx.course.tolerances.scaling.std_rel})


def _told_by_recognisers(answer, other, ctx: Context) -> list[str]:
    """Diagnosis on the seed and n_trials checks: random runs are never equal to a mutant's, so the
    mistakes are recognised by the answer's properties (recognisers.py here), not matched."""
    return ["runs of a random experiment are not compared with each other"]


def _spread_run(impl, i):
    """std_unscaled at d=16 over many seeds with few trials, over a few seeds with many trials, and
    one run of a single trial (a loop one short of n_trials averages over nothing there)."""
    args = {"dims": SPREAD["dims"], "seq_len": SPREAD["seq_len"]}
    groups = ((SPREAD["few"], SPREAD["few_seeds"]), (SPREAD["many"], SPREAD["many_seeds"]), (1, SPREAD["few_seeds"][:1]))
    answers = iter(impl.fresh_each("scaling_experiment", [{**args, "n_trials": n, "seed": seed}
                                                          for n, seeds in groups for seed in seeds]))
    return tuple(tuple(next(answers) for _ in seeds) for _, seeds in groups)


_compare_spread = compare_property("scaling_spread", lambda ctx, expected: {
    "spread": SPREAD, "std_rel": ctx.course.tolerances.scaling.std_rel})


# ---------------------------------------------------------------- the figure


def _figure_inputs(rng):
    from reference.scaling import scaling_experiment

    return {"results": scaling_experiment(dims=DEFAULT["dims"], seq_len=4, n_trials=200, seed=1)}


_compare_figure = compare_property("scaling_figure", lambda ctx, expected: {"results": ctx.inputs["results"]})


EXPERIMENT_KEYS = Check(
    "scaling.scaling_experiment.keys", "scaling_experiment() returns one dict of six statistics per d",
    inputs=lambda rng: {}, run=_experiment(DEFAULT), compare=_compare_experiment(DEFAULT, "plausible"),
    random=False)
EXPERIMENT_STD = Check(
    "scaling.scaling_experiment.std", "std of the scores: about sqrt(d) unscaled, about 1 scaled",
    inputs=lambda rng: {}, run=_experiment(DEFAULT), compare=_compare_experiment(DEFAULT, "std"),
    random=False)
EXPERIMENT_ENTROPY = Check(
    "scaling.scaling_experiment.entropy", "entropy falls with d unscaled and stays put when scaled",
    inputs=lambda rng: {}, run=_experiment(DEFAULT), compare=_compare_experiment(DEFAULT, "trend", "entropy"),
    random=False, expected_run=_precise_expected(DEFAULT))
EXPERIMENT_MAX_WEIGHT = Check(
    "scaling.scaling_experiment.max_weight", "the largest weight grows with d unscaled",
    inputs=lambda rng: {}, run=_experiment(DEFAULT),
    compare=_compare_experiment(DEFAULT, "trend", "max_weight"),
    random=False, expected_run=_precise_expected(DEFAULT))
EXPERIMENT_OTHER_DIMS = Check(
    "scaling.scaling_experiment.other_dims", "other dims, seq_len and seed: dims=(8, 32, 128), seq_len=6",
    inputs=lambda rng: {}, run=_experiment(OTHER), compare=_compare_experiment(OTHER, "other"), random=False,
    expected_run=_precise_expected(OTHER),
    advice="call scaling_experiment with other dims, seq_len and seed than the defaults and check every "
           "key and every statistic follows them")
EXPERIMENT_SEED = Check(
    "scaling.scaling_experiment.seed", "the same seed gives the same numbers, another seed other numbers",
    inputs=lambda rng: {}, run=_seed_run, compare=_compare_seed, random=False, match=_told_by_recognisers,
    advice="call scaling_experiment twice with one seed, then with another: draw everything from a "
           "generator made from `seed` inside the function")
EXPERIMENT_N_TRIALS = Check(
    "scaling.scaling_experiment.n_trials", "more trials narrow the spread of the statistics across seeds",
    inputs=lambda rng: {}, run=_spread_run, compare=_compare_spread, random=False, match=_told_by_recognisers,
    advice="compare the spread across seeds with n_trials=2 and n_trials=800: the statistics must be "
           "averaged over n_trials trials")
FIGURE = Check(
    "scaling.plot_scaling.figure", "plot_scaling draws labelled series against d, with the values passed in",
    inputs=_figure_inputs, run=lambda impl, i: impl.plot_scaling(i["results"]),
    compare=_compare_figure, random=False, expected_run=lambda impl, i: None)


# The checks of each task, in the order they are graded (the catalogue names them by these).
EXPERIMENT = (EXPERIMENT_KEYS, EXPERIMENT_STD, EXPERIMENT_ENTROPY, EXPERIMENT_MAX_WEIGHT, EXPERIMENT_OTHER_DIMS,
              EXPERIMENT_SEED, EXPERIMENT_N_TRIALS)
CHECKS = [*EXPERIMENT, FIGURE]


EXERCISE = Exercise(
    stem="scaling", title="The sqrt(d_k) scaling experiment", order=4,
    returns={"scaling_experiment": "float_dict_dict", "plot_scaling": "figure"},
    provided=("attention",),
    checks=CHECKS,
    observe={"plot_scaling": figure_reading.observer},
    pictures={"scaling_experiment": "scaling", "plot_scaling.figure": "figure"},
    catalogue=f"{__name__}.misconceptions",
    written=(WrittenQuestion(
        "written_why_sqrt_dk", 2,
        "## Written question (manually graded, 2 points)\n\n"
        "Why does attention divide the scores $Q K^\\top$ by $\\sqrt{d_k}$? Use what your experiment "
        "measured: what happens to the spread of the scores and to the softmax as $d_k$ grows, and why "
        "is that bad for learning?",
        "For random queries and keys with unit-variance entries, each score is a sum of $d_k$ products, so "
        "its variance grows like $d_k$ and its standard deviation like $\\sqrt{d_k}$ (the experiment: std of "
        "$QK^\\top$ close to $\\sqrt{d}$). Large scores push the softmax into saturation: one weight near 1, "
        "the others near 0 (the row entropy falls, the largest weight rises with $d$). A saturated softmax "
        "has gradients close to zero, so the queries and keys barely learn. Dividing by $\\sqrt{d_k}$ brings "
        "the standard deviation back to about 1 for every $d_k$, keeping the weights spread out and the "
        "gradients useful."),),
)
