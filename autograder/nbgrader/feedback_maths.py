"""Maths on nbgrader's feedback page without a network: the notebook's $...$ as MathML.

`nbgrader generate_feedback` renders each notebook as one HTML page whose maths ($d_k$,
$$\\operatorname{softmax}(QK^\\top/\\sqrt{d_k})V$$) MathJax typesets, loaded from a CDN: with no
network, the page shows the LaTeX raw. `MathsWithoutNetwork`, added to GenerateFeedback's
preprocessors by the course's nbgrader_config.py (preprocessor.configure), writes the maths of
the markdown cells as MathML (latex2mathml), which browsers draw themselves. A formula whose
MathML would hold anything but MathML (`\\text{<b>...}`) is left as it was written.
"""

from __future__ import annotations

import re
import xml.etree.ElementTree as ElementTree

from nbconvert.preprocessors import Preprocessor

MATHML = "{http://www.w3.org/1998/Math/MathML}"
_ELEMENTS = frozenset("math mrow mi mn mo ms mtext mspace msup msub msubsup mfrac msqrt mroot mstyle mtable mtr "
                      "mtd mover munder munderover menclose mpadded mphantom merror semantics annotation".split())
_ATTRIBUTES = frozenset("display stretchy fence form separator width height depth lspace rspace mathvariant "
                        "accent accentunder linethickness columnalign rowalign columnspacing rowspacing "
                        "displaystyle scriptlevel movablelimits largeop symmetric minsize maxsize notation "
                        "xmlns encoding".split())
# Code is never maths: fenced blocks and inline code spans are kept as they are.
_CODE = re.compile(r"(```.*?```|~~~.*?~~~|`[^`\n]+`)", re.DOTALL)
_DISPLAY = re.compile(r"\$\$(.+?)\$\$", re.DOTALL)
_INLINE = re.compile(r"(?<![\\$])\$(?![\s$])([^$\n]+?)(?<![\s\\])\$(?!\d)")


class MathsWithoutNetwork(Preprocessor):
    """The markdown cells' maths as MathML (the module's docstring)."""

    def preprocess_cell(self, cell, resources, index):
        if cell.cell_type == "markdown":
            cell.source = with_mathml(cell.source)
        return cell, resources


def with_mathml(markdown: str) -> str:
    parts = _CODE.split(markdown)
    # re.split with one group: the text between code at even indices, the code at odd ones
    return "".join(part if index % 2 else _INLINE.sub(_inline, _DISPLAY.sub(_display, part))
                   for index, part in enumerate(parts))


def _display(match: re.Match) -> str:
    return _mathml(match, "block")


def _inline(match: re.Match) -> str:
    return _mathml(match, "inline")


def _mathml(match: re.Match, display: str) -> str:
    from latex2mathml.converter import convert

    try:
        mathml = convert(match.group(1).strip(), display=display)
    except Exception:  # noqa: BLE001 - LaTeX it cannot read stays as it was written
        return match.group(0)
    return mathml if _only_mathml(mathml) else match.group(0)


def _only_mathml(mathml: str) -> bool:
    """Whether `mathml` holds MathML elements and attributes only (no HTML from a \\text{...})."""
    try:
        root = ElementTree.fromstring(mathml)
    except ElementTree.ParseError:
        return False
    for element in root.iter():
        if not element.tag.startswith(MATHML) or element.tag[len(MATHML):] not in _ELEMENTS:
            return False
        if any(name not in _ATTRIBUTES for name in element.attrib):
            return False
    return True
