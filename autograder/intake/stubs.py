"""Whether code answers anything: read from its syntax, without running it.

A graded function whose body does nothing (a docstring, `pass`, `...`, `return` or `return None`,
`raise NotImplementedError`) is a stub: intake prefers the form of a file that holds work, and
a stub that returns None is graded "not implemented yet", as one that raises
NotImplementedError is, not "returned something unusable". The rule is forms.py's, which
the handout's check.py decides with too.
"""

from __future__ import annotations

from functools import lru_cache

from autograder.checks.contract import RETURNS
from autograder.judge import forms
from autograder.judge import syntax


def has_work(source: str, stem: str) -> bool:
    """Whether the code answers anything (forms.has_work, on the stem's graded names)."""
    return forms.has_work(source, RETURNS.get(stem, ()), syntax.parse)


@lru_cache(maxsize=64)
def stubs(source: str, stem: str) -> frozenset[str]:
    """The graded functions and classes whose last top-level definition is a stub (read once per
    source: every check of a stub asks)."""
    return forms.stub_names(source, RETURNS.get(stem, ()), syntax.parse)


def stubs_and_work(source: str, stem: str) -> tuple[frozenset[str], bool]:
    """(stubs, has_work) of a source parsed once (neither rule changes the tree)."""
    trees: dict[str, object] = {}

    def parse_once(text: str):
        if text not in trees:
            trees[text] = syntax.parse(text)
        return trees[text]

    graded = RETURNS.get(stem, ())
    return forms.stub_names(source, graded, parse_once), forms.has_work(source, graded, parse_once)
