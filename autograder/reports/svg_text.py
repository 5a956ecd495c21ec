"""What the kit's SVG pictures share: the font they name, a label's width in it, round tick values.

The pictures (heatmap_svg.py, scaling_svg.py, the class report's report_figures.py) are written
as SVG elements by the kit rather than drawn with matplotlib: a matplotlib figure cost the grader
0.15 s of CPU a picture and its import 0.5 s and 40 MB a run.
"""

from __future__ import annotations

import functools
import importlib.util
import math
import unicodedata
from pathlib import Path

FONT = 'font-family="DejaVu Sans, Bitstream Vera Sans, Arial, sans-serif"'


@functools.lru_cache(maxsize=4)
def _font(size: int):
    """DejaVu Sans at `size` px, matplotlib's copy read by Pillow (matplotlib is not imported);
    None where either is missing."""
    try:
        from PIL import ImageFont

        spec = importlib.util.find_spec("matplotlib")
        folder = Path(next(iter(spec.submodule_search_locations)))
        return ImageFont.truetype(str(folder / "mpl-data" / "fonts" / "ttf" / "DejaVuSans.ttf"), size)
    except Exception:  # noqa: BLE001 - a wider estimate instead
        return None


def text_width(text: str, size: int) -> float:
    """px `text` takes at `size` px: DejaVu Sans' advances; a wide (East Asian) character, which
    the browser takes from another font, a full em."""
    wide = sum(unicodedata.east_asian_width(ch) in "WF" for ch in text)
    rest = "".join(ch for ch in text if unicodedata.east_asian_width(ch) not in "WF")
    font = _font(size)
    measured = font.getlength(rest) if font is not None else 0.7 * size * len(rest)
    return 1.04 * measured + size * wide


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
