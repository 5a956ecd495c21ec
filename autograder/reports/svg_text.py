"""What the kit's SVG pictures share: the font they name, a label's width in it, round tick values.

The pictures (heatmap_svg.py, scaling_svg.py, the class report's report_figures.py) are written
as SVG elements by the kit rather than drawn with matplotlib: a matplotlib figure cost the grader
CPU for every picture, and its import CPU and memory once a run.
"""

from __future__ import annotations

import functools
import json
import math
import unicodedata
from array import array
from pathlib import Path

FONT = 'font-family="DejaVu Sans, Bitstream Vera Sans, Arial, sans-serif"'


# DejaVu Sans' advance widths, written from matplotlib's copy of the font by scripts/font_advances.py.
ADVANCES = Path(__file__).with_name("fonts") / "dejavu_sans_advances.json"
BMP = 0x10000


@functools.lru_cache(maxsize=1)
def _advances() -> tuple[array, dict[int, int], int, int]:
    """(the Basic Multilingual Plane's advances, indexed by code point; the other planes' that the
    font has; the missing glyph's; units per em). A flat array, smaller than a dict of every glyph;
    read once a process, with nothing imported (Pillow and FreeType, which measured before, cost
    the grader memory)."""
    table = json.loads(ADVANCES.read_text(encoding="utf-8"))
    missing = table["missing"]
    bmp, astral = array("H", [missing]) * BMP, {}
    for first, widths in table["runs"]:
        for code, width in enumerate(widths, first):
            if code < BMP:
                bmp[code] = width
            else:
                astral[code] = width
    return bmp, astral, missing, table["units_per_em"]


def text_width(text: str, size: int) -> float:
    """px `text` takes at `size` px: the sum of DejaVu Sans' advances, 4% wider (a browser kerns
    some pairs closer, and may draw a fallback font); a wide (East Asian) character, which the
    browser takes from another font, a full em."""
    bmp, astral, missing, per_em = _advances()
    units, wide = 0, 0
    for ch in text:
        if unicodedata.east_asian_width(ch) in "WF":
            wide += 1
            continue
        code = ord(ch)
        units += bmp[code] if code < BMP else astral.get(code, missing)
    return 1.04 * units * size / per_em + size * wide


def nice_ticks(lo: float, hi: float, *, integer: bool = False, most: int = 6) -> list[float]:
    """At most `most` + 1 round values from lo to hi: steps of 1, 2, 2.5 or 5 times a power of ten."""
    span = hi - lo
    if not span > 0 or not math.isfinite(span):
        return [lo] if math.isfinite(lo) else []
    magnitude = 10 ** math.floor(math.log10(span / most))
    step = next(m * magnitude for m in (1, 2, 2.5, 5, 10) if span / (m * magnitude) <= most)
    if integer:
        step = max(1, round(step))
    first = math.ceil(lo / step - 1e-9) * step
    return [first + k * step for k in range(int((hi - first) / step + 1e-9) + 1)]
