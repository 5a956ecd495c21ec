"""Checks that test a property with code: the comparisons check.py and the grader share.

The scaling experiment (statistics within a band around theory or a large reference run, trends
across d, a seed and a number of trials that are really used), the figure's reading, causal
attention that does not see the future, the multi-head module's structure, and functions that leave
their arguments as they were.
autograder/checks/{scaling,causal_mask,multihead}.py compare with `PROPERTIES`, and so does the
handout's check.py, which holds this file in judge/ beside it: one verdict on both
sides. Needs numpy.
"""

from __future__ import annotations

import math

import numpy as np

from . import figure_reading
from .answers import Reseeded, all_close, weights_problem  # noqa: F401 - Reseeded: the scaling checks' answer
from .words import counted

STATS = ("std_unscaled", "std_scaled", "entropy_unscaled", "entropy_scaled",
         "max_weight_unscaled", "max_weight_scaled")
STAT_ATOL = {"entropy": 0.06, "max_weight": 0.04}   # around a 10 000-trial reference run


# ---------------------------------------------------------------- the scaling experiment

def drawn_problems(answer, dims) -> list[str]:
    other, first = getattr(answer, "other", None), dims[:1]
    if isinstance(other, dict) and not shape_problems(other, first) and same_numbers(answer, other, first):
        return ["scaling_experiment gives exactly the same numbers for another seed and n_trials: the statistics "
                "must come from Q and K drawn with the given seed and number of trials"]
    return []


def shape_problems(answer, dims) -> list[str]:
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


def std_problems(answer, dims, rel: float) -> list[str]:
    """Each statistic that is off at some d, said once with every d where it is off."""
    off_unscaled = [d for d in dims if abs(answer[d]["std_unscaled"] - math.sqrt(d)) > rel * math.sqrt(d)]
    off_scaled = [d for d in dims if abs(answer[d]["std_scaled"] - 1.0) > rel]
    problems = []
    if off_unscaled:
        problems.append(f"std_unscaled is {_at_each({d: answer[d]['std_unscaled'] for d in off_unscaled})}; the std "
                        f"of a dot product of two N(0, 1) vectors of length d is sqrt(d) "
                        f"({_at_each({d: math.sqrt(d) for d in off_unscaled})})")
    if off_scaled:
        problems.append(f"std_scaled is {_at_each({d: answer[d]['std_scaled'] for d in off_scaled})}; after dividing "
                        f"by sqrt(d) it should be close to 1")
    return problems


def _at_each(values: dict) -> str:
    """{4: 1.983, 16: 3.979} -> "1.983 at d=4 and 3.979 at d=16"."""
    said = [f"{value:.4g} at d={d}" for d, value in values.items()]
    return said[0] if len(said) == 1 else ", ".join(said[:-1]) + " and " + said[-1]


def plausible_problems(answer, dims, seq_len: int) -> list[str]:
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


def trend_problems(answer, expected, dims, stat: str, slack: float) -> list[str]:
    """Values near a large reference run, and the unscaled curve moving the way theory says."""
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


def same_numbers(a, b, dims) -> bool:
    return all(a[d][s] == b[d][s] or abs(a[d][s] - b[d][s]) <= 1e-12 * abs(b[d][s]) for d in dims for s in STATS)


def seed_problems(answer, p: dict) -> list[str]:
    """`answer`: runs with seeds p["seeds"] = (a, a, b) and the other arguments p["args"]."""
    dims, (seed_a, _, seed_b) = p["args"]["dims"], p["seeds"]
    for result in answer:
        problems = shape_problems(result, dims) or plausible_problems(result, dims, p["args"]["seq_len"])
        if problems:
            return problems
    first, again, other = answer
    if not same_numbers(first, again, dims):
        return [f"two calls with seed={seed_a} gave different numbers: make every random draw from a generator "
                f"seeded with `seed` inside the function"]
    if same_numbers(first, other, dims):
        return [f"seed={seed_a} and seed={seed_b} gave the same numbers: the `seed` argument is not used"]
    return std_problems(first, dims, p["std_rel"])


def spread_problems(answer, p: dict) -> list[str]:
    """`answer`: runs over p["spread"]["few_seeds"] with few trials, over its "many_seeds" with many,
    and one run of a single trial."""
    spread = p["spread"]
    dims = spread["dims"]
    for n_trials, runs in zip((spread["few"], spread["many"], 1), answer):
        for result in runs:
            problems = shape_problems(result, dims) or plausible_problems(result, dims, spread["seq_len"])
            if problems:
                return [f"with n_trials={n_trials}: {problems[0]}", *problems[1:]]
    few, many = ([r[dims[0]]["std_unscaled"] for r in runs] for runs in answer[:2])
    spread_few, spread_many = float(np.std(few)), float(np.std(many))
    if spread_few <= 1e-12 * abs(float(np.mean(few))):
        return [f"{len(spread['few_seeds'])} different seeds give the same numbers with n_trials={spread['few']}: "
                f"the `seed` argument is not used, so the effect of n_trials cannot show"]
    # Averaging 400 times more trials narrows the spread across seeds about 20-fold; 4-fold is the bar.
    if not spread_many < spread_few / 4:
        return [f"std_unscaled varies as much across seeds with n_trials={spread['many']} ({spread_many:.3g}) as "
                f"with n_trials={spread['few']} ({spread_few:.3g}): the statistics must be averaged over "
                f"n_trials trials"]
    return std_problems(answer[1][0], dims, p["std_rel"])


# ---------------------------------------------------------------- the figure (described as convert.py does)

def figure_problems(answer, results: dict) -> list[str]:
    """What is wrong with the figure plot_scaling drew for `results` (the grader's plot check)."""
    dims = sorted(results)
    if not isinstance(answer, dict) or not answer.get("axes"):
        return ["plot_scaling returned a Figure with no axes"]
    axes = answer["axes"]
    lines = [ln for ax in axes for ln in figure_reading.labelled_by_legend(ax)]
    series = figure_reading.labelled_series(answer, results)
    shown = {stat for s in series for stat in s.drawn}
    problems = []
    if len(series) < 2:
        problems.append(_lines_problem(lines, dims))
    elif len(shown) < 2 or not any(s.endswith("_unscaled") for s in shown) \
            or not any(s.endswith("_scaled") for s in shown):
        drawn = ", ".join(sorted(shown)) or "none of them"
        problems.append(f"the plotted values must be the statistics in `results` (the argument), a scaled one and "
                        f"an unscaled one; the lines drawn against d show {drawn}")
    # Each labelled line plots what its label names: a swapped legend is a wrong plot.
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


def _lines_problem(lines: list[dict], dims: list) -> str:
    """Fewer than two labelled lines against d: the labels are what is missing when the lines are
    there, else the lines against d."""
    against_d = [ln for ln in lines if figure_reading.x_order(ln.get("x", []), dims) is not None]
    unlabelled = [ln for ln in against_d if not ln.get("label") or str(ln["label"]).startswith("_")]
    if len(against_d) >= 2:
        which = (f"the {len(against_d)} lines plotted against d = {dims} have no label" if len(unlabelled) == len(against_d)
                 else f"{len(unlabelled)} of the {len(against_d)} lines plotted against d = {dims} "
                      f"{'has' if len(unlabelled) == 1 else 'have'} no label")
        return f"label the lines: {which}; give each a label that says what it shows (label= in plot, or a legend)"
    if not lines:
        return f"the figure needs at least two lines plotted against d = {dims}: it has no line"
    if len(lines) == 1:
        which = "plotted against d" if against_d else "not plotted against d"
    else:
        which = f"{len(against_d)} of them plotted against d" if against_d else "none plotted against d"
    return (f"the figure needs at least two lines plotted against d = {dims} (x = the dims): found "
            f"{counted(len(lines), 'line')}, {which}")


# ---------------------------------------------------------------- causal attention and the multi-head module

def no_future_problems(answer, V, changed: int) -> list[str]:
    """The property, counted only on an answer that is otherwise attention-like: a constant,
    nan or input-blind answer also "leaves earlier outputs unchanged", and so do weights that
    ignore the queries and keys (each token attending only to itself, or evenly to its past)."""
    out_a, out_b, weights, weights_q = (np.asarray(a, dtype=np.float64) for a in answer)
    if out_a.shape != V.shape or out_b.shape != V.shape or weights.shape != (len(V), len(V)):
        return [f"causal_attention returned output of shape {out_a.shape} and weights of shape {weights.shape} "
                f"for Q, K, V of shape {V.shape}"]
    if not (np.isfinite(out_a).all() and np.isfinite(out_b).all() and np.isfinite(weights).all()):
        return ["causal_attention returned values that are not finite (nan or inf)"]
    problem = weights_problem("weights", weights)
    if problem:
        return [problem]
    if not all_close(weights @ V, out_a, rtol=1e-4, atol=1e-5):
        return ["your output is not your weights times V"]
    if weights_q.shape == weights.shape and all_close(weights, weights_q, rtol=1e-7, atol=1e-9):
        return ["your weights stay the same when the queries change: they do not depend on Q and K, "
                "so this is not attention"]
    if all_close(out_a[changed:], out_b[changed:], rtol=1e-7, atol=1e-9):
        return [f"your outputs for tokens {changed}..5 stay the same when those tokens' keys and values change: "
                f"the output does not depend on the input"]
    for token in range(changed):
        if not all_close(out_a[token], out_b[token], rtol=1e-7, atol=1e-9):
            return [f"your output for token {token} changes when tokens {changed}..5 change: "
                    f"position {token} attends to later positions"]
    return []


def structure_problems(answer, x_shape, heads: int) -> list[str]:
    """Right shapes, and values an attention layer can give: structure earns nothing on a forward
    that returns nan, zeros, weights that are not probabilities, or the same answer whatever the
    layers' parameters are (an input echoed back, weights fixed in advance)."""
    out, weights, out_b, weights_b = (np.asarray(a, dtype=np.float64) for a in answer)
    batch, seq, d_model = x_shape
    problems = []
    if out.shape != (batch, seq, d_model):
        problems.append(f"forward's output has shape {out.shape}, expected (batch, seq, d_model) = "
                        f"{(batch, seq, d_model)}")
    if weights.shape != (batch, heads, seq, seq):
        problems.append(f"forward's weights have shape {weights.shape}, expected (batch, num_heads, seq, seq)"
                        f" = {(batch, heads, seq, seq)}")
    if problems:
        return problems
    if not (np.isfinite(out).all() and np.isfinite(weights).all()):
        return ["forward returned values that are not finite (nan or inf)"]
    if np.ptp(out) == 0:
        return ["forward's output is the same number everywhere: it does not depend on the input"]
    problem = weights_problem("weights", weights)
    if problem:
        return [problem]
    if out_b.shape != out.shape or weights_b.shape != weights.shape:
        return ["forward returns arrays of other shapes when the layers hold other parameters"]
    if all_close(out, out_b, rtol=1e-6, atol=1e-9):
        return ["forward's output stays the same when the layers hold other parameters: it does not use "
                "W_q, W_k, W_v and W_o"]
    if all_close(weights, weights_b, rtol=1e-6, atol=1e-9):
        return ["forward's weights stay the same when W_q and W_k hold other parameters: they do not come "
                "from the queries and keys"]
    return []


# ---------------------------------------------------------------- arguments left as they were

def _same(a, b, rtol: float, atol: float) -> bool:
    """Two answers (arrays, or tuples of them) of the same function equal within the tolerance."""
    if isinstance(a, (tuple, list)) or isinstance(b, (tuple, list)):
        return isinstance(a, (tuple, list)) and isinstance(b, (tuple, list)) and len(a) == len(b) and all(
            _same(x, y, rtol, atol) for x, y in zip(a, b))
    a, b = np.asarray(a, dtype=np.float64), np.asarray(b, dtype=np.float64)
    return a.shape == b.shape and bool(all_close(a, b, rtol=rtol, atol=atol, equal_nan=True))


def _where_changed(before: np.ndarray, after: np.ndarray) -> str:
    """How an argument differs after the call: its shape, or its first changed entry."""
    if after.shape != before.shape:
        return f" has shape {after.shape}, where it had {before.shape}"
    changed = np.argwhere(~((after == before) | (np.isnan(after) & np.isnan(before))))
    at = tuple(int(n) for n in changed[0])
    index = ", ".join(str(n) for n in at)
    return f"[{index}] is {after[at]:.4g}, where it was {before[at]:.4g}"


def arguments_problems(answer, p: dict) -> list[str]:
    """`answer`: (the answer and the array arguments as the call left them, the answer with
    read-only arguments, and where p["alias"] names the arguments passed as one array: the answer
    for one array passed as all of them, then for separate copies of it; where p["again"] names
    them, the answer of a second call on the same arguments: a module's forward). Counted only on
    a right answer (p["expected"]: the reference's first answer): a wrong one earns nothing here
    either."""
    first = answer[0][0]
    if p.get("expected") is not None and not _same(first, p["expected"], p["rtol"], p["atol"]):
        return [f"{p['function']} does not give the right answer here, so what it does to its arguments is not "
                f"counted: the other checks of {p['function']} say what is wrong"]
    return changed_problems(answer, p)


def changed_problems(answer, p: dict) -> list[str]:
    """What the function did to its arguments (see `arguments_problems`): the arguments must be as
    they were (p["before"]), and the other answers the same as the first."""
    function, names, rtol, atol = p["function"], p["names"], p["rtol"], p["atol"]
    (first, left), read_only = answer[0], answer[1]
    problems = []
    for name, before, after in zip(names, p["before"], left):
        before, after = np.asarray(before, dtype=np.float64), np.asarray(after, dtype=np.float64)
        if after.shape != before.shape or not np.array_equal(after, before, equal_nan=True):
            problems.append(f"{function} changed its argument {name} in place: after the call, {name}"
                            f"{_where_changed(before, after)}")
    if p.get("alias") and not _same(answer[2], answer[3], rtol, atol):
        problems.append(f"{function} gives another answer when {_and(p['alias'])} are one array (as in self-attention, "
                        f"f(x, x, x)) than when they are separate copies of it: a change made to one of them in "
                        f"place changes the others too")
    if p.get("again") and not _same(answer[2], first, rtol, atol):
        problems.append(f"{function} gives another answer when called a second time on the same {_and(p['again'])} "
                        f"(as every layer of a model is given the same mask): the first call changed them in place")
    if not _same(read_only, first, rtol, atol):
        problems.append(f"{function} gives another answer when {p.get('read_only', 'its arguments are read-only arrays')}")
    return problems


def _and(names: list[str]) -> str:
    return names[0] if len(names) == 1 else ", ".join(names[:-1]) + " and " + names[-1]


# ---------------------------------------------------------------- by name, with their parameters as data

def _experiment_problems(answer, p: dict) -> list[str]:
    """One run of the experiment (with its reseeded small run): its shape and that it was drawn, then
    p["test"]: plausible ranges, the std band, or the trend of p["stat"] near p["expected"]."""
    dims = p["dims"]
    first = shape_problems(answer, dims)
    if first:
        return first
    if p["test"] == "plausible":
        return plausible_problems(answer, dims, p["seq_len"]) or drawn_problems(answer, dims)
    first = drawn_problems(answer, dims)
    if first:
        return first
    if p["test"] == "std":
        return std_problems(answer, dims, p["std_rel"])
    if p["test"] == "trend":
        return trend_problems(answer, p["expected"], dims, p["stat"], p["slack"])
    return std_problems(answer, dims, p["std_rel"]) or trend_problems(answer, p["expected"], dims, "entropy",
                                                                      p["slack"])


# name -> (answer, parameters) -> what is wrong; the parameters are plain data (check_data holds them)
PROPERTIES = {
    "scaling_experiment": _experiment_problems,
    "scaling_seed": seed_problems,
    "scaling_spread": spread_problems,
    "scaling_figure": lambda answer, p: figure_problems(answer, p["results"]),
    "no_future": lambda answer, p: no_future_problems(answer, p["V"], p["changed"]),
    "structure": lambda answer, p: structure_problems(answer, p["x_shape"], p["heads"]),
    "arguments": arguments_problems,
}
