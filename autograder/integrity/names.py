"""What a name read in a student's file stands for, by Python's scoping rules (integrity/canonical.py
rewrites the file from it): a library (`np` for numpy, `F` for torch.nn.functional, `exp` for
numpy.exp, any name numpy exports after `from numpy import *`), a module constant (`EPS = 1e-9`,
or a literal a minifier hoisted into a name), or something the file binds itself.

Each function, lambda, comprehension and class is a scope: a name bound anywhere in a scope is
that scope's (a parameter `np` is not numpy, a comprehension's `A` is not the `import numpy as A`
of the function around it), and a method does not see its class's names. Nothing is run.
"""

from __future__ import annotations

import ast
import builtins
import math
import operator

import numpy as np

from autograder.judge.syntax import children, walk

_EXPORTS = {"numpy": frozenset(getattr(np, "__all__", dir(np))),
            "math": frozenset(n for n in dir(math) if not n.startswith("_")),
            "operator": frozenset(n for n in dir(operator) if not n.startswith("_"))}
_BUILTINS = frozenset(dir(builtins))
SCOPES = (ast.Module, ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda, ast.ClassDef,
          ast.ListComp, ast.SetComp, ast.DictComp, ast.GeneratorExp)
_OTHER = object()     # bound some other way than by one import
_OUTER = object()     # declared global or nonlocal: an outer scope's


class Names:
    """The scopes of one module, read once; `library` and `constant` answer for a name read in the
    innermost of a stack of scopes."""

    def __init__(self, tree: ast.Module):
        self.module = tree
        # Read before any rewriting: a scope's bindings are what the student wrote.
        self._tables, self._constants = {}, {}
        for node in walk(tree):
            if isinstance(node, SCOPES):
                self._tables[id(node)], self._constants[id(node)] = _bindings(node)
        declared_outer = {name for table in self._tables.values() for name, b in table.items() if b is _OUTER}
        for name in declared_outer:            # a function may rebind it: not a constant
            self._constants[id(tree)].pop(name, None)
        self.star = [n.module for n in tree.body if isinstance(n, ast.ImportFrom) and n.module and not n.level
                     and any(a.name == "*" for a in n.names)]

    def library(self, name: str, stack: list[ast.AST]) -> str | None:
        """The library path `name` stands for (`numpy.exp`), or None."""
        found = self._binding(name, stack)
        if isinstance(found, str):
            return found
        if found is not None:
            return None
        for module in reversed(self.star):
            exports = _EXPORTS.get(module)
            if (name in exports) if exports is not None else name not in _BUILTINS:
                return f"{module}.{name}"
        return None

    def constant(self, name: str, stack: list[ast.AST]) -> ast.expr | None:
        """What `name` stands for when the scope it is read from binds it once, to a literal or to
        another name (`E = n_trials`, as a minifier writes; `DTYPE = np.float32`): that expression."""
        for depth, scope in enumerate(reversed(stack)):
            if isinstance(scope, ast.ClassDef) and depth > 0:
                continue
            found = self._table(scope).get(name, _OUTER)
            if found is not _OUTER:
                return self._constants.get(id(scope), {}).get(name) if found is _OTHER else None
        return None

    def _binding(self, name: str, stack: list[ast.AST]) -> object:
        for depth, scope in enumerate(reversed(stack)):
            if isinstance(scope, ast.ClassDef) and depth > 0:
                continue          # a method does not see its class's names
            found = self._table(scope).get(name, _OUTER)
            if found is not _OUTER:
                return found
        return None

    def _table(self, scope: ast.AST) -> dict[str, object]:
        return self._tables.get(id(scope)) or {}


def _bindings(scope: ast.AST) -> tuple[dict[str, object], dict[str, ast.expr]]:
    """name -> an import's library path, _OTHER, or _OUTER (declared global or nonlocal); and the
    names the scope binds once, by `name = <literal>` or `name = other_name`, with what they are bound to."""
    table: dict[str, object] = {}
    count: dict[str, int] = {}
    literal: dict[str, ast.expr] = {}

    def bind(name: str, what: object) -> None:
        count[name] = count.get(name, 0) + 1
        if table.get(name) is _OUTER:
            return
        table[name] = what if table.get(name, what) == what else _OTHER

    if isinstance(scope, (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda)):
        for node in walk(scope.args):
            if isinstance(node, ast.arg):
                bind(node.arg, _OTHER)
    for node in _own_nodes(scope):
        if isinstance(node, ast.Import):
            for alias in node.names:
                bind(*((alias.asname, alias.name) if alias.asname else (alias.name.split(".")[0],) * 2))
        elif isinstance(node, ast.ImportFrom):
            for alias in node.names:
                if alias.name != "*":
                    relative = node.level or not node.module
                    bind(alias.asname or alias.name, _OTHER if relative else f"{node.module}.{alias.name}")
        elif isinstance(node, (ast.Global, ast.Nonlocal)):
            for name in node.names:
                table[name] = _OUTER
        elif isinstance(node, ast.Name) and not isinstance(node.ctx, ast.Load):
            bind(node.id, _OTHER)
        elif isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)) and node is not scope:
            bind(node.name, _OTHER)
        elif isinstance(node, (ast.ExceptHandler, ast.MatchAs, ast.MatchStar)) and node.name:
            bind(node.name, _OTHER)
        elif isinstance(node, ast.Assign) and len(node.targets) == 1 and isinstance(node.targets[0], ast.Name) \
                and (_literal(node.value) or _dotted(node.value)):
            literal[node.targets[0].id] = node.value
    return table, {name: value for name, value in literal.items() if count.get(name) == 1 and table[name] is _OTHER}


def _own_nodes(scope: ast.AST):
    """The nodes that belong to `scope`, not to the scopes nested in it (whose names are bound here)."""
    if isinstance(scope, ast.Lambda):
        stack = [scope.body]
    elif isinstance(scope, (ast.ListComp, ast.SetComp, ast.GeneratorExp)):
        stack = [scope.elt, *scope.generators]
    elif isinstance(scope, ast.DictComp):
        stack = [scope.key, scope.value, *scope.generators]
    else:
        stack = list(scope.body)
    while stack:
        node = stack.pop()
        yield node
        if isinstance(node, SCOPES):
            continue
        stack += children(node)


def _dotted(node: ast.AST) -> bool:
    """A name, or attributes of a name (`np.float32`)."""
    while isinstance(node, ast.Attribute):
        node = node.value
    return isinstance(node, ast.Name)


def _literal(node: ast.AST) -> bool:
    if isinstance(node, ast.UnaryOp) and isinstance(node.op, (ast.USub, ast.UAdd)):
        node = node.operand
    return isinstance(node, ast.Constant) and isinstance(node.value, (int, float, str, bool, type(None)))


def free_reads(scope: ast.AST) -> set[str]:
    """The names read in `scope` or in the scopes nested in it where they are not bound anew (a
    comprehension's own loop variable is not a read of the function's variable of that name), and
    those declared global or nonlocal."""
    reads: set[str] = set()
    stack: list[tuple[ast.AST, frozenset[str]]] = [(scope, frozenset())]
    while stack:
        inner, shadowed = stack.pop()
        table, _ = _bindings(inner) if inner is not scope else ({}, {})
        shadowed = shadowed | {name for name, found in table.items() if found is not _OUTER}
        for node in _own_nodes(inner):
            if isinstance(node, SCOPES):
                stack.append((node, shadowed))
            elif isinstance(node, ast.Name) and isinstance(node.ctx, ast.Load) and node.id not in shadowed:
                reads.add(node.id)
            elif isinstance(node, (ast.Global, ast.Nonlocal)):
                reads.update(node.names)        # another scope's: never a local to drop
    return reads
