"""plot_scaling's figure is graded on what it says: each labelled line plots the
statistic its label names (scaled against unscaled, which statistic), the axes are labelled with
what they show, and swapped labels lose the plot's points with a hint that says which label goes
with which line. Honest styles keep passing."""

from __future__ import annotations

from pathlib import Path

import matplotlib
import pytest

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402

from autograder.diagnosis import explain as dg  # noqa: E402
from autograder.checks import CHECKS  # noqa: E402
from autograder.checks.base import Context, ReferenceImplementation, rng_for  # noqa: E402
from autograder.config import load_course  # noqa: E402
from autograder.judge.convert import describe_figure  # noqa: E402

ROOT = Path(__file__).resolve().parents[1]
COURSE = load_course(ROOT / "course.yml")
CHECK = next(c for c in CHECKS["scaling"] if c.id == "scaling.plot_scaling.figure")
INPUTS = CHECK.inputs(rng_for(COURSE.seed, CHECK.id))
RESULTS = INPUTS["results"]
DIMS = sorted(RESULTS)


def problems_of(fig) -> list[str]:
    answer = describe_figure(fig)
    plt.close(fig)
    return CHECK.compare(answer, None, Context(course=COURSE, inputs=INPUTS))


def ys(stat):
    return [RESULTS[d][stat] for d in DIMS]


def panels(labels=("unscaled", "scaled"), stats=("std", "entropy"), *, ylabels=None, xlabel="d", sup=False,
           fig_legend=False, log=False, guide=False):
    """One panel per statistic, one line per variant, labelled `labels` (unscaled first)."""
    fig, axes = plt.subplots(1, len(stats), squeeze=False)
    for ax, stat, ylabel in zip(axes[0], stats, ylabels or stats):
        for variant, label in zip(("unscaled", "scaled"), labels):
            ax.plot(DIMS, ys(f"{stat}_{variant}"), "o-", label=label)
        if guide:
            ax.plot(DIMS, [d ** 0.5 for d in DIMS], "k:", label=r"$\sqrt{d}$")
        if log:
            ax.set_xscale("log", base=2)
        if not sup:
            ax.set_xlabel(xlabel)
            ax.set_ylabel(ylabel)
        if not fig_legend:
            ax.legend()
    if sup:
        fig.supxlabel("d (key dimension)")
        fig.supylabel("value, averaged over trials")
    if fig_legend:
        fig.legend()
    return fig


@pytest.mark.parametrize("make", [
    lambda: panels(),
    lambda: panels(("UNSCALED", "Scaled")),
    lambda: panels(("no scaling", "with scaling")),
    lambda: panels(("raw scores", r"$QK^\top / \sqrt{d_k}$")),
    lambda: panels(("std_unscaled", "std_scaled"), stats=("std",)),
    lambda: panels(("unscaled: QK^T", "scaled by 1/sqrt(d)"), guide=True, log=True),
    lambda: panels(sup=True, fig_legend=True),
    lambda: panels(stats=("std", "entropy", "max_weight"),
                   ylabels=("std of the scores", "mean row entropy (nats)", "mean largest weight")),
    lambda: panels(xlabel="dimension d_k"),
], ids=["plain", "any_case", "no_with_scaling", "raw_sqrt", "keys", "guide_log", "figure_level", "three_panels",
        "d_k"])
def test_honest_figures_pass(make):
    assert problems_of(make()) == []


def test_one_panel_with_every_series_labelled_passes():
    fig, ax = plt.subplots()
    for stat in ("std", "entropy", "max_weight"):
        for variant in ("unscaled", "scaled"):
            ax.plot(DIMS, ys(f"{stat}_{variant}"), label=f"{stat.replace('_', ' ')} {variant}")
    ax.set(xlabel="d", ylabel="statistic", title="scaled vs unscaled")
    ax.legend()
    assert problems_of(fig) == []


def test_swapped_labels_fail_and_say_which_label_goes_with_which_line():
    problems = problems_of(panels(("scaled", "unscaled"), stats=("std",)))
    assert any("'scaled' and 'unscaled' are swapped" in p for p in problems), problems
    swap = next(p for p in problems if "swapped" in p)
    assert "labelled 'scaled' plots std_unscaled" in swap and "'unscaled' goes with the first line" in swap


def test_the_hint_of_swapped_labels_says_which_label_goes_with_which_line():
    fig = panels(("scaled", "unscaled"), stats=("std",))
    answer = describe_figure(fig)
    plt.close(fig)
    found = dg.diagnose(CHECK, INPUTS, answer, Context(course=COURSE, inputs=INPUTS), None)
    assert found is not None and "'scaled' and 'unscaled' are swapped" in found.hint, found


@pytest.mark.parametrize("labels,ylabel,said", [
    (("entropy unscaled", "entropy scaled"), "std", "but its label says the entropy"),
    (("mean unscaled", "mean scaled"), "value", "but its label says a mean"),
    (("std unscaled", "std (no scaling)"), "std", "but its label says the spread (std) unscaled"),
])
def test_a_label_naming_another_statistic_fails(labels, ylabel, said):
    problems = problems_of(panels(labels, stats=("std",), ylabels=(ylabel,)))
    assert any(said in p for p in problems), problems


def test_axes_must_be_labelled_with_what_they_show():
    assert any("x axis is labelled 'value'" in p for p in problems_of(panels(xlabel="value")))
    wrong_y = problems_of(panels(stats=("std",), ylabels=("entropy (nats)",)))
    assert any("y axis labelled 'entropy (nats)' says the entropy, but its lines show the spread" in p
               for p in wrong_y), wrong_y


def test_swapped_labels_lose_the_plot_points_through_the_full_grade(tmp_path):
    from autograder.grading.submission import grade_submission
    from autograder.sandbox import Sandbox

    source = (ROOT / "solutions" / "scaling.py").read_text(encoding="utf-8")
    unscaled, scaled = 'label=r"unscaled: $QK^\\top$"', 'label=r"scaled: $QK^\\top/\\sqrt{d}$"'
    assert unscaled in source and scaled in source
    (tmp_path / "scaling.py").write_text(source.replace(unscaled, "@@").replace(scaled, unscaled).replace("@@", scaled),
                                         encoding="utf-8")
    with Sandbox(COURSE.limits) as sandbox:
        result = grade_submission(tmp_path, COURSE, sandbox, stems=("scaling",)).exercises[0]
    figure = next(c for c in result.checks if c.check_id == CHECK.id)
    assert figure.status == "failed" and figure.score == 0
    assert "are swapped" in figure.hint and "goes with the first line" in figure.hint, figure.hint
    assert all(c.passed for c in result.checks if c.check_id != CHECK.id)
