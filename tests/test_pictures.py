"""The feedback pages' pictures are drawn by the kit (matplotlib's import would cost the
grader CPU and memory every run): the heat maps' colours are matplotlib's own, and the picture of a
student's plot shows each of its lines and their labels as matplotlib's legend would."""

from __future__ import annotations

import json
import subprocess
import sys
import xml.etree.ElementTree as ET

import numpy as np
import pytest

from autograder.reports.colour_scales import NAN_GREY, colours, table
from autograder.reports.pictures import render

SVG = "{http://www.w3.org/2000/svg}"
DIMS = [16, 64, 256, 1024]
EXPECTED = {str(d): {f"{stat}_{variant}": v for stat in ("std", "entropy", "max_weight")
                     for variant, v in (("unscaled", d ** 0.5), ("scaled", 1.0))} for d in DIMS}


def _hex(rgba) -> str:
    return "#%02x%02x%02x" % tuple(round(c * 255) for c in rgba[:3])


@pytest.mark.parametrize("scale", ["viridis", "RdBu_r"])
def test_the_colour_scales_are_matplotlibs(scale):
    from matplotlib import colormaps

    cmap = colormaps[scale]
    assert list(table(scale)) == [_hex(c) for c in cmap(np.arange(cmap.N))]
    rng = np.random.default_rng(7)
    values = np.concatenate([rng.uniform(-3, 4, 5000), np.linspace(-1, 1, 2001), [0.0, 1.0, -1.0, np.nan, np.inf]])
    for low, top in ((0.0, 1.0), (-2.5, 2.5), (0.0, 3.7)):
        drawn = colours(values, low, top, scale)
        made = [NAN_GREY if not np.isfinite(v) else _hex(cmap(float(np.clip((v - low) / (top - low), 0.0, 1.0))))
                for v in values]
        assert drawn == made


PICTURES = {
    "weights": {"kind": "weights", "student": [[0.5, 0.5], [1.0, None]], "expected": [[0.25, 0.75], [0.5, 0.5]]},
    "output": {"kind": "output", "student": [[-1.0, 2.0]], "expected": [[1.0, -2.0]]},
    "scaling": {"kind": "scaling", "dims": DIMS, "student": EXPECTED, "expected": EXPECTED},
    "figure": {"kind": "figure", "dims": DIMS, "expected": EXPECTED,
               "student_lines": [{"label": "std", "x": DIMS, "y": [1.0, 2.0, 3.0, 4.0]}]},
}


def test_every_picture_is_drawn_without_matplotlib_or_a_font_library():
    """In a fresh process: neither matplotlib nor, to measure the plot's legend label, Pillow or
    fontTools (tests/test_svg_text.py)."""
    code = ("import json, sys\nfrom autograder.reports.pictures import render\n"
            f"svgs = [render(v) for v in json.loads({json.dumps(json.dumps(list(PICTURES.values())))})]\n"
            "print(json.dumps([sorted(m for m in sys.modules if m.split('.')[0] in ('matplotlib', 'PIL', 'fontTools')), "
            "[s is not None and s.startswith('<svg') for s in svgs]]))")
    imported, drawn = json.loads(subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                                                check=True).stdout)
    assert drawn == [True] * len(PICTURES)
    assert imported == []


def _plot(lines: list[dict]) -> ET.Element:
    svg = render({"kind": "figure", "dims": DIMS, "expected": EXPECTED, "student_lines": lines})
    return ET.fromstring(svg)      # well-formed: every text a student wrote is escaped


def test_the_plot_picture_draws_each_line_and_labels_it_as_matplotlib_would():
    lines = [{"label": "unscaled <b>&", "x": DIMS, "y": [1.0, 2.0, 3.0, 4.0]},
             {"label": "_child1", "x": DIMS, "y": [0.5, 0.5, 0.5, 0.5]},        # no label given: no entry
             {"label": "", "x": DIMS, "y": [0.1, None, 0.3, 0.4]}]              # a gap: two pieces
    root = _plot(lines)
    panels = [g for g in root.iter(f"{SVG}text") if g.text in ("your plot (its lines)", "the results you were given")]
    assert len(panels) == 2
    texts = [t.text for t in root.iter(f"{SVG}text")]
    assert "unscaled <b>&" in texts and "(no label)" in texts and "_child1" not in texts
    assert all(f"{stat}, {variant}" in texts for stat in ("std", "entropy", "max_weight")
               for variant in ("unscaled", "scaled"))
    colours_drawn = [p.get("stroke") for p in root.iter(f"{SVG}polyline")]
    # the student's three lines (the third in two pieces: its one point after the gap is a marker), then the six given
    assert colours_drawn[:3] == ["#1f77b4", "#ff7f0e", "#2ca02c"] and len(colours_drawn) == 3 + 6
    assert "d (log scale)" in texts


def test_a_long_label_widens_the_plot_picture():
    short = _plot([{"label": "a", "x": DIMS, "y": [1.0, 2.0, 3.0, 4.0]}])
    long = _plot([{"label": "a" * 60, "x": DIMS, "y": [1.0, 2.0, 3.0, 4.0]}])
    assert float(long.get("width")) > float(short.get("width")) + 150
