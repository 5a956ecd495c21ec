"""A student's figure costs its author little in the child: matplotlib in the sandbox
(autograder/sandbox/inside/figure_cost.py) lays nothing out for tight_layout and measures text by an
estimate instead of laying out glyphs and parsing mathtext, and the figure is described the same as
with matplotlib's own layout and measure."""

from __future__ import annotations

import textwrap

import matplotlib

matplotlib.use("Agg")

from autograder.judge.convert import describe_figure  # noqa: E402
from autograder.sandbox.inside.figure_cost import EM_ADVANCE, EM_DESCENT  # noqa: E402

THREE_PANELS = """
import math
import matplotlib.pyplot as plt
from matplotlib.font_manager import FontProperties


def plot_scaling(results):
    dims = sorted(results)
    fig, axes = plt.subplots(1, 3, figsize=(14, 4))
    for ax, stat in zip(axes, ("std", "entropy", "max_weight")):
        ax.plot(dims, [results[d][stat + "_unscaled"] for d in dims], "o-", label=r"unscaled: $QK^\\top$")
        ax.plot(dims, [results[d][stat + "_scaled"] for d in dims], "s-", label=r"scaled: $QK^\\top/\\sqrt{d}$")
        ax.set_xscale("log", base=2)
        ax.set_xticks(dims, [str(d) for d in dims])
        ax.set_xlabel("d (dimension of queries and keys)")
        ax.set_ylabel(stat)
        ax.set_title(f"$\\\\mathrm{{{stat}}}$ against d")
        ax.legend(loc="best")
    fig.suptitle("Scaling by sqrt(d) keeps the softmax out of saturation")
    fig.tight_layout()
    return fig


def left_after_tight_layout(results):
    fig, ax = plt.subplots()
    ax.set_ylabel("a long label that tight_layout would make room for")
    plt.tight_layout()
    fig.tight_layout(pad=0.5)
    left = fig.subplotpars.left
    plt.close(fig)
    return {0: {"left": left}}


def measured(results):
    fig = plt.figure(dpi=72)
    renderer = fig.canvas.get_renderer()
    out = {}
    for i, (text, ismath) in enumerate((("abcd", False), (r"$\\sqrt{d}$", True))):
        width, height, descent = renderer.get_text_width_height_descent(text, FontProperties(size=12), ismath)
        out[i] = {"width": width, "height": height, "descent": descent}
    plt.close(fig)
    return out
"""

RESULTS = {d: {f"{stat}_{variant}": float(d) ** (0.5 if variant == "unscaled" else 0.1) + k
               for k, stat in enumerate(("std", "entropy", "max_weight")) for variant in ("unscaled", "scaled")}
           for d in (4, 16, 64, 256)}


def test_the_child_measures_text_by_an_estimate(sandbox):
    """12 pt at 72 dpi: 12 px per em; four characters are 4 * 0.6 em wide, mathtext alike (no parser)."""
    with sandbox.session("scaling", textwrap.dedent(THREE_PANELS), "scaling.py") as s:
        out = s.call("measured", [RESULTS], returns="float_dict_dict")
    assert out.status == "ok", out
    assert out.value[0] == {"width": 4 * EM_ADVANCE * 12, "height": 12.0, "descent": EM_DESCENT * 12}
    assert out.value[1]["width"] == len(r"$\sqrt{d}$") * EM_ADVANCE * 12


def test_a_laid_out_figure_is_described_as_with_matplotlibs_own_measure(sandbox):
    namespace: dict = {}
    exec(compile(textwrap.dedent(THREE_PANELS), "scaling.py", "exec"), namespace)   # the kit's own code
    here = describe_figure(namespace["plot_scaling"](RESULTS))
    with sandbox.session("scaling", textwrap.dedent(THREE_PANELS), "scaling.py") as s:
        out = s.call("plot_scaling", [RESULTS], returns="figure")
    assert out.status == "ok", out
    assert out.value == here
    assert [line["label"] for line in out.value["axes"][0]["lines"]] == [r"unscaled: $QK^\top$",
                                                                        r"scaled: $QK^\top/\sqrt{d}$"]


def test_tight_layout_lays_nothing_out_in_the_child(sandbox):
    """Outside the sandbox the long y label moves the axes right; inside they stay at matplotlib's
    default (0.125), and the call returns without an error, whatever its arguments."""
    namespace: dict = {}
    exec(compile(textwrap.dedent(THREE_PANELS), "scaling.py", "exec"), namespace)   # the kit's own code
    assert namespace["left_after_tight_layout"](RESULTS)[0]["left"] != 0.125
    with sandbox.session("scaling", textwrap.dedent(THREE_PANELS), "scaling.py") as s:
        out = s.call("left_after_tight_layout", [RESULTS], returns="float_dict_dict")
    assert out.status == "ok", out
    assert out.value[0]["left"] == 0.125
