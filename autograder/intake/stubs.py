"""Whether code answers anything: read from its syntax, without running it.

A graded function whose body does nothing (a docstring, `pass`, `...`, `return` or `return None`,
`raise NotImplementedError`) is a stub: intake prefers the form of a file that holds work, and
a stub that returns None is graded "not implemented yet", as one that raises
NotImplementedError is, not "returned something unusable".
"""

from __future__ import annotations

import ast
from functools import lru_cache

from autograder.intake import syntax
from autograder.checks.contract import RETURNS

_FUNCTIONS = (ast.FunctionDef, ast.AsyncFunctionDef)


def has_work(source: str, stem: str) -> bool:
    """Whether the code answers anything: a graded function or method that is not a stub, or a
    graded constant that is not None. Code that does not parse is somebody's work in progress."""
    try:
        tree = syntax.parse(source)
    except (SyntaxError, ValueError, RecursionError, MemoryError):
        return True
    graded = set(RETURNS.get(stem, ()))
    for node in tree.body:
        if isinstance(node, (*_FUNCTIONS, ast.ClassDef)) and node.name in graded:
            if not _is_stub(node):
                return True
        elif isinstance(node, (ast.Assign, ast.AnnAssign)):
            targets = node.targets if isinstance(node, ast.Assign) else [node.target]
            names = {t.id for t in targets if isinstance(t, ast.Name)}
            value = node.value
            if names & graded and value is not None and not _is_none(value):
                return True
    return False


@lru_cache(maxsize=64)
def stubs(source: str, stem: str) -> frozenset[str]:
    """The graded functions and classes whose last top-level definition is a stub (read once per
    source: every check of a stub asks)."""
    try:
        tree = syntax.parse(source)
    except (SyntaxError, ValueError, RecursionError, MemoryError):
        return frozenset()
    graded = set(RETURNS.get(stem, ()))
    last = {node.name: node for node in tree.body if isinstance(node, (*_FUNCTIONS, ast.ClassDef))
            and node.name in graded}
    return frozenset(name for name, node in last.items() if _is_stub(node))


def _is_stub(node: ast.stmt) -> bool:
    """A function that does nothing; a class none of whose methods but `__init__` does anything."""
    if isinstance(node, ast.ClassDef):
        return not any(_answers(f.body) for f in node.body if isinstance(f, _FUNCTIONS) and f.name != "__init__")
    return not _answers(node.body)


def _answers(body: list[ast.stmt]) -> bool:
    for stmt in body:
        if isinstance(stmt, ast.Pass):
            continue
        if isinstance(stmt, ast.Expr) and isinstance(stmt.value, ast.Constant):
            continue        # a docstring or a bare `...`
        if isinstance(stmt, ast.Return) and (stmt.value is None or _is_none(stmt.value)):
            continue
        if isinstance(stmt, ast.Raise) and _is_not_implemented(stmt.exc):
            continue
        return True
    return False


def _is_none(value: ast.expr) -> bool:
    return isinstance(value, ast.Constant) and value.value is None


def _is_not_implemented(exc) -> bool:
    if isinstance(exc, ast.Call):
        exc = exc.func
    return isinstance(exc, ast.Name) and exc.id == "NotImplementedError"
