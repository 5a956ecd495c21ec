"""Whether code answers anything: read from its syntax, without running it.

A graded function whose body does nothing (a docstring, `pass`, `...`, `return` or `return None`,
`raise NotImplementedError`) is a stub: intake prefers the form of a file that holds work, and
a stub that returns None is graded "not implemented yet", as one that raises
NotImplementedError is, not "returned something unusable". The rule is forms.py's, which
the handout's check.py decides with too.
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from functools import lru_cache

from autograder.judge import forms
from autograder.judge import syntax

# The graded names of each stem, as the grader sent them with a request to the parse helper
# (graded_here): its children read code without importing the checks, which import numpy and
# every exercise. None: this process looks them up in the contract itself.
_sent: dict[str, tuple[str, ...]] | None = None


@lru_cache(maxsize=1)
def graded_table() -> dict[str, tuple[str, ...]]:
    """Each stem's graded names (the contract's RETURNS), as data a request carries."""
    from autograder.checks.contract import RETURNS

    return {stem: tuple(names) for stem, names in RETURNS.items()}


@contextmanager
def graded_as(table: dict) -> Iterator[None]:
    """Within it, the graded names are `table`'s (a request's graded_here)."""
    global _sent
    before = _sent
    _sent = {str(stem): tuple(str(n) for n in names) for stem, names in table.items()}
    try:
        yield
    finally:
        _sent = before


def graded_here() -> dict[str, tuple[str, ...]]:
    """The graded names this process reads with: those it was sent (a helper's child, which passes
    them on with a request of its own), else the contract's."""
    return graded_table() if _sent is None else _sent


def graded_names(stem: str) -> tuple[str, ...]:
    return graded_here().get(stem, ())


def has_work(source: str, stem: str) -> bool:
    """Whether the code answers anything (forms.has_work, on the stem's graded names)."""
    return forms.has_work(source, graded_names(stem), syntax.parsed)


def stubs(source: str, stem: str) -> frozenset[str]:
    """The graded functions and classes whose last top-level definition is a stub (read once per
    source and set of names: every check of a stub asks)."""
    return _stubs(source, graded_names(stem))


@lru_cache(maxsize=64)
def _stubs(source: str, graded: tuple[str, ...]) -> frozenset[str]:
    return forms.stub_names(source, graded, syntax.parsed)


def stubs_and_work(source: str, stem: str) -> tuple[frozenset[str], bool]:
    """(stubs, has_work) of a source parsed once (neither rule changes the tree)."""
    found, work, _ = stubs_work_and_imports(source, stem)
    return found, work


def stubs_work_and_imports(source: str, stem: str) -> tuple[frozenset[str], bool, dict[str, list[str]]]:
    """(stubs, has_work, what it imports from each other stem: forms.imported_from) of a source
    parsed once (no rule changes the tree)."""
    graded = graded_names(stem)
    imports = forms.imports_of(source, [other for other in graded_here() if other != stem], syntax.parsed)
    return (forms.stub_names(source, graded, syntax.parsed), forms.has_work(source, graded, syntax.parsed),
            imports)
