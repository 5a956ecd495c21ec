"""A student's figure is drawn in the sandbox's child as matplotlib draws it anywhere else: the
grader changes nothing of what student code computes or draws (tight_layout lays the axes out,
text is measured by its glyphs), and the figure is described the same as outside the sandbox."""

from __future__ import annotations

import textwrap

import matplotlib

matplotlib.use("Agg")

from autograder.judge.convert import describe_figure  # noqa: E402

STUDENT = """
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


def laid_out(results):
    fig, ax = plt.subplots()
    ax.set_ylabel("a long label that tight_layout makes room for")
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


def _here(name: str):
    namespace: dict = {}
    exec(compile(textwrap.dedent(STUDENT), "scaling.py", "exec"), namespace)   # the same code, in this process
    return namespace[name](RESULTS)


def _in_child(sandbox, name: str, returns: str):
    with sandbox.session("scaling", textwrap.dedent(STUDENT), "scaling.py") as s:
        out = s.call(name, [RESULTS], returns=returns)
    assert out.status == "ok", out
    return out.value


def test_tight_layout_lays_the_axes_out_in_the_child(sandbox):
    here = _here("laid_out")
    assert here[0]["left"] != 0.125           # the long label moved the axes off matplotlib's default
    assert _in_child(sandbox, "laid_out", "float_dict_dict") == here


def test_text_is_measured_by_its_glyphs_in_the_child(sandbox):
    assert _in_child(sandbox, "measured", "float_dict_dict") == _here("measured")


def test_a_laid_out_figure_is_described_as_outside_the_sandbox(sandbox):
    here = describe_figure(_here("plot_scaling"))
    there = _in_child(sandbox, "plot_scaling", "figure")
    assert there == here
    assert [line["label"] for line in there["axes"][0]["lines"]] == [r"unscaled: $QK^\top$",
                                                                    r"scaled: $QK^\top/\sqrt{d}$"]
