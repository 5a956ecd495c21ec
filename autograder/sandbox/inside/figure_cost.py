"""Child side: a student's figure costs only what the grader reads of it.

The grader reads the figure's artists (data, labels, scales, legend texts;
`convert.describe_figure`), never where they sit on the canvas or their pixels.
Two things matplotlib would otherwise do in every child are left out:

- `Figure.tight_layout()` (and `plt.tight_layout()`, which calls it) returns without laying
  the axes out. A student's 3-panel `plot_scaling` spends most of its time there: every tick
  of every axis is made and measured. Only the subplot positions change under it, and no check
  reads them.
- Text is measured by an estimate instead of laying out its glyphs: FreeType lays out each
  string, and a mathtext label (`$QK^\\top/\\sqrt{d}$`) is parsed by pyparsing first. A figure
  the student draws themselves (`savefig` to a buffer, `canvas.draw()`, a legend placed
  "best") is still drawn, its text placed by the estimate.

The student's code otherwise runs as written. Loaded by the zygote from its file (like
`convert.py`), before its matplotlib warm-up.
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
    """From now on: tight_layout leaves the axes where they are, and every Agg canvas (pyplot's,
    or a bare Figure's when it is drawn or saved) measures text by `estimate`. Usetex text keeps
    matplotlib's own measure."""
    from matplotlib.backends import backend_agg
    from matplotlib.figure import Figure

    def tight_layout(self, *args, **kwargs) -> None:
        """Not laid out in the grader's sandbox: the grader reads the figure's artists, not their places."""

    Figure.tight_layout = tight_layout

    measured = backend_agg.RendererAgg

    class EstimatingRenderer(measured):
        def get_text_width_height_descent(self, s, prop, ismath):
            if ismath == "TeX":
                return super().get_text_width_height_descent(s, prop, ismath)
            return estimate(str(s), prop.get_size_in_points() * self.dpi / 72)

    backend_agg.RendererAgg = EstimatingRenderer
