"""The kit's prose maths ("sqrt(d_k)", "d_k", "K^T") as it reads in print: "√dₖ", "dₖ", "Kᵀ".

Hints, titles and the catalogue's descriptions write their maths in ASCII, which a terminal and
check.py show as written. The pages a browser shows (the feedback pages, Gradescope's Markdown, the
class report, nbgrader's feedback) read it in Unicode: no network, no script to typeset it. Only the
kit's own prose goes through here, never a student's text (a message quoting their error stays as
they wrote it).
"""

from __future__ import annotations

import re

# Unicode has a subscript for these letters only (no b, c, d, f, g, q, w, y, z): "n_q" stays as it is.
_SUBSCRIPT = dict(zip("aehijklmnoprstuvx0123456789", "ₐₑₕᵢⱼₖₗₘₙₒₚᵣₛₜᵤᵥₓ₀₁₂₃₄₅₆₇₈₉"))
# A one-letter lowercase name with a subscript of one letter or digit: d_k, n_k, q_1 (not my_k1, not
# d_head, not the module's attributes W_q, W_k).
_SUBSCRIPTED = re.compile(r"(?<![\w.])([a-z])_([a-z0-9])(?![\w(])")
# sqrt of a name or number: sqrt(d_k), sqrt(2), sqrt(d_head), sqrt(4) ...
_SQRT = re.compile(r"\bsqrt\(\s*([A-Za-z0-9_.]+)\s*\)")
_TRANSPOSED = re.compile(r"(?<![\w.])([A-Z])\^T\b")


def readable(text: str) -> str:
    """`text` with its maths in Unicode: sqrt(x) as √x, a one-letter subscript as a subscript
    letter where Unicode has one (d_k as dₖ), K^T as Kᵀ."""
    text = _SQRT.sub(lambda m: f"√{m.group(1)}", text)
    text = _TRANSPOSED.sub(lambda m: f"{m.group(1)}ᵀ", text)
    return _SUBSCRIPTED.sub(lambda m: m.group(1) + _SUBSCRIPT[m.group(2)] if m.group(2) in _SUBSCRIPT
                            else m.group(0), text)
