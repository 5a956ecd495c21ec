"""The class report's pictures, drawn by the kit from the summary as inline SVG: the score
distribution, pass rates per exercise and per check (one chart per exercise), and the
check-by-student heat map.

Written as SVG elements directly, as the feedback pages' pictures are (heatmap_svg.py): drawn with
matplotlib, these pictures were slow to draw at the end of every class run, on one core while the
other idled. Text is drawn at about the size it is read (12 px; 11 px for tick labels); each label
is measured in the font the page names first (DejaVu Sans' advance widths, a table written from
matplotlib's copy of the font: svg_text.py), so a long label widens its picture instead of being
clipped. Every text is escaped. The heat map's cells are one small PNG (a pixel per cell, or per
check and averaged rows in a large class, drawn large without smoothing): an SVG element per cell
would make a large class's page megabytes.
"""

from __future__ import annotations

import base64
import io
import math
from html import escape
from typing import TYPE_CHECKING

import numpy as np
from markupsafe import Markup

from autograder.reports.svg_text import FONT, nice_ticks, text_width
from autograder.judge.words import counted

if TYPE_CHECKING:
    from autograder.reports.class_summary import StudentRow

# Heat map colours per status letter (class_summary.STATUS_CODE).
COLOURS = {"P": (0.20, 0.63, 0.33), "F": (0.84, 0.19, 0.15), "E": (0.55, 0.10, 0.55),
           "N": (0.99, 0.75, 0.25), "M": (0.88, 0.88, 0.88)}
LEGEND = {"P": "passed", "F": "wrong answer", "E": "error (raised, hung, crashed, refused)",
          "N": "not implemented", "M": "not submitted"}
NAMED_ROWS = 60          # up to this many students, the heat map names each row
CELL = 16                # px of a heat map cell (a named row is this tall too)
TEXTURE_MAX = 800        # px: the tallest heat map of unnamed rows (a large class is a texture)
TEXT, SMALL = 12, 11     # px: labels, tick labels and values
BAR_PX = 3.0             # px per percent of a pass-rate bar (100% is 300 px)
INK, MUTED, FRAME = "#222", "#444", "#888"


def legend_colours() -> dict[str, str]:
    """Status letter -> CSS colour of the heat map's legend."""
    return {k: _hex(rgb) for k, rgb in COLOURS.items()}


# ====================================================================== charts

def histogram(values: list[float], top: float) -> Markup:
    """How many students scored what: up to 24 bins from 0 to `top`."""
    bins = np.linspace(0, top, min(24, int(top) + 1) + 1) if top > 0 else 10
    counts, edges = np.histogram(np.asarray(values, dtype=float), bins=bins)
    left, plot_top, plot_w, plot_h = 48, 8, 520, 170
    lo, hi = float(edges[0]), float(edges[-1])
    pad = 0.03 * (hi - lo or 1.0)
    x = _scale(lo - pad, hi + pad, left, left + plot_w)
    y = _scale(0, max(1, int(counts.max(initial=0))) * 1.05, plot_top + plot_h, plot_top)
    parts = []
    for count, a, b in zip(counts, edges[:-1], edges[1:]):
        if count:
            parts.append(f'<rect x="{x(a):.1f}" y="{y(count):.1f}" width="{x(b) - x(a):.1f}" '
                         f'height="{y(0) - y(count):.1f}" fill="#3b7dd8" stroke="white" stroke-width="1"/>')
    parts += _frame(left, plot_top, plot_w, plot_h)
    for t in nice_ticks(lo, hi, integer=True):
        parts += _x_tick(x(t), plot_top + plot_h, _number(t))
    for t in nice_ticks(0, max(1, int(counts.max(initial=0))), integer=True, most=5):
        parts.append(f'<line x1="{left - 4}" x2="{left}" y1="{y(t):.1f}" y2="{y(t):.1f}" stroke="{FRAME}"/>')
        parts.append(_text(left - 7, y(t) + 4, _number(t), SMALL, "end"))
    parts.append(_text(left + plot_w / 2, plot_top + plot_h + 34, f"total score (of {top:g})", TEXT, "middle"))
    mid = plot_top + plot_h / 2
    parts.append(_text(14, mid, "students", TEXT, "middle", f'transform="rotate(-90 14 {mid:.1f})"'))
    return _svg(left + plot_w + 12, plot_top + plot_h + 44, parts)


def pass_rates(labels: list[str], rates: list[float | None]) -> Markup:
    """Horizontal bars, one per label, green from 80%, amber from 50%, red below; the label
    column is as wide as the longest label."""
    left = math.ceil(max((text_width(label, TEXT) for label in labels), default=0)) + 12
    row, plot_top = 20, 6
    plot_w, plot_h = 112 * BAR_PX, row * len(labels)
    parts = []
    for i, (label, rate) in enumerate(zip(labels, rates)):
        mid = plot_top + (i + 0.5) * row
        parts.append(_text(left - 6, mid + 4, label, TEXT, "end"))
        if rate is None:
            parts.append(_text(left + 4, mid + 4, "not graded", SMALL, fill=MUTED))
            continue
        percent = 100 * rate
        colour = "#2e9e55" if percent >= 80 else "#e0a030" if percent >= 50 else "#d6302a"
        width = min(percent, 100) * BAR_PX
        parts.append(f'<rect x="{left}" y="{mid - 7:.1f}" width="{width:.1f}" height="14" fill="{colour}"/>')
        parts.append(_text(left + width + 4, mid + 4, f"{percent:.0f}%", SMALL, fill=MUTED))
    parts += _frame(left, plot_top, plot_w, plot_h)
    for t in range(0, 101, 20):
        parts += _x_tick(left + t * BAR_PX, plot_top + plot_h, str(t))
    parts.append(_text(left + plot_w / 2, plot_top + plot_h + 34, "% of graded submissions that pass", TEXT,
                       "middle"))
    return _svg(left + plot_w + 10, plot_top + plot_h + 44, parts)


# ====================================================================== the heat map

def heat_map(rows: list[StudentRow], checks: list[dict], label=None) -> Markup | None:
    """The check-by-student matrix (None when no check ran). Columns are grouped by exercise: the
    stem above, the rest of the id below; up to NAMED_ROWS students each row is named (`label` of
    the student's id, default the id), beyond that the rows are a texture in the order of the table
    below it."""
    label = label or (lambda student: student)
    rows = [r for r in rows if r.checks]
    if not rows:
        return None
    columns = max(len(r.checks) for r in rows)
    checks = checks[:columns]
    named = len(rows) <= NAMED_ROWS
    names = [c["check_id"].split(".", 1)[-1] for c in checks] + [""] * (columns - len(checks))
    stems = [c["exercise"] for c in checks] + [""] * (columns - len(checks))
    grid_h = CELL * len(rows) if named else min(TEXTURE_MAX, max(2 * len(rows), 120))
    left = (math.ceil(max(text_width(label(r.student), TEXT) for r in rows)) + 12) if named else 28
    top = 24
    grid_w = CELL * columns
    below = math.ceil(max((text_width(n, SMALL) for n in names), default=0)) + 10
    starts = [j for j in range(columns) if j == 0 or stems[j] != stems[j - 1]]
    ends = starts[1:] + [columns]
    heads = [(left + CELL * (a + b) / 2, stems[a]) for a, b in zip(starts, ends)]
    right = max([left + grid_w] + [x + text_width(s, TEXT) / 2 for x, s in heads]) + 8
    cells = _cells_png(rows, columns, height=None if grid_h >= len(rows) else grid_h)
    parts = [f'<image x="{left}" y="{top}" width="{grid_w}" height="{grid_h}" preserveAspectRatio="none" '
             f'style="image-rendering:pixelated" href="{cells}"/>']
    for j in starts[1:]:
        x = left + CELL * j
        parts.append(f'<line x1="{x}" x2="{x}" y1="{top}" y2="{top + grid_h}" stroke="white" stroke-width="3"/>')
    for x, stem in heads:
        parts.append(_text(x, top - 8, stem, TEXT, "middle"))
    for j, name in enumerate(names):
        x, y = left + CELL * j + CELL / 2 + 4, top + grid_h + 6
        parts.append(_text(x, y, name, SMALL, "end", f'transform="rotate(-90 {x:.1f} {y:.1f})"'))
    if named:
        for i, r in enumerate(rows):
            parts.append(_text(left - 6, top + CELL * i + CELL / 2 + 4, label(r.student), TEXT, "end"))
    else:
        mid = top + grid_h / 2
        parts.append(_text(16, mid, f"{counted(len(rows), 'student')}, in the order of the table below", TEXT, "middle",
                           f'transform="rotate(-90 16 {mid:.1f})"'))
    return _svg(right, top + grid_h + below, parts, heat=True)


def _cells_png(rows: list[StudentRow], columns: int, height: int | None = None) -> str:
    """The cells as a PNG data URI: one pixel per (student, check), white where a row is short.
    With a `height` under the number of rows (a large class), the rows are averaged into `height`
    pixels (a box filter: no student's row is dropped, as a browser's nearest-pixel scaling would).
    Either way a column stays one pixel wide: the page draws it CELL wide without smoothing
    (`image-rendering: pixelated`, a whole number of device pixels), so no column is blurred into
    its neighbour and the image holds one pixel per column, not CELL."""
    from PIL import Image

    palette = np.full((256, 3), 255, dtype=np.uint8)      # a status letter's byte -> its colour
    for code, rgb in COLOURS.items():
        palette[ord(code)] = _rgb255(rgb)
    # One byte per cell (a short row padded with a byte of no colour): a large class's cells are
    # coloured at once, not one by one in Python.
    letters = "".join(r.checks[:columns].ljust(columns, "\0") for r in rows)
    codes = np.frombuffer(letters.encode("latin-1", "replace"), dtype=np.uint8).reshape(len(rows), columns)
    image = Image.fromarray(palette[codes], "RGB")
    if height is not None:
        image = image.resize((columns, height), Image.BOX)
    buf = io.BytesIO()
    image.save(buf, format="PNG")
    return "data:image/png;base64," + base64.b64encode(buf.getvalue()).decode()


# ====================================================================== text and SVG

def _text(x: float, y: float, text: str, size: int, anchor: str = "start", extra: str = "",
          fill: str = INK) -> str:
    return (f'<text x="{x:.1f}" y="{y:.1f}" font-size="{size}" text-anchor="{anchor}" fill="{fill}" {extra}>'
            f'{escape(text)}</text>')


def _svg(width: float, height: float, parts: list[str], heat: bool = False) -> Markup:
    """The picture's <svg> element at its size in px (the template's <figure> names it)."""
    w, h = math.ceil(width), math.ceil(height)
    kind = ' class="heat"' if heat else ""
    return Markup(f'<svg xmlns="http://www.w3.org/2000/svg"{kind} width="{w}" height="{h}" viewBox="0 0 {w} {h}" '
                  f'{FONT}>' + "".join(parts) + "</svg>")


def _frame(x: float, y: float, w: float, h: float) -> list[str]:
    return [f'<rect x="{x}" y="{y}" width="{w:.1f}" height="{h:.1f}" fill="none" stroke="{FRAME}" stroke-width="1"/>']


def _x_tick(x: float, y: float, label: str) -> list[str]:
    return [f'<line x1="{x:.1f}" x2="{x:.1f}" y1="{y}" y2="{y + 4}" stroke="{FRAME}"/>',
            _text(x, y + 16, label, SMALL, "middle")]


def _scale(lo: float, hi: float, a: float, b: float):
    span = (hi - lo) or 1.0
    return lambda v: a + (float(v) - lo) * (b - a) / span


def _number(v: float) -> str:
    return f"{v:g}"


def _rgb255(rgb: tuple[float, float, float]) -> tuple[int, int, int]:
    return tuple(round(255 * c) for c in rgb)


def _hex(rgb: tuple[float, float, float]) -> str:
    return "#%02x%02x%02x" % _rgb255(rgb)
