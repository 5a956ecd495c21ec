"""What a plotted figure says: which statistic of `results` each line draws, and what its label
and its axes claim it draws (plot_scaling's figure, read from its JSON description).

A label claims a variant ("unscaled", "no scaling", "raw" against "scaled", "with scaling",
"/ sqrt(d_k)") and maybe a statistic ("std", "spread", "entropy", "max weight", or only
"mean"); a line's label that names no statistic takes the one its panel's y label names. A
claim is checked only on lines whose values are statistics of `results` (a sqrt(d) guide line
claims nothing); words that claim nothing ("value", "scaling", "scaled vs unscaled") are never
held against a line.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

import numpy as np

from .answers import all_close

STATS = ("std_unscaled", "std_scaled", "entropy_unscaled", "entropy_scaled",
         "max_weight_unscaled", "max_weight_scaled")
KIND_WORDS = {     # the statistic a text names, by its words (the first kind found wins)
    "entropy": re.compile(r"entrop"),
    "max_weight": re.compile(r"\bmax|largest|biggest|\bpeak|\btop weight|highest"),   # not LaTeX's \top
    "std": re.compile(r"\bstd|spread|deviation|σ|\bsigma"),
}
MEAN_WORDS = re.compile(r"\bmean\b|\baverage\b|\bavg\b")     # a mean, and no other statistic named
UNSCALED_WORDS = re.compile(r"un ?scaled|\bno(t)? ?scal|without ?scal|\braw\b|\bunnormali[sz]ed")
SCALED_WORDS = re.compile(r"\bscaled\b|with ?scaling|sqrt|√|divided|\\sqrt|/ ?d\b")
D_WORDS = re.compile(r"(^|[^a-z])d( ?k)?([^a-z]|$)|dimension|\bdim\b|\bdims\b")
KIND_NAMES = {"std": "the spread (std)", "entropy": "the entropy", "max_weight": "the largest weight",
              "mean": "a mean"}


def _words(text) -> str:
    return " ".join(str(text or "").lower().replace("_", " ").replace("-", " ").split())


def claimed_variant(text) -> str | None:
    """'unscaled', 'scaled', or None when the text names neither or both ("scaled vs unscaled")."""
    words = _words(text)
    unscaled = bool(UNSCALED_WORDS.search(words))
    scaled = bool(SCALED_WORDS.search(UNSCALED_WORDS.sub(" ", words)))
    return None if unscaled == scaled else ("unscaled" if unscaled else "scaled")


def claimed_kind(text) -> str | None:
    """'std', 'entropy', 'max_weight', 'mean' (a mean and nothing more specific), or None."""
    words = _words(text)
    for kind, pattern in KIND_WORDS.items():
        if pattern.search(words):
            return kind
    return "mean" if MEAN_WORDS.search(words) else None


def names_d(text) -> bool:
    return bool(D_WORDS.search(_words(text)))


@dataclass(frozen=True)
class Series:
    """One line of a student's figure, as read from its artists: what it draws and claims to."""
    label: str
    panel: int                # index of its axes in the figure
    drawn: tuple[str, ...]    # the statistics of `results` its values are (empty: none of them)
    variant: str | None       # what its label claims
    kind: str | None          # what its label (or its panel's y label) claims

    def fits(self, stat: str) -> bool:
        kind, variant = stat.rsplit("_", 1)
        return (self.variant in (None, variant)) and (self.kind in (None, kind))

    @property
    def honest(self) -> bool:
        return not self.drawn or any(self.fits(stat) for stat in self.drawn)


def labelled_by_legend(ax: dict) -> list[dict]:
    """`ax.legend(["unscaled", "scaled"])` labels the lines in order without setting their labels."""
    lines = ax.get("lines", [])
    legend = ax.get("legend", [])
    if legend and all(str(ln.get("label", "")).startswith("_") for ln in lines):
        return [ln | {"label": text} for ln, text in zip(lines, legend)]
    return lines


def floats(values) -> np.ndarray | None:
    try:
        return np.array([float(v) for v in values], dtype=np.float64)
    except (TypeError, ValueError):
        return None


def x_order(x, dims) -> np.ndarray | None:
    """The order that sorts a line's x values, when they are the dims (as numbers or as text)."""
    xs = floats(x)
    if xs is None or len(xs) != len(dims):
        return None
    order = np.argsort(xs, kind="stable")
    return order if all_close(xs[order], dims) else None


def statistics_drawn(line: dict, results: dict, dims: list) -> list[str]:
    """The statistics of `results` whose values, in the order of d, are the line's y values."""
    order, ys = x_order(line.get("x", []), dims), floats(line.get("y", []))
    if order is None or ys is None or len(ys) != len(dims):
        return []
    ys = ys[order]
    return [stat for stat in STATS
            if all_close(ys, [results[d][stat] for d in dims], rtol=1e-3, atol=1e-6)]


def labelled_series(figure: dict, results: dict) -> list[Series]:
    """Every labelled line of the figure plotted against d, with what it draws and what it claims."""
    dims = sorted(results)
    found = []
    for n, ax in enumerate(figure.get("axes", [])):
        panel_kind = claimed_kind(ax.get("ylabel"))
        panel_kind = None if panel_kind == "mean" else panel_kind      # "value, averaged": no statistic named
        for line in labelled_by_legend(ax):
            label = str(line.get("label") or "")
            if not label or label.startswith("_") or x_order(line.get("x", []), dims) is None:
                continue
            kind = claimed_kind(label)
            found.append(Series(label, n, tuple(statistics_drawn(line, results, dims)), claimed_variant(label),
                                kind if kind not in (None, "mean") or panel_kind is None else panel_kind))
    return found


def _said(stat: str) -> str:
    kind, variant = stat.rsplit("_", 1)
    return f"{stat} ({KIND_NAMES[kind]} of the {variant} scores)"


def label_problems(series: list[Series]) -> list[str]:
    """Lines whose label names another statistic than the one they draw; a swapped pair said as one."""
    wrong = [s for s in series if not s.honest]
    problems, told = [], set()
    for s in wrong:
        if s.label in told:
            continue
        partner = next((o for o in wrong if o is not s and o.label not in told and o.fits(s.drawn[0])
                        and s.fits(o.drawn[0])), None)
        if partner is not None:
            told |= {s.label, partner.label}
            problems.append(f"the labels {s.label!r} and {partner.label!r} are swapped: the line labelled "
                            f"{s.label!r} plots {_said(s.drawn[0])} and the one labelled {partner.label!r} plots "
                            f"{_said(partner.drawn[0])}; {partner.label!r} goes with the first line and "
                            f"{s.label!r} with the second")
            continue
        told.add(s.label)
        claim = " ".join(w for w in (KIND_NAMES.get(s.kind or "", ""), s.variant or "") if w)
        problems.append(f"the line labelled {s.label!r} plots {_said(s.drawn[0])}, but its label says {claim}")
    return problems


def axis_problems(figure: dict, series: list[Series]) -> list[str]:
    """x labels that do not name d; a y label that names another statistic than its panel's lines draw."""
    problems = []
    xlabels = [figure.get("supxlabel")] + [ax.get("xlabel") for ax in figure.get("axes", [])]
    for text in (t for t in xlabels if t):
        if not names_d(text):
            problems.append(f"the x axis is labelled {text!r}, but it shows d: say so in its label")
            break
    for n, ax in enumerate(figure.get("axes", [])):
        kind = claimed_kind(ax.get("ylabel"))
        drawn = {stat.rsplit("_", 1)[0] for s in series if s.panel == n for stat in s.drawn}
        if kind in KIND_NAMES and kind != "mean" and drawn and kind not in drawn:
            shown = " and ".join(KIND_NAMES[k] for k in sorted(drawn))
            problems.append(f"the y axis labelled {ax.get('ylabel')!r} says {KIND_NAMES[kind]}, but its lines "
                            f"show {shown}")
    return problems


def observer(check, inputs: dict, answer, expected, ctx) -> str | None:
    """For plot_scaling: which label goes with which line, when the labels say otherwise."""
    if not isinstance(answer, dict) or not isinstance(inputs.get("results"), dict):
        return None
    problems = label_problems(labelled_series(answer, inputs["results"]))
    return problems[0] if problems else None
