"""Attention weights as an inline SVG heat map: the student's matrix beside the expected one,
one colour scale (viridis, 0 to `top`), the values written in the cells of small matrices.

Written as SVG elements directly (rects and text, colours from matplotlib's viridis): a feedback
page of a buggy submission has one such picture per failed check, and drawing each with a
matplotlib figure cost about 0.15 s of the grader's CPU; this costs about a millisecond. The same
data gives the same bytes.
"""

from __future__ import annotations

from html import escape

import numpy as np

CELL_MAX = 36            # px per cell, at most
GRID = 190               # px of the largest side of a panel
PAD_LEFT, PAD_TOP, PAD_BOTTOM = 44, 28, 40
GAP = 40                 # between the panels
BAR_WIDTH, BAR_LABELS = 14, 34
FONT = 'font-family="DejaVu Sans, Bitstream Vera Sans, Arial, sans-serif"'


def _colours(values: np.ndarray, top: float) -> list[str]:
    """Viridis colours of `values` on the scale 0..top (one colormap call for them all); nan grey."""
    from matplotlib import colormaps

    values = np.asarray(values, dtype=float).ravel()
    rgba = colormaps["viridis"](np.clip(np.nan_to_num(values / top), 0.0, 1.0))
    return ["#d9d9d9" if not np.isfinite(x) else "#%02x%02x%02x" % tuple(round(c * 255) for c in rgb[:3])
            for x, rgb in zip(values, rgba)]


def _ticks(n: int) -> list[int]:
    step = 1 if n <= 8 else 2
    return list(range(0, n, step))


def _panel(data: np.ndarray, title: str, x0: float, cell: float, top: float) -> list[str]:
    rows, cols = data.shape
    width, height = cols * cell, rows * cell
    y0 = PAD_TOP
    out = [f'<text x="{x0 + width / 2:.1f}" y="{y0 - 9}" text-anchor="middle" font-size="13">{escape(title)}</text>']
    fills = iter(_colours(data, top))
    for (i, j), _ in np.ndenumerate(data):
        out.append(f'<rect x="{x0 + j * cell:.1f}" y="{y0 + i * cell:.1f}" width="{cell:.1f}" height="{cell:.1f}" '
                   f'fill="{next(fills)}"/>')
    if rows <= 6 and cols <= 6:
        for (i, j), x in np.ndenumerate(data):
            text = "?" if np.isnan(x) else f"{x:.2f}"
            colour = "white" if x < top / 2 else "black"
            out.append(f'<text x="{x0 + (j + 0.5) * cell:.1f}" y="{y0 + (i + 0.5) * cell + 3.5:.1f}" '
                       f'text-anchor="middle" font-size="10" fill="{colour}">{text}</text>')
    out.append(f'<rect x="{x0}" y="{y0}" width="{width:.1f}" height="{height:.1f}" fill="none" stroke="black" '
               f'stroke-width="0.8"/>')
    for j in _ticks(cols):
        out.append(f'<text x="{x0 + (j + 0.5) * cell:.1f}" y="{y0 + height + 13:.1f}" text-anchor="middle" '
                   f'font-size="10">{j}</text>')
    for i in _ticks(rows):
        out.append(f'<text x="{x0 - 5}" y="{y0 + (i + 0.5) * cell + 3.5:.1f}" text-anchor="end" '
                   f'font-size="10">{i}</text>')
    out.append(f'<text x="{x0 + width / 2:.1f}" y="{y0 + height + 29:.1f}" text-anchor="middle" '
               f'font-size="11">key position</text>')
    ly = y0 + height / 2
    out.append(f'<text x="{x0 - 28}" y="{ly:.1f}" text-anchor="middle" font-size="11" '
               f'transform="rotate(-90 {x0 - 28} {ly:.1f})">query position</text>')
    return out


def weights_svg(student: np.ndarray, expected: np.ndarray) -> str:
    """Two 2-D arrays (nan: a value that could not be read) as one <svg> element."""
    both = np.concatenate([student.ravel(), expected.ravel()])
    finite = np.abs(both[np.isfinite(both)])
    top = max(1.0, float(finite.max())) if finite.size else 1.0
    rows = max(student.shape[0], expected.shape[0])
    cols = max(student.shape[1], expected.shape[1])
    cell = min(CELL_MAX, GRID / max(rows, cols))
    panel_w = max(student.shape[1], expected.shape[1]) * cell
    parts = _panel(student, "your weights", PAD_LEFT, cell, top)
    second = PAD_LEFT + panel_w + GAP + PAD_LEFT - 10
    parts += _panel(expected, "expected weights", second, cell, top)
    bar_x, bar_h = second + expected.shape[1] * cell + 22, rows * cell
    bands = 32                                  # the colour bar: bands of the scale, top to bottom
    band_fills = _colours(top * (1 - (np.arange(bands) + 0.5) / bands), top)
    for k in range(bands):
        parts.append(f'<rect x="{bar_x:.1f}" y="{PAD_TOP + k * bar_h / bands:.2f}" width="{BAR_WIDTH}" '
                     f'height="{bar_h / bands + 0.3:.2f}" fill="{band_fills[k]}"/>')
    parts.append(f'<rect x="{bar_x:.1f}" y="{PAD_TOP}" width="{BAR_WIDTH}" height="{bar_h:.1f}" fill="none" '
                 f'stroke="black" stroke-width="0.6"/>')
    for frac in (0.0, 0.5, 1.0):
        y = PAD_TOP + bar_h * (1 - frac)
        parts.append(f'<text x="{bar_x + BAR_WIDTH + 4:.1f}" y="{y + 3.5:.1f}" font-size="10">{top * frac:.2g}</text>')
    width = bar_x + BAR_WIDTH + BAR_LABELS
    height = PAD_TOP + bar_h + PAD_BOTTOM
    return (f'<svg xmlns="http://www.w3.org/2000/svg" width="{width:.0f}" height="{height:.0f}" '
            f'viewBox="0 0 {width:.0f} {height:.0f}" {FONT}>' + "".join(parts) + "</svg>")
