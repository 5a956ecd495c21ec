"""The class report's pictures, drawn by the kit from the summary: the score distribution, pass
rates per exercise and per check (one chart per exercise), and the check-by-student heat map.

Each is markup the kit made (matplotlib's SVG, which escapes its text, or a PNG as a data URI),
handed to the template as `Markup`. Sizes are chosen so the text is drawn at about the size it
is read (about 12 px) at 800 px wide and up; long labels widen the figure (tight bounding box)
instead of being clipped.
"""

from __future__ import annotations

import base64
import io
import warnings

import numpy as np
from markupsafe import Markup

from autograder.reports.pictures import _pyplot, figure_svg

# Heat map colours per status letter (class_summary.STATUS_CODE).
COLOURS = {"P": (0.20, 0.63, 0.33), "F": (0.84, 0.19, 0.15), "E": (0.55, 0.10, 0.55),
           "N": (0.99, 0.75, 0.25), "M": (0.88, 0.88, 0.88)}
LEGEND = {"P": "passed", "F": "wrong answer", "E": "error (raised, hung, crashed, refused)",
          "N": "not implemented", "M": "not submitted"}
NAMED_ROWS = 60          # up to this many students, the heat map names each row
HEAT_MAP_MAX_INCHES = 8.0   # the tallest heat map of unnamed rows (600 students and more)
FONT = 9                 # points, for tick labels (12 px on screen)
CHART_WIDTH = 6.6        # inches a chart takes with its labels: one of two columns at 1400 px


def legend_colours() -> dict[str, str]:
    """Status letter -> CSS colour of the heat map's legend."""
    return {k: "#%02x%02x%02x" % tuple(round(255 * c) for c in rgb) for k, rgb in COLOURS.items()}


def histogram(values: list[float], top: float) -> Markup:
    plt = _pyplot()
    fig, ax = plt.subplots(1, 1, figsize=(6.4, 2.6))
    bins = np.linspace(0, top, min(24, int(top) + 1) + 1) if top > 0 else 10
    ax.hist(values, bins=bins, color="#3b7dd8", edgecolor="white")
    ax.set_xlabel(f"total score (of {top:g})")
    ax.set_ylabel("students")
    ax.yaxis.get_major_locator().set_params(integer=True)
    return _svg(fig)


def pass_rates(labels: list[str], rates: list[float | None]) -> Markup:
    """Horizontal bars, one per label, green from 80%, amber from 50%, red below. The bars get
    what the longest label leaves of CHART_WIDTH, so every chart fits its column unshrunk."""
    plt = _pyplot()
    label_inches = max(map(len, labels), default=0) * FONT * 0.6 / 72
    width = max(3.0, (CHART_WIDTH - label_inches - 0.4) / 0.89)     # 0.89: the axes' share (MARGINS)
    fig, ax = plt.subplots(1, 1, figsize=(width, 0.55 + 0.24 * len(labels)))
    y = np.arange(len(labels))
    values = [np.nan if r is None else 100 * r for r in rates]
    ax.barh(y, values, color=["#2e9e55" if (v or 0) >= 80 else "#e0a030" if (v or 0) >= 50 else "#d6302a"
                              for v in values])
    for yi, v in zip(y, values):
        ax.text(min(v, 100) + 1 if np.isfinite(v) else 1, yi, "not graded" if not np.isfinite(v) else f"{v:.0f}%",
                va="center", fontsize=FONT - 1, color="#444")
    ax.set_yticks(y, labels, fontsize=FONT)
    ax.invert_yaxis()
    ax.set_xlim(0, 112)
    ax.set_xticks([0, 20, 40, 60, 80, 100])
    ax.set_xlabel("% of graded submissions that pass", fontsize=FONT)
    ax.tick_params(axis="x", labelsize=FONT - 1)
    return _svg(fig)


def heat_map(rows: list[dict], checks: list[dict]) -> tuple[str, int] | None:
    """The check-by-student matrix as a PNG data URI and its width in pixels (None when no
    check ran). Columns are grouped by exercise: the stem above, the rest of the id below."""
    rows = [r for r in rows if r["checks"]]
    if not rows:
        return None
    width = max(len(r["checks"]) for r in rows)
    # 8-bit colours: matplotlib then resamples the image in bytes, not in float64 copies of it at the
    # PNG's size (a class of 2,000 students: about 140 MB of peak memory less at the end of the run).
    palette = {code: (*(round(255 * v) for v in rgb), 255) for code, rgb in COLOURS.items()}
    grid = np.full((len(rows), width, 4), 255, dtype=np.uint8)
    for i, r in enumerate(rows):
        for j, code in enumerate(r["checks"]):
            grid[i, j] = palette.get(code, (255, 255, 255, 255))
    checks = checks[:width]
    named = len(rows) <= NAMED_ROWS
    plt = _pyplot()
    # Unnamed rows (a large class) are a texture: at most 8 inches tall, so the image matplotlib
    # resamples (RGBA, float32, at the PNG's size) stops growing with the class (about 30 MB at most).
    height = min(40.0, 0.6 + 0.2 * len(rows)) if named else min(HEAT_MAP_MAX_INCHES, 0.6 + 0.012 * len(rows))
    fig, ax = plt.subplots(1, 1, figsize=(1.0 + 0.16 * width, height))
    ax.imshow(grid, aspect="auto", interpolation="nearest")
    ax.set_xticks(range(width), [c["check_id"].split(".", 1)[-1] for c in checks], rotation=90, fontsize=FONT - 1)
    starts = [j for j, c in enumerate(checks) if j == 0 or c["exercise"] != checks[j - 1]["exercise"]]
    for j in starts[1:]:
        ax.axvline(j - 0.5, color="white", linewidth=3)
    top = ax.secondary_xaxis("top")
    ends = starts[1:] + [width]
    top.set_xticks([(a + b - 1) / 2 for a, b in zip(starts, ends)], [checks[a]["exercise"] for a in starts],
                   fontsize=FONT)
    top.tick_params(length=0)
    if named:
        ax.set_yticks(range(len(rows)), [r["student"] for r in rows], fontsize=FONT)
    else:
        ax.set_yticks([])
        ax.set_ylabel(f"{len(rows)} students, in the order of the table below", fontsize=FONT)
    buf = io.BytesIO()
    with warnings.catch_warnings():    # a name in a script the font lacks: the table below shows it
        warnings.filterwarnings("ignore", message="Glyph .* missing from font")
        fig.savefig(buf, format="png", dpi=100, bbox_inches="tight", metadata={"Software": None})
    png = buf.getvalue()
    pixels = int.from_bytes(png[16:20], "big")          # the IHDR chunk's width
    return "data:image/png;base64," + base64.b64encode(png).decode(), pixels


def _svg(fig) -> Markup:
    return Markup(figure_svg(fig, tight=True))
