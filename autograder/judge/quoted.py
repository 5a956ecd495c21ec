"""A known mistake whose hint quotes a construct of the code (`~`, `.T`) is named only where the
student's file holds that construct: the answers of `(1 - mask) * -np.inf` may be those of `~mask`,
but a hint about `~` sends a student who wrote no `~` looking for it. A catalogue entry declares
the construct it quotes (`Misconception.quotes`, a regular expression over the source); the grader
and check.py drop it by this rule. The standard library only (check.py ships this file)."""

from __future__ import annotations

import re


def shown(quotes: str, source: str) -> bool:
    """Whether `source` holds the construct `quotes` (a pattern); an entry that quotes none is shown."""
    return not quotes or re.search(quotes, source) is not None


def told_in(check: dict, source: str) -> dict:
    """check.py's shipped check without the mistakes whose quoted construct `source` lacks (in its
    own list and in that of its `match`, the arrays a property check is diagnosed by)."""
    def kept(mistakes: list) -> list:
        return [m for m in mistakes if shown(m.get("quotes", ""), source)]

    out = dict(check)
    if "mistakes" in out:
        out["mistakes"] = kept(out["mistakes"])
    if isinstance(out.get("match"), dict) and "mistakes" in out["match"]:
        out["match"] = dict(out["match"], mistakes=kept(out["match"]["mistakes"]))
    return out
