"""The pictures' labels are measured with DejaVu Sans' own advance widths, from a table written
from matplotlib's copy of the font (scripts/font_advances.py), not by loading Pillow and FreeType
into the grader (whose memory they would hold all run)."""

from __future__ import annotations

import pytest

from autograder.reports import svg_text
from autograder.reports.svg_text import text_width
from scripts.font_advances import matplotlib_font

LABELS = ["d_k = 64", "scaled (mine)", "Wave", "AVATAR To", "std of weights", "héllo ÄÖ", "√d · σ", "ÿ€ abc",
          "entropy unscaled 1/sqrt(d)", "s042_buggy", "max weight, scaled by 1/√d_k", "Ωμέγα Жук",
          "hand_computation.weights_row_0", "W" * 30, "i" * 30, "ff fi fl", "Tj Yo P. L' F,"]


def test_the_table_is_the_fonts_own():
    """Every character of matplotlib's DejaVu Sans has its advance in the table; one it lacks, the
    .notdef glyph's (what the font draws for it)."""
    from fontTools.ttLib import TTFont

    font = TTFont(str(matplotlib_font()))
    cmap, metrics = font.getBestCmap(), font["hmtx"].metrics
    bmp, astral, missing, per_em = svg_text._advances()
    assert per_em == font["head"].unitsPerEm and missing == metrics[".notdef"][0]
    drawn = {code: (bmp[code] if code < svg_text.BMP else astral[code]) for code in cmap}
    assert drawn == {code: metrics[glyph][0] for code, glyph in cmap.items()}
    lacking = [code for code in range(svg_text.BMP) if code not in cmap]
    assert lacking and all(bmp[code] == missing for code in lacking)


@pytest.mark.parametrize("size", [9, 10, 11, 12, 13])
def test_a_label_is_measured_as_the_font_lays_it_out(size):
    """Against Pillow's layout of the same font (kerned, with raqm where installed): never
    narrower (a margin never clips a label), at most 15% wider (kerning only tightens pairs)."""
    from PIL import ImageFont

    font = ImageFont.truetype(str(matplotlib_font()), size)
    for label in LABELS:
        laid_out = font.getlength(label)
        assert laid_out <= text_width(label, size) <= 1.15 * laid_out, label


def test_a_wide_character_takes_a_full_em():
    assert text_width("注意力", 12) == 36
    assert text_width("a注", 10) == pytest.approx(10 + 1.04 * 1255 * 10 / 2048)     # "a": 1255 of 2048 units

