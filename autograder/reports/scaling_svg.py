"""The scaling exercise's pictures as inline SVG.

`scaling_svg`: the statistics against the reference curves, one panel per statistic (std,
entropy, max_weight), x = d on a log scale, the reference's unscaled and scaled curves in grey,
the student's in colour with markers, a legend in the first panel.
`plot_svg`: the lines of the student's plot beside the results they were given to plot.

Written as SVG elements directly: a matplotlib figure cost the grader CPU per picture (a buggy
scaling submission has several), and matplotlib's import CPU and memory once a run.
"""

from __future__ import annotations

import math
from html import escape

from autograder.reports.svg_text import FONT, nice_ticks, text_width

PANEL_W, PANEL_H = 200, 150
LEFT, GAP, TOP, BOTTOM = 48, 56, 26, 40
STYLES = {  # (series, variant) -> stroke, width, dash, markers
    ("expected", "unscaled"): ("#999999", 3.0, "", False),
    ("student", "unscaled"): ("#1f77b4", 1.5, "", True),
    ("expected", "scaled"): ("#999999", 3.0, "7 4", False),
    ("student", "scaled"): ("#ff7f0e", 1.5, "5 3", True),
}
LABELS = {"expected": "reference", "student": "yours"}


def _ticks(lo: float, hi: float) -> list[float]:
    return [float(t) for t in nice_ticks(lo, hi, most=5) if lo - 1e-12 <= t <= hi + 1e-12]


def _range(values: list[float]) -> tuple[float, float]:
    lo, hi = (min(values), max(values)) if values else (0.0, 1.0)
    pad = (hi - lo) * 0.06 or max(abs(hi) * 0.06, 0.05)
    return lo - pad, hi + pad


def _label(t: float) -> str:
    return f"{t:.3g}"


def _panel(x0: float, stat: str, dims: list[int], series: dict, legend: bool) -> list[str]:
    lo, hi = _range([v for line in series.values() for v in line if v is not None and math.isfinite(v)])
    logs = [math.log2(d) for d in dims]
    span = (max(logs) - min(logs)) or 1.0

    def px(d_log: float) -> float:
        return x0 + 8 + (d_log - min(logs)) / span * (PANEL_W - 16)

    def py(v: float) -> float:
        return TOP + (hi - v) / (hi - lo) * PANEL_H

    out = [f'<text x="{x0 + PANEL_W / 2:.1f}" y="{TOP - 9}" text-anchor="middle" font-size="13">{escape(stat)}</text>',
           f'<rect x="{x0}" y="{TOP}" width="{PANEL_W}" height="{PANEL_H}" fill="none" stroke="black" '
           f'stroke-width="0.8"/>']
    for t in _ticks(lo, hi):
        y = py(t)
        out.append(f'<line x1="{x0 - 4}" y1="{y:.1f}" x2="{x0}" y2="{y:.1f}" stroke="black" stroke-width="0.8"/>')
        out.append(f'<text x="{x0 - 6}" y="{y + 3.5:.1f}" text-anchor="end" font-size="10">{_label(t)}</text>')
    for d, d_log in zip(dims, logs):
        x = px(d_log)
        out.append(f'<line x1="{x:.1f}" y1="{TOP + PANEL_H}" x2="{x:.1f}" y2="{TOP + PANEL_H + 4}" stroke="black" '
                   f'stroke-width="0.8"/>')
        out.append(f'<text x="{x:.1f}" y="{TOP + PANEL_H + 16}" text-anchor="middle" font-size="10">{d}</text>')
    out.append(f'<text x="{x0 + PANEL_W / 2:.1f}" y="{TOP + PANEL_H + 32}" text-anchor="middle" '
               f'font-size="11">d (log scale)</text>')
    for (who, variant), ys in series.items():
        stroke, width, dash, markers = STYLES[(who, variant)]
        points = [(px(lg), py(v)) for lg, v in zip(logs, ys) if v is not None and math.isfinite(v)]
        if len(points) > 1:
            path = " ".join(f"{x:.1f},{y:.1f}" for x, y in points)
            dashes = f' stroke-dasharray="{dash}"' if dash else ""
            out.append(f'<polyline points="{path}" fill="none" stroke="{stroke}" stroke-width="{width}"{dashes}/>')
        if markers:
            out += [f'<circle cx="{x:.1f}" cy="{y:.1f}" r="3.2" fill="{stroke}"/>' for x, y in points]
    if legend:
        for k, (who, variant) in enumerate(STYLES):
            stroke, width, dash, markers = STYLES[(who, variant)]
            y = TOP + 10 + 13 * k
            dashes = f' stroke-dasharray="{dash}"' if dash else ""
            out.append(f'<line x1="{x0 + 6}" y1="{y}" x2="{x0 + 26}" y2="{y}" stroke="{stroke}" '
                       f'stroke-width="{width}"{dashes}/>')
            if markers:
                out.append(f'<circle cx="{x0 + 16}" cy="{y}" r="3" fill="{stroke}"/>')
            out.append(f'<text x="{x0 + 30}" y="{y + 3}" font-size="9">{LABELS[who]}, {variant}</text>')
    return out


def scaling_svg(dims: list[int], student: dict, expected: dict, stats: tuple[str, ...]) -> str:
    """`student`, `expected`: {str(d): {"<stat>_<variant>": value or None}} as pictures.py keeps them."""
    def line(table: dict, key: str) -> list[float | None]:
        return [table.get(str(d), {}).get(key) for d in dims]

    parts = []
    for k, stat in enumerate(stats):
        series = {(who, variant): line(table, f"{stat}_{variant}")
                  for who, table in (("expected", expected), ("student", student))
                  for variant in ("unscaled", "scaled")}
        series = {key: series[key] for key in STYLES}      # drawing order: reference under the student's
        parts += _panel(LEFT + k * (PANEL_W + GAP), stat, dims, series, legend=k == 0)
    width = LEFT + len(stats) * PANEL_W + (len(stats) - 1) * GAP + 12
    height = TOP + PANEL_H + BOTTOM
    return (f'<svg xmlns="http://www.w3.org/2000/svg" width="{width}" height="{height}" '
            f'viewBox="0 0 {width} {height}" {FONT}>' + "".join(parts) + "</svg>")



# ---------------------------------------------------------------- the student's plot

CYCLE = ("#1f77b4", "#ff7f0e", "#2ca02c", "#d62728", "#9467bd", "#8c564b", "#e377c2", "#7f7f7f", "#bcbd22",
         "#17becf")      # matplotlib's default line colours, in its order
PLOT_W, LEGEND_ROW, LEGEND_TEXT = 240, 14, 10


def _plot_panel(x0: float, width: float, title: str, lines: list[dict], x_label: str) -> list[str]:
    """One panel of `lines` ({"x", "y", "label", "colour", "dash"}): x on a log2 scale when every x
    is positive and they span 8x or more (the dims), else linear; y linear; a legend below."""
    xs = [x for ln in lines for x in ln["x"] if x is not None and math.isfinite(x)]
    ys = [y for ln in lines for y in ln["y"] if y is not None and math.isfinite(y)]
    log_x = bool(xs) and min(xs) > 0 and max(xs) >= 8 * min(xs)
    fx = math.log2 if log_x else (lambda v: v)
    x_lo, x_hi = (min(map(fx, xs)), max(map(fx, xs))) if xs else (0.0, 1.0)
    x_lo, x_hi = (x_lo - 0.5, x_hi + 0.5) if x_lo == x_hi else (x_lo, x_hi)
    y_lo, y_hi = _range(ys)

    def px(v: float) -> float:
        return x0 + 8 + (fx(v) - x_lo) / (x_hi - x_lo) * (width - 16)

    def py(v: float) -> float:
        return TOP + (y_hi - v) / (y_hi - y_lo) * PANEL_H

    bottom = TOP + PANEL_H
    out = [f'<text x="{x0 + width / 2:.1f}" y="{TOP - 9}" text-anchor="middle" font-size="13">{escape(title)}</text>',
           f'<rect x="{x0}" y="{TOP}" width="{width}" height="{PANEL_H}" fill="none" stroke="black" stroke-width="0.8"/>']
    for t in _ticks(y_lo, y_hi):
        out.append(f'<line x1="{x0 - 4}" y1="{py(t):.1f}" x2="{x0}" y2="{py(t):.1f}" stroke="black" stroke-width="0.8"/>')
        out.append(f'<text x="{x0 - 6}" y="{py(t) + 3.5:.1f}" text-anchor="end" font-size="10">{_label(t)}</text>')
    if log_x:
        x_ticks = [2.0 ** k for k in range(math.ceil(x_lo - 1e-9), math.floor(x_hi + 1e-9) + 1)]
        x_ticks = x_ticks[::2] if len(x_ticks) > 6 else x_ticks
    else:
        x_ticks = nice_ticks(x_lo, x_hi, most=5)
    for t in x_ticks:
        out.append(f'<line x1="{px(t):.1f}" y1="{bottom}" x2="{px(t):.1f}" y2="{bottom + 4}" stroke="black" '
                   f'stroke-width="0.8"/>')
        out.append(f'<text x="{px(t):.1f}" y="{bottom + 16}" text-anchor="middle" font-size="10">{_label(t)}</text>')
    out.append(f'<text x="{x0 + width / 2:.1f}" y="{bottom + 32}" text-anchor="middle" font-size="11">'
               f'{escape(x_label + (" (log scale)" if log_x else ""))}</text>')
    for ln in lines:
        dash = ' stroke-dasharray="5 3"' if ln["dash"] else ""
        segment: list[tuple[float, float]] = []
        for x, y in [*zip(ln["x"], ln["y"]), (None, None)]:     # a value that is not a number breaks the line
            if x is not None and y is not None and math.isfinite(x) and math.isfinite(y) and (x > 0 or not log_x):
                segment.append((px(x), py(y)))
                continue
            if len(segment) > 1:
                path = " ".join(f"{a:.1f},{b:.1f}" for a, b in segment)
                out.append(f'<polyline points="{path}" fill="none" stroke="{ln["colour"]}" stroke-width="1.5"{dash}/>')
            out += [f'<circle cx="{a:.1f}" cy="{b:.1f}" r="2.5" fill="{ln["colour"]}"/>' for a, b in segment]
            segment = []
    shown = [ln for ln in lines if ln["label"] is not None]
    for k, ln in enumerate(shown):
        y = bottom + 48 + LEGEND_ROW * k
        dash = ' stroke-dasharray="5 3"' if ln["dash"] else ""
        out.append(f'<line x1="{x0}" y1="{y - 3.5}" x2="{x0 + 20}" y2="{y - 3.5}" stroke="{ln["colour"]}" '
                   f'stroke-width="1.5"{dash}/>')
        out.append(f'<text x="{x0 + 26}" y="{y}" font-size="{LEGEND_TEXT}">{escape(ln["label"])}</text>')
    return out


def plot_svg(dims: list[int], student_lines: list[dict], expected: dict, stats: tuple[str, ...]) -> str:
    """The student's plot, as its lines (`student_lines`: {"label", "x", "y"} as pictures.py keeps
    them), beside the results they were given (`expected`: {str(d): {"<stat>_<variant>": value}})."""
    mine = [{"x": ln["x"], "y": ln["y"], "colour": CYCLE[k % len(CYCLE)], "dash": False,
             # as matplotlib's legend: a label starting with "_" is no entry ("_child0": none was given)
             "label": None if ln["label"].startswith("_") else ln["label"] or "(no label)"}
            for k, ln in enumerate(student_lines)]
    given = [{"x": list(dims), "y": [expected.get(str(d), {}).get(f"{stat}_{variant}") for d in dims],
              "colour": CYCLE[k % len(CYCLE)], "dash": variant == "scaled", "label": f"{stat}, {variant}"}
             for k, (stat, variant) in enumerate((s, v) for s in stats for v in ("unscaled", "scaled"))]
    widths = [max([PLOT_W] + [26 + text_width(ln["label"], LEGEND_TEXT) + 4 for ln in lines if ln["label"]])
              for lines in (mine, given)]
    parts = _plot_panel(LEFT, widths[0], "your plot (its lines)", mine, "x")
    second = LEFT + widths[0] + GAP
    parts += _plot_panel(second, widths[1], "the results you were given", given, "d")
    rows = max(sum(ln["label"] is not None for ln in lines) for lines in (mine, given))
    width = math.ceil(second + widths[1] + 12)
    height = TOP + PANEL_H + 48 + LEGEND_ROW * rows
    return (f'<svg xmlns="http://www.w3.org/2000/svg" width="{width}" height="{height}" '
            f'viewBox="0 0 {width} {height}" {FONT}>' + "".join(parts) + "</svg>")
