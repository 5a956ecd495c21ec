"""Child side: matplotlib measures text by an estimate instead of laying out its glyphs.

A student's `plot_scaling` usually ends with `fig.tight_layout()` (or a legend placed "best"),
which asks the renderer for the extent of every tick label, axis label, title and legend entry:
FreeType lays out each string's glyphs, and a mathtext label (`$QK^\\top/\\sqrt{d}$`) is parsed
by pyparsing first, a third of the figure's cost in a child (issue 23). The grader reads the
figure's artists (data, labels, scales, legend texts; `convert.describe_figure`), never where
they sit on the canvas, so an estimate of each string's extent grades the same. The student's
code still runs as written: tight_layout lays the axes out, on estimated extents; a figure
saved to a buffer is still drawn (its text placed by the estimate).

Loaded by the zygote from its file (like `convert.py`), before its matplotlib warm-up.
"""

from __future__ import annotations

# Average advance of a glyph and the depth below the baseline, as fractions of the font size
# (DejaVu Sans, matplotlib's default font, averages about 0.6 em per character).
EM_ADVANCE = 0.6
EM_DESCENT = 0.2


def estimate(text: str, size_px: float) -> tuple[float, float, float]:
    """(width, height, descent) in pixels of one line of `text` at `size_px` pixels per em."""
    return EM_ADVANCE * size_px * len(text), float(size_px), EM_DESCENT * size_px


def install() -> None:
    """Every Agg canvas made from now on (pyplot's, or a bare Figure's when it is laid out or
    saved) measures text by `estimate`. Usetex text keeps matplotlib's own measure."""
    from matplotlib.backends import backend_agg

    measured = backend_agg.RendererAgg

    class EstimatingRenderer(measured):
        def get_text_width_height_descent(self, s, prop, ismath):
            if ismath == "TeX":
                return super().get_text_width_height_descent(s, prop, ismath)
            return estimate(str(s), prop.get_size_in_points() * self.dpi / 72)

    backend_agg.RendererAgg = EstimatingRenderer
