"""Which functions of a source call a given one: read from the code, never run (standard library
only: the handout holds this file as check_callers.py beside check.py).

A function that hung makes the calls of its callers hang too, each for its own time limit. The
grader's session (sandbox/session.py) and the handout's check.py answer them at once instead.
"""

from __future__ import annotations

import ast
from collections.abc import Callable


def callers(texts: tuple[str, ...], name: str, parse: Callable[[str], ast.Module] = ast.parse) -> frozenset[str]:
    """The top-level functions and classes of a source (a file, or a notebook's cells) whose code
    refers to `name` as a global -- directly, or through another of them that does. A name a
    function binds itself (a parameter, a local) is not the global's; a cell that does not parse
    is left out (its code never ran either). `parse`: the grader's, one thread at a time."""
    defined: dict[str, set[str]] = {}
    for text in texts:
        try:
            tree = parse(text)
        except (SyntaxError, ValueError, RecursionError, MemoryError, SystemError):
            continue
        for node in tree.body:
            if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
                defined[node.name] = _globals_read(node)
    found: set[str] = set()
    wanted = {name}
    while wanted:
        wanted = {caller for caller, reads in defined.items() if reads & wanted} - found - {name}
        found |= wanted
    return frozenset(found)


def _globals_read(definition: ast.AST) -> set[str]:
    """Names a definition reads that it does not bind anywhere inside it."""
    read, bound = set(), set()
    for node in ast.walk(definition):
        if isinstance(node, ast.Name):
            (read if isinstance(node.ctx, ast.Load) else bound).add(node.id)
        elif isinstance(node, ast.arg):
            bound.add(node.arg)
    return read - bound
