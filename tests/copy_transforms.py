"""How a student disguises a copied file, written with `ast` (the code still does the same thing):
locals renamed, comments and docstrings dropped, statements reordered where the order does not
matter. Used by tests/test_similarity.py and benchmarks/bench_similarity.py.
"""

from __future__ import annotations

import ast
import builtins
import random


def disguise(source: str, seed: int = 0, *, rename: bool = True, reorder: bool = True) -> str:
    """`source` with every function's locals renamed, comments and docstrings gone, the
    top-level definitions and each body's independent neighbouring statements reordered."""
    tree = ast.parse(source)
    rng = random.Random(seed)
    if rename:
        for node in ast.walk(tree):
            if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
                _rename_locals(node, rng)
    _drop_docstrings(tree)
    if reorder:
        _reorder(tree, rng)
    return ast.unparse(ast.fix_missing_locations(tree)) + "\n"     # unparse writes no comments


def _rename_locals(function: ast.FunctionDef | ast.AsyncFunctionDef, rng: random.Random) -> None:
    """Names assigned in the function's own body (not its parameters: callers pass them by
    keyword; not what it declares global) get new names."""
    declared = {n for node in ast.walk(function) if isinstance(node, (ast.Global, ast.Nonlocal)) for n in node.names}
    params = {a.arg for a in ast.walk(function.args) if isinstance(a, ast.arg)}
    local = sorted({node.id for node in _own_nodes(function) if isinstance(node, ast.Name)
                    and isinstance(node.ctx, ast.Store)} - declared - params - set(dir(builtins)))
    fresh = {name: f"{rng.choice(('tmp', 'val', 'res', 'arr', 'my'))}_{i}_{rng.randrange(100)}"
             for i, name in enumerate(local)}
    for node in _own_nodes(function):
        if isinstance(node, ast.Name) and node.id in fresh:
            node.id = fresh[node.id]


def _own_nodes(function):
    """The nodes of a function's body, not those of the functions and classes defined in it
    (their locals are theirs), but the bodies of its lambdas and comprehensions."""
    stack = list(function.body)
    while stack:
        node = stack.pop()
        yield node
        for child in ast.iter_child_nodes(node):
            if not isinstance(child, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
                stack.append(child)


def _drop_docstrings(tree: ast.Module) -> None:
    for node in ast.walk(tree):
        body = getattr(node, "body", None)
        if isinstance(body, list) and body and isinstance(body[0], ast.Expr) \
                and isinstance(body[0].value, ast.Constant) and isinstance(body[0].value.value, str):
            node.body = body[1:] or [ast.Pass()]


def _reorder(tree: ast.Module, rng: random.Random) -> None:
    """Top-level functions and classes shuffled among their places (they run nothing at import);
    in every body, neighbouring statements that neither read nor write what the other writes swapped."""
    places = [i for i, s in enumerate(tree.body) if isinstance(s, (ast.FunctionDef, ast.ClassDef))]
    definitions = [tree.body[i] for i in places]
    rng.shuffle(definitions)
    for i, definition in zip(places, definitions):
        tree.body[i] = definition
    modules = {alias.asname or alias.name.split(".")[0] for node in ast.walk(tree)
               if isinstance(node, (ast.Import, ast.ImportFrom)) for alias in node.names}
    for node in ast.walk(tree):
        for field in ("body", "orelse", "finalbody"):
            body = getattr(node, field, None)
            if isinstance(body, list) and not isinstance(node, ast.Module):
                _swap_independent(body, modules)


def _swap_independent(body: list[ast.stmt], modules: set[str]) -> None:
    i = 0
    while i + 1 < len(body):
        a, b = body[i], body[i + 1]
        if _simple(a) and _simple(b) and _independent(a, b, modules):
            body[i], body[i + 1] = b, a
            i += 2
        else:
            i += 1


def _simple(statement: ast.stmt) -> bool:
    return isinstance(statement, (ast.Assign, ast.AnnAssign, ast.AugAssign)) and not any(
        isinstance(n, (ast.Call, ast.Attribute, ast.Subscript)) and isinstance(getattr(n, "ctx", None), ast.Store)
        for n in ast.walk(statement))


def _independent(a: ast.stmt, b: ast.stmt, modules: set[str]) -> bool:
    """Neither reads or writes what the other writes. A method call may change its object
    (`rng.normal` advances rng), so its object counts as written; a module's functions do not."""
    def names(s, store):
        return {n.id for n in ast.walk(s) if isinstance(n, ast.Name) and isinstance(n.ctx, ast.Store) == store}

    def written(s):
        changed = {n.func.value.id for n in ast.walk(s) if isinstance(n, ast.Call)
                   and isinstance(n.func, ast.Attribute) and isinstance(n.func.value, ast.Name)}
        return names(s, True) | (changed - modules)

    if any(isinstance(n, ast.Call) and isinstance(n.func, ast.Name) and n.func.id not in dir(builtins)
           for s in (a, b) for n in ast.walk(s)):
        return False      # a call of the file's own function may read or change anything
    written_a, written_b = written(a), written(b)
    return not (written_a & (names(b, False) | written_b)) and not (written_b & names(a, False))
