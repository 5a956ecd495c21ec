"""Checks for scaling.py, graded by statistical properties, not by equality.

Honest experiments differ in their RNG, in pooled versus per-trial std and in ddof, so a
statistic is accepted within a band around what theory (std) or a large reference run
(entropy, max weight) says, and the trends across d must hold.
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np

from autograder.checks import figure_reading
from autograder.checks.base import Check, Context
from autograder.checks.reference_cache import precise_run
from autograder.exercise import Exercise, WrittenQuestion

STATS = ("std_unscaled", "std_scaled", "entropy_unscaled", "entropy_scaled",
         "max_weight_unscaled", "max_weight_scaled")
# 500 trials keep every entropy / max weight at least 7 standard deviations of the experiment's own noise
# inside STAT_ATOL of the large reference run (1000 were 9; the cost is the student's, per submission).
DEFAULT = {"dims": (4, 16, 64, 256), "seq_len": 4, "n_trials": 500, "seed": 0}
OTHER = {"dims": (8, 32, 128), "seq_len": 6, "n_trials": 500, "seed": 7}
STAT_ATOL = {"entropy": 0.06, "max_weight": 0.04}   # around a 10 000-trial reference run


class Reseeded(dict):
    """scaling_experiment's answer (the dict itself), with a small run for the next seed alongside:
    numbers that stay the same when the seed and n_trials change were not drawn, and earn nothing."""
    other: Any = None


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


def _drawn_problems(answer, dims) -> list[str]:
    other, first = getattr(answer, "other", None), dims[:1]
    if isinstance(other, dict) and not _shape_problems(other, first) and _same_numbers(answer, other, first):
        return ["scaling_experiment gives exactly the same numbers for another seed and n_trials: the statistics "
                "must come from Q and K drawn with the given seed and number of trials"]
    return []


def _shape_problems(answer, dims) -> list[str]:
    if not isinstance(answer, dict):
        return [f"scaling_experiment returned {type(answer).__name__}, expected a dict keyed by d"]
    keys = sorted(answer)
    if keys != sorted(dims):
        return [f"the result's keys are {keys}, expected the dims {list(dims)}"]
    for d in dims:
        missing = [s for s in STATS if s not in answer[d]]
        if missing:
            return [f"result[{d}] has no {', '.join(repr(m) for m in missing)}"]
        bad = [s for s in STATS if not math.isfinite(answer[d][s])]
        if bad:
            return [f"result[{d}][{bad[0]!r}] is {answer[d][bad[0]]}, expected a finite number"]
    return []


def _std_problems(answer, dims, rel: float) -> list[str]:
    problems = []
    for d in dims:
        got_u, got_s = answer[d]["std_unscaled"], answer[d]["std_scaled"]
        if abs(got_u - math.sqrt(d)) > rel * math.sqrt(d):
            problems.append(f"std_unscaled at d={d} is {got_u:.4g}; the std of a dot product of two "
                            f"N(0, 1) vectors of length d is sqrt(d) = {math.sqrt(d):.4g}")
        if abs(got_s - 1.0) > rel:
            problems.append(f"std_scaled at d={d} is {got_s:.4g}; after dividing by sqrt(d) it should be "
                            f"close to 1")
    return problems[:2]


def _plausible_problems(answer, dims, seq_len: int) -> list[str]:
    """Ranges every honest experiment lands in, whatever its RNG or std convention: zeros, constants
    and made-up numbers do not (an entropy of n weights is at most log n, the largest of n weights
    is at least 1/n, the spread of the unscaled scores grows with d)."""
    eps = 1e-6
    for d in dims:
        row = answer[d]
        for variant in ("unscaled", "scaled"):
            ent, top, std = row[f"entropy_{variant}"], row[f"max_weight_{variant}"], row[f"std_{variant}"]
            if not 0.0 < ent <= math.log(seq_len) + eps:
                return [f"entropy_{variant} at d={d} is {ent:.4g}; the entropy of {seq_len} weights lies between "
                        f"0 and log({seq_len}) = {math.log(seq_len):.4g}"]
            if not 1.0 / seq_len - eps <= top <= 1.0 + eps:
                return [f"max_weight_{variant} at d={d} is {top:.4g}; the largest of {seq_len} weights lies between "
                        f"1/{seq_len} and 1"]
            if not std > 0.0:
                return [f"std_{variant} at d={d} is {std:.4g}; random scores have a positive spread"]
    spreads = [answer[d]["std_unscaled"] for d in sorted(dims)]
    if len(spreads) > 1 and not spreads[-1] > spreads[0]:
        return [f"std_unscaled goes {', '.join(f'{v:.3g}' for v in spreads)} as d grows; the spread of "
                f"unscaled scores grows with d"]
    return []


def _compare_keys(args):
    def compare(answer, expected, ctx: Context) -> list[str]:
        return (_shape_problems(answer, args["dims"]) or _plausible_problems(answer, args["dims"], args["seq_len"])
                or _drawn_problems(answer, args["dims"]))
    return compare


def _compare_std(args):
    def compare(answer, expected, ctx: Context) -> list[str]:
        return (_shape_problems(answer, args["dims"]) or _drawn_problems(answer, args["dims"])
                or _std_problems(answer, args["dims"], ctx.course.tolerances.scaling.std_rel))
    return compare


def _trend_problems(answer, expected, dims, stat: str, ctx: Context) -> list[str]:
    """Values near a large reference run, and the unscaled curve moving the way theory says."""
    slack = ctx.course.tolerances.scaling.entropy_slack
    problems = []
    for variant in ("unscaled", "scaled"):
        key = f"{stat}_{variant}"
        for d in dims:
            got, want = answer[d][key], expected[d][key]
            if abs(got - want) > STAT_ATOL[stat]:
                problems.append(f"{key} at d={d} is {got:.4g}; an experiment like the one asked for "
                                f"gives about {want:.3g}")
                break
    unscaled = [answer[d][f"{stat}_unscaled"] for d in sorted(dims)]
    steps = np.diff(unscaled) if stat == "entropy" else -np.diff(unscaled)
    if (steps > slack).any():
        direction = "fall" if stat == "entropy" else "rise"
        problems.append(f"{stat}_unscaled should {direction} as d grows (the softmax saturates), "
                        f"but yours goes {', '.join(f'{v:.3g}' for v in unscaled)}")
    return problems[:2]


def _compare_trend(stat: str, args):
    def compare(answer, expected, ctx: Context) -> list[str]:
        return (_shape_problems(answer, args["dims"]) or _drawn_problems(answer, args["dims"])
                or _trend_problems(answer, expected, args["dims"], stat, ctx))
    return compare


def _precise_expected(args):
    """The reference with many trials: the value an honest experiment lands near (made once per
    dims and seq_len, shared by the entropy and max_weight checks, kept on disk across runs)."""
    def run(impl, i):
        return precise_run(impl, tuple(args["dims"]), args["seq_len"])
    return run


def _compare_other(answer, expected, ctx: Context) -> list[str]:
    return (_shape_problems(answer, OTHER["dims"]) or _drawn_problems(answer, OTHER["dims"])
            or _std_problems(answer, OTHER["dims"], ctx.course.tolerances.scaling.std_rel)
            or _trend_problems(answer, expected, OTHER["dims"], "entropy", ctx))


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
    run = impl.fresh("scaling_experiment")
    return tuple(run(**SEEDED, seed=seed) for seed in (SEED_A, SEED_A, SEED_B))


def _same_numbers(a, b, dims) -> bool:
    return all(a[d][s] == b[d][s] or abs(a[d][s] - b[d][s]) <= 1e-12 * abs(b[d][s]) for d in dims for s in STATS)


def _compare_seed(answer, expected, ctx: Context) -> list[str]:
    dims = SEEDED["dims"]
    for result in answer:
        problems = _shape_problems(result, dims) or _plausible_problems(result, dims, SEEDED["seq_len"])
        if problems:
            return problems
    first, again, other = answer
    if not _same_numbers(first, again, dims):
        return [f"two calls with seed={SEED_A} gave different numbers: make every random draw from a generator "
                f"seeded with `seed` inside the function"]
    if _same_numbers(first, other, dims):
        return [f"seed={SEED_A} and seed={SEED_B} gave the same numbers: the `seed` argument is not used"]
    return _std_problems(first, dims, ctx.course.tolerances.scaling.std_rel)


def _told_by_recognisers(answer, other, ctx: Context) -> list[str]:
    """Diagnosis on the seed and n_trials checks: random runs are never equal to a mutant's, so the
    mistakes are recognised by the answer's properties (reference/recognisers.py), not matched."""
    return ["runs of a random experiment are not compared with each other"]


def _spread_run(impl, i):
    """std_unscaled at d=16 over many seeds with few trials, over a few seeds with many trials, and
    one run of a single trial (a loop one short of n_trials averages over nothing there)."""
    run = impl.fresh("scaling_experiment")
    args = {"dims": SPREAD["dims"], "seq_len": SPREAD["seq_len"]}
    return tuple(tuple(run(**args, n_trials=n, seed=seed) for seed in seeds)
                 for n, seeds in ((SPREAD["few"], SPREAD["few_seeds"]), (SPREAD["many"], SPREAD["many_seeds"]),
                                  (1, SPREAD["few_seeds"][:1])))


def _compare_spread(answer, expected, ctx: Context) -> list[str]:
    dims = SPREAD["dims"]
    for n_trials, runs in zip((SPREAD["few"], SPREAD["many"], 1), answer):
        for result in runs:
            problems = _shape_problems(result, dims) or _plausible_problems(result, dims, SPREAD["seq_len"])
            if problems:
                return [f"with n_trials={n_trials}: {problems[0]}", *problems[1:]]
    few, many = ([r[dims[0]]["std_unscaled"] for r in runs] for runs in answer[:2])
    spread_few, spread_many = float(np.std(few)), float(np.std(many))
    if spread_few <= 1e-12 * abs(float(np.mean(few))):
        return [f"{len(SPREAD['few_seeds'])} different seeds give the same numbers with n_trials={SPREAD['few']}: "
                f"the `seed` argument is not used, so the effect of n_trials cannot show"]
    # Averaging 400 times more trials narrows the spread across seeds about 20-fold; 4-fold is the bar.
    if not spread_many < spread_few / 4:
        return [f"std_unscaled varies as much across seeds with n_trials={SPREAD['many']} ({spread_many:.3g}) as "
                f"with n_trials={SPREAD['few']} ({spread_few:.3g}): the statistics must be averaged over "
                f"n_trials trials"]
    return _std_problems(answer[1][0], dims, ctx.course.tolerances.scaling.std_rel)


# ---------------------------------------------------------------- the figure


def _figure_inputs(rng):
    from reference.scaling import scaling_experiment

    return {"results": scaling_experiment(dims=DEFAULT["dims"], seq_len=4, n_trials=200, seed=1)}


def _compare_figure(answer, expected, ctx: Context) -> list[str]:
    results = ctx.inputs["results"]
    dims = sorted(results)
    if not isinstance(answer, dict) or not answer.get("axes"):
        return ["plot_scaling returned a Figure with no axes"]
    axes = answer["axes"]
    lines = [ln for ax in axes for ln in figure_reading.labelled_by_legend(ax)]
    labelled = [ln for ln in lines if ln.get("label") and not str(ln["label"]).startswith("_")]
    series = figure_reading.labelled_series(answer, results)
    shown = {stat for s in series for stat in s.drawn}
    problems = []
    if len(series) < 2:
        problems.append(f"the figure needs at least two labelled lines plotted against d = {dims} "
                        f"(found {len(lines)} lines, {len(labelled)} labelled, {len(series)} with x = d)")
    elif len(shown) < 2 or not any(s.endswith("_unscaled") for s in shown) \
            or not any(s.endswith("_scaled") for s in shown):
        drawn = ", ".join(sorted(shown)) or "none of them"
        problems.append(f"the plotted values must be the statistics in `results` (the argument), a scaled one and "
                        f"an unscaled one; the lines drawn against d show {drawn}")
    # Each labelled line plots what its label names (issue 22.4): a swapped legend is a wrong plot.
    problems += figure_reading.label_problems(series)
    has_x = answer.get("supxlabel") or any(ax.get("xlabel") for ax in axes)
    has_y = answer.get("supylabel") or any(ax.get("ylabel") for ax in axes)
    if not has_x or not has_y:
        problems.append("label the axes (set_xlabel / set_ylabel): which is d and which statistic is shown")
    else:
        problems += figure_reading.axis_problems(answer, series)
    if not (answer.get("suptitle") or answer.get("legends") or any(ax.get("title") for ax in axes)
            or any(ax.get("legend") for ax in axes)):
        problems.append("give the figure a title or a legend so a reader can tell the series apart")
    return problems


CHECKS = [
    Check("scaling.scaling_experiment.keys", "scaling_experiment() returns one dict of six statistics per d",
          inputs=lambda rng: {}, run=_experiment(DEFAULT), compare=_compare_keys(DEFAULT), random=False),
    Check("scaling.scaling_experiment.std", "std of the scores: about sqrt(d) unscaled, about 1 scaled",
          inputs=lambda rng: {}, run=_experiment(DEFAULT), compare=_compare_std(DEFAULT), random=False),
    Check("scaling.scaling_experiment.entropy", "entropy falls with d unscaled and stays put when scaled",
          inputs=lambda rng: {}, run=_experiment(DEFAULT), compare=_compare_trend("entropy", DEFAULT),
          random=False, expected_run=_precise_expected(DEFAULT)),
    Check("scaling.scaling_experiment.max_weight", "the largest weight grows with d unscaled",
          inputs=lambda rng: {}, run=_experiment(DEFAULT), compare=_compare_trend("max_weight", DEFAULT),
          random=False, expected_run=_precise_expected(DEFAULT)),
    Check("scaling.scaling_experiment.other_dims", "other dims, seq_len and seed: dims=(8, 32, 128), seq_len=6",
          inputs=lambda rng: {}, run=_experiment(OTHER), compare=_compare_other, random=False,
          expected_run=_precise_expected(OTHER),
          advice="call scaling_experiment with other dims, seq_len and seed than the defaults and check every "
                 "key and every statistic follows them"),
    Check("scaling.scaling_experiment.seed", "the same seed gives the same numbers, another seed other numbers",
          inputs=lambda rng: {}, run=_seed_run, compare=_compare_seed, random=False, match=_told_by_recognisers,
          advice="call scaling_experiment twice with one seed, then with another: draw everything from a "
                 "generator made from `seed` inside the function"),
    Check("scaling.scaling_experiment.n_trials", "more trials narrow the spread of the statistics across seeds",
          inputs=lambda rng: {}, run=_spread_run, compare=_compare_spread, random=False, match=_told_by_recognisers,
          advice="compare the spread across seeds with n_trials=2 and n_trials=800: the statistics must be "
                 "averaged over n_trials trials"),
    Check("scaling.plot_scaling.figure", "plot_scaling draws labelled series against d, with the values passed in",
          inputs=_figure_inputs, run=lambda impl, i: impl.plot_scaling(i["results"]),
          compare=_compare_figure, random=False, expected_run=lambda impl, i: None, alongside=True),
]


EXERCISE = Exercise(
    stem="scaling", title="The sqrt(d_k) scaling experiment", order=4,
    returns={"scaling_experiment": "float_dict_dict", "plot_scaling": "figure"},
    provided=("attention",),
    checks=CHECKS,
    observe={"plot_scaling": figure_reading.observer},
    pictures={"scaling_experiment": "scaling", "plot_scaling.figure": "figure"},
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
