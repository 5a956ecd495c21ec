"""A matrix of an answer as an inline SVG heat map: the student's matrix beside the expected one,
one colour scale, the values written in the cells of small matrices. Attention weights are drawn
as weights (query position by key position, viridis from 0); an output as an output (position by
feature, a diverging scale centred on 0: its values have either sign). `LOOKS` holds both.

Written as SVG elements directly (rects and text; matplotlib's viridis and RdBu_r, kept as data
in colour_scales.py): a feedback page of a buggy submission has one such picture per failed
check, and drawing each with a matplotlib figure cost the grader far more CPU than writing its
elements. The same data gives the same bytes.
"""

from __future__ import annotations

from dataclasses import dataclass
from html import escape

import numpy as np

from autograder.reports.colour_scales import colours
from autograder.reports.svg_text import FONT

CELL_MAX = 36            # px per cell, at most
GRID = 190               # px of the largest side of a panel
PAD_LEFT, PAD_TOP, PAD_BOTTOM = 44, 28, 40
GAP = 40                 # between the panels
BAR_WIDTH, BAR_LABELS = 14, 34


@dataclass(frozen=True)
class MatrixLook:
    """How one kind of matrix is titled, labelled and coloured."""
    noun: str            # in the panel titles: "your weights", "expected weights"
    rows: str            # what a row is (the vertical axis)
    columns: str         # what a column is (the horizontal axis)
    colormap: str
    centred: bool        # the scale runs -top..top (values of either sign), else 0..top


LOOKS = {"weights": MatrixLook("weights", "query position", "key position", "viridis", centred=False),
         "output": MatrixLook("output", "position", "feature", "RdBu_r", centred=True)}


def _ink(fill: str) -> str:
    """Black or white text, whichever reads on the cell's colour."""
    r, g, b = (int(fill[i:i + 2], 16) for i in (1, 3, 5))
    return "black" if 0.299 * r + 0.587 * g + 0.114 * b > 140 else "white"


def _ticks(n: int) -> list[int]:
    step = 1 if n <= 8 else 2
    return list(range(0, n, step))


def _panel(data: np.ndarray, title: str, x0: float, cell: float, scale: tuple[float, float],
           look: MatrixLook) -> list[str]:
    rows, cols = data.shape
    width, height = cols * cell, rows * cell
    y0 = PAD_TOP
    out = [f'<text x="{x0 + width / 2:.1f}" y="{y0 - 9}" text-anchor="middle" font-size="13">{escape(title)}</text>']
    fills = colours(data, *scale, look.colormap)
    for ((i, j), _), fill in zip(np.ndenumerate(data), fills):
        out.append(f'<rect x="{x0 + j * cell:.1f}" y="{y0 + i * cell:.1f}" width="{cell:.1f}" height="{cell:.1f}" '
                   f'fill="{fill}"/>')
    if rows <= 6 and cols <= 6:
        for ((i, j), x), fill in zip(np.ndenumerate(data), fills):
            text = "?" if np.isnan(x) else f"{x:.2f}"
            out.append(f'<text x="{x0 + (j + 0.5) * cell:.1f}" y="{y0 + (i + 0.5) * cell + 3.5:.1f}" '
                       f'text-anchor="middle" font-size="10" fill="{_ink(fill)}">{text}</text>')
    out.append(f'<rect x="{x0}" y="{y0}" width="{width:.1f}" height="{height:.1f}" fill="none" stroke="black" '
               f'stroke-width="0.8"/>')
    for j in _ticks(cols):
        out.append(f'<text x="{x0 + (j + 0.5) * cell:.1f}" y="{y0 + height + 13:.1f}" text-anchor="middle" '
                   f'font-size="10">{j}</text>')
    for i in _ticks(rows):
        out.append(f'<text x="{x0 - 5}" y="{y0 + (i + 0.5) * cell + 3.5:.1f}" text-anchor="end" '
                   f'font-size="10">{i}</text>')
    out.append(f'<text x="{x0 + width / 2:.1f}" y="{y0 + height + 29:.1f}" text-anchor="middle" '
               f'font-size="11">{escape(look.columns)}</text>')
    ly = y0 + height / 2
    out.append(f'<text x="{x0 - 28}" y="{ly:.1f}" text-anchor="middle" font-size="11" '
               f'transform="rotate(-90 {x0 - 28} {ly:.1f})">{escape(look.rows)}</text>')
    return out


def matrices_svg(student: np.ndarray, expected: np.ndarray, look: MatrixLook) -> str:
    """Two 2-D arrays (nan: a value that could not be read) as one <svg> element, drawn as `look` says."""
    both = np.concatenate([student.ravel(), expected.ravel()])
    finite = np.abs(both[np.isfinite(both)])
    top = max(1.0, float(finite.max())) if finite.size else 1.0
    low = -top if look.centred else 0.0
    rows = max(student.shape[0], expected.shape[0])
    cell = min(CELL_MAX, GRID / max(rows, student.shape[1], expected.shape[1]))
    panel_w = max(student.shape[1], expected.shape[1]) * cell
    parts = _panel(student, f"your {look.noun}", PAD_LEFT, cell, (low, top), look)
    second = PAD_LEFT + panel_w + GAP + PAD_LEFT - 10
    parts += _panel(expected, f"expected {look.noun}", second, cell, (low, top), look)
    bar_x, bar_h = second + expected.shape[1] * cell + 22, rows * cell
    bands = 32                                  # the colour bar: bands of the scale, top to bottom
    band_fills = colours(top - (top - low) * (np.arange(bands) + 0.5) / bands, low, top, look.colormap)
    for k in range(bands):
        parts.append(f'<rect x="{bar_x:.1f}" y="{PAD_TOP + k * bar_h / bands:.2f}" width="{BAR_WIDTH}" '
                     f'height="{bar_h / bands + 0.3:.2f}" fill="{band_fills[k]}"/>')
    parts.append(f'<rect x="{bar_x:.1f}" y="{PAD_TOP}" width="{BAR_WIDTH}" height="{bar_h:.1f}" fill="none" '
                 f'stroke="black" stroke-width="0.6"/>')
    for frac in (0.0, 0.5, 1.0):
        y = PAD_TOP + bar_h * (1 - frac)
        parts.append(f'<text x="{bar_x + BAR_WIDTH + 4:.1f}" y="{y + 3.5:.1f}" font-size="10">'
                     f'{low + (top - low) * frac:.2g}</text>')
    width = bar_x + BAR_WIDTH + BAR_LABELS
    height = PAD_TOP + bar_h + PAD_BOTTOM
    return (f'<svg xmlns="http://www.w3.org/2000/svg" width="{width:.0f}" height="{height:.0f}" '
            f'viewBox="0 0 {width:.0f} {height:.0f}" {FONT}>' + "".join(parts) + "</svg>")
