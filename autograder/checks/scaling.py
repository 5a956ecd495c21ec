"""Checks for scaling.py, graded by statistical properties, not by equality.

Honest experiments differ in their RNG, in pooled versus per-trial std and in ddof, so a
statistic is accepted within a band around what theory (std) or a large reference run
(entropy, max weight) says, and the trends across d must hold.
"""

from __future__ import annotations

import math

import numpy as np

from autograder.checks.base import Check, Context

STATS = ("std_unscaled", "std_scaled", "entropy_unscaled", "entropy_scaled",
         "max_weight_unscaled", "max_weight_scaled")
DEFAULT = {"dims": (4, 16, 64, 256), "seq_len": 4, "n_trials": 1000, "seed": 0}
OTHER = {"dims": (8, 32, 128), "seq_len": 6, "n_trials": 500, "seed": 7}
STAT_ATOL = {"entropy": 0.06, "max_weight": 0.04}   # around a 10 000-trial reference run


def _experiment(args: dict):
    def run(impl, i):
        return impl.scaling_experiment(dims=args["dims"], seq_len=args["seq_len"],
                                       n_trials=args["n_trials"], seed=args["seed"])
    return run


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


def _compare_keys(args):
    def compare(answer, expected, ctx: Context) -> list[str]:
        return _shape_problems(answer, args["dims"])
    return compare


def _compare_std(args):
    def compare(answer, expected, ctx: Context) -> list[str]:
        return _shape_problems(answer, args["dims"]) or _std_problems(
            answer, args["dims"], ctx.course.tolerances.scaling.std_rel)
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
        return _shape_problems(answer, args["dims"]) or _trend_problems(answer, expected, args["dims"], stat, ctx)
    return compare


def _precise_expected(args):
    """The reference with many trials: the value an honest experiment lands near."""
    def run(impl, i):
        return impl.scaling_experiment(dims=args["dims"], seq_len=args["seq_len"], n_trials=10000, seed=12345)
    return run


def _compare_other(answer, expected, ctx: Context) -> list[str]:
    return (_shape_problems(answer, OTHER["dims"])
            or _std_problems(answer, OTHER["dims"], ctx.course.tolerances.scaling.std_rel)
            or _trend_problems(answer, expected, OTHER["dims"], "entropy", ctx))


def _figure_inputs(rng):
    from reference.scaling import scaling_experiment

    return {"results": scaling_experiment(dims=DEFAULT["dims"], seq_len=4, n_trials=200, seed=1)}


def _compare_figure(answer, expected, ctx: Context) -> list[str]:
    dims = sorted(ctx.inputs["results"])
    if not isinstance(answer, dict) or not answer.get("axes"):
        return ["plot_scaling returned a Figure with no axes"]
    axes = answer["axes"]
    lines = [ln for ax in axes for ln in _labelled_by_legend(ax)]
    labelled = [ln for ln in lines if ln.get("label") and not str(ln["label"]).startswith("_")]
    on_dims = [ln for ln in labelled if _same_x(ln.get("x", []), dims)]
    problems = []
    if len(on_dims) < 2:
        problems.append(f"the figure needs at least two labelled lines plotted against d = {dims} "
                        f"(found {len(lines)} lines, {len(labelled)} labelled, {len(on_dims)} with x = d)")
    if not any(ax.get("xlabel") for ax in axes) or not any(ax.get("ylabel") for ax in axes):
        problems.append("label the axes (set_xlabel / set_ylabel): which is d and which statistic is shown")
    if not (answer.get("suptitle") or any(ax.get("title") for ax in axes) or any(ax.get("legend") for ax in axes)):
        problems.append("give the figure a title or a legend so a reader can tell the series apart")
    return problems


def _labelled_by_legend(ax: dict) -> list[dict]:
    """`ax.legend(["unscaled", "scaled"])` labels the lines in order without setting their labels."""
    lines = ax.get("lines", [])
    legend = ax.get("legend", [])
    if legend and all(str(ln.get("label", "")).startswith("_") for ln in lines):
        return [ln | {"label": text} for ln, text in zip(lines, legend)]
    return lines


def _same_x(x, dims) -> bool:
    try:
        return len(x) == len(dims) and np.allclose(sorted(float(v) for v in x), dims)
    except (TypeError, ValueError):
        return False


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
          expected_run=_precise_expected(OTHER)),
    Check("scaling.plot_scaling.figure", "plot_scaling draws labelled series against d",
          inputs=_figure_inputs, run=lambda impl, i: impl.plot_scaling(i["results"]),
          compare=_compare_figure, random=False, expected_run=lambda impl, i: None),
]
