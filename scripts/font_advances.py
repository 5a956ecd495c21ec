"""Write the advance widths of DejaVu Sans, the font the kit's SVG pictures name, from matplotlib's
copy of it: autograder/reports/fonts/dejavu_sans_advances.json.

    python scripts/font_advances.py

The pictures size their margins to their labels (autograder/reports/svg_text.py). Measuring a
label with Pillow loaded Pillow and FreeType into the grader the first time a student's plot had
a legend, memory held for the rest of a class run, for numbers that are the font's own. This
reads them once, with fontTools (a matplotlib dependency), as runs of consecutive code points.
tests/test_svg_text.py checks the file against the font; run this again when matplotlib's copy of
the font changes.
"""

from __future__ import annotations

import importlib.metadata
import importlib.util
import json
from pathlib import Path

from fontTools.ttLib import TTFont

OUT = Path(__file__).resolve().parents[1] / "autograder" / "reports" / "fonts" / "dejavu_sans_advances.json"


def matplotlib_font() -> Path:
    """matplotlib's DejaVuSans.ttf, found without importing matplotlib."""
    spec = importlib.util.find_spec("matplotlib")
    return Path(next(iter(spec.submodule_search_locations))) / "mpl-data" / "fonts" / "ttf" / "DejaVuSans.ttf"


def advances(font_path: Path) -> dict:
    font = TTFont(str(font_path))
    cmap, metrics = font.getBestCmap(), font["hmtx"].metrics
    runs: list[list] = []          # [first code point, [advance of it, of the next, ...]]
    for code in sorted(cmap):
        width = metrics[cmap[code]][0]
        if runs and runs[-1][0] + len(runs[-1][1]) == code:
            runs[-1][1].append(width)
        else:
            runs.append([code, [width]])
    return {"font": f"{font['name'].getDebugName(4)}, {font['name'].getDebugName(5)}",
            "from": f"matplotlib {importlib.metadata.version('matplotlib')}, mpl-data/fonts/ttf/{font_path.name}",
            "units_per_em": font["head"].unitsPerEm,
            "missing": metrics[".notdef"][0],       # a character the font lacks is drawn as its .notdef
            "runs": runs}


def main() -> None:
    table = advances(matplotlib_font())
    OUT.parent.mkdir(parents=True, exist_ok=True)
    OUT.write_text(json.dumps(table, separators=(",", ":")) + "\n", encoding="utf-8")
    print(f"wrote {OUT.relative_to(OUT.parents[3])}: {sum(len(r) for _, r in table['runs'])} characters "
          f"of {table['font']}")


if __name__ == "__main__":
    main()
