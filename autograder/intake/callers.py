"""Which functions of a source call a given one: read from the code, never run (standard library
only: the handout holds this file as check_callers.py beside check.py).

A function that hung makes the calls of its callers hang too, each for its own time limit. The
grader's session (sandbox/session.py) and the handout's check.py answer them at once instead.
"""

from __future__ import annotations

import ast
from collections.abc import Callable


def called_by(texts: tuple[str, ...], parse: Callable[[str], ast.Module] = ast.parse) -> dict[str, set[str]]:
    """For each global name that a top-level function or class of a source (a file, or a notebook's
    cells) reads, the ones that read it. A name a function binds itself (a parameter, a local) is
    not the global's; a cell that does not parse is left out (its code never ran either).
    `parse`: the grader's, one thread at a time."""
    readers: dict[str, set[str]] = {}
    for text in texts:
        try:
            tree = parse(text)
        except (SyntaxError, ValueError, RecursionError, MemoryError, SystemError):
            continue
        for node in tree.body:
            if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
                for name in _globals_read(node):
                    readers.setdefault(name, set()).add(node.name)
    return readers


def callers(readers: dict[str, set[str]], name: str) -> frozenset[str]:
    """The functions and classes that call `name`, directly or through one another (`called_by`'s
    map walked once: a long chain of calls costs its length, not its square)."""
    found: set[str] = set()
    todo = [name]
    while todo:
        for caller in readers.get(todo.pop(), ()):
            if caller != name and caller not in found:
                found.add(caller)
                todo.append(caller)
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
