"""The scaling statistics against the reference curves as an inline SVG: one panel per statistic
(std, entropy, max_weight), x = d on a log scale, the reference's unscaled and scaled curves
in grey, the student's in colour with markers, a legend in the first panel.

Written as SVG elements directly (ticks from matplotlib's MaxNLocator): a matplotlib figure cost
about 0.15 s of the grader's CPU per picture, and a buggy scaling submission has several.
"""

from __future__ import annotations

import math
from html import escape

from autograder.reports.heatmap_svg import FONT   # the font every picture of the kit names

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
    from matplotlib.ticker import MaxNLocator

    return [float(t) for t in MaxNLocator(5).tick_values(lo, hi) if lo - 1e-12 <= t <= hi + 1e-12]


def _label(t: float) -> str:
    return f"{t:.3g}"


def _panel(x0: float, stat: str, dims: list[int], series: dict, legend: bool) -> list[str]:
    values = [v for line in series.values() for v in line if v is not None and math.isfinite(v)]
    lo, hi = (min(values), max(values)) if values else (0.0, 1.0)
    pad = (hi - lo) * 0.06 or max(abs(hi) * 0.06, 0.05)
    lo, hi = lo - pad, hi + pad
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

