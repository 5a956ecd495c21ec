"""Library code written in any of its equivalent spellings, read as one, for the similarity
fingerprints: a copier who rewrites `a @ b` as `np.matmul(a, b)`, `operator.mul(a, b)` or
`a.__mul__(b)`, who star-imports numpy, or who swaps numpy for torch changes nothing in them.

A reference to an imported library (however imported: `np.exp`, `from numpy import exp`, `from
numpy import *`, `import torch.nn.functional as F`; integrity/names.py says which names are
which) becomes the library's name for it without the module (`exp`; numpy, torch, math and
operator share one namespace, so `np.exp` and `torch.exp` read alike), with the aliases one
library or the other uses for the same operation merged (`amax` is `max`, `view` is `reshape`,
`as_tensor` is `asarray`, `dim=` is `axis=`). A call of one of these functions on a first
argument reads as that argument's method (`np.sum(x, axis=1)` as `x.sum(axis=1)`); an operator
written as a call reads as the operator. What carries no code of the student's is left out: an
input converted to the library's array in place (`x = torch.as_tensor(x)`), `.numpy()`,
`.detach()`, annotations, another name for a name (`E = n_trials`), a module constant (read as
its literal). Independent neighbouring assignments are put in one order. Nothing is run.
"""

from __future__ import annotations

import ast
import builtins
import copy

from autograder.integrity.names import SCOPES, Names
from autograder.judge.syntax import walk

MERGED = frozenset({"numpy", "torch", "math", "operator"})     # one namespace for these libraries' operations
_PREFIXES = ("torch.nn.functional.", "torch.special.", "numpy.", "torch.", "math.", "operator.")
_BUILTINS = frozenset(dir(builtins))

BINARY = {"matmul": ast.MatMult, "mm": ast.MatMult, "bmm": ast.MatMult, "dot": ast.MatMult,
          "add": ast.Add, "sub": ast.Sub, "subtract": ast.Sub, "mul": ast.Mult, "multiply": ast.Mult,
          "div": ast.Div, "divide": ast.Div, "true_divide": ast.Div, "truediv": ast.Div,
          "floordiv": ast.FloorDiv, "floor_divide": ast.FloorDiv, "pow": ast.Pow, "power": ast.Pow,
          "mod": ast.Mod, "remainder": ast.Mod}
COMPARE = {"eq": ast.Eq, "equal": ast.Eq, "ne": ast.NotEq, "not_equal": ast.NotEq, "lt": ast.Lt, "less": ast.Lt,
           "le": ast.LtE, "less_equal": ast.LtE, "gt": ast.Gt, "greater": ast.Gt, "ge": ast.GtE,
           "greater_equal": ast.GtE}
UNARY = {"neg": ast.USub, "negative": ast.USub, "invert": ast.Invert, "inv": ast.Invert,
         "logical_not": ast.Invert, "bitwise_not": ast.Invert, "not_": ast.Not}
ALIASES = {"as_tensor": "asarray", "tensor": "asarray", "array": "asarray", "from_numpy": "asarray",
           "amax": "max", "amin": "min", "concatenate": "cat", "concat": "cat", "view": "reshape",
           "unsqueeze": "expand_dims", "clamp": "clip", "clone": "copy", "standard_normal": "randn",
           "absolute": "abs", "bool_": "bool", "float_": "float", "int_": "int", "Inf": "inf", "PINF": "inf",
           "NINF": "-inf", "swapdims": "swapaxes", "moveaxis": "movedim", "transpose": "permute", "to": "astype"}
DROPPED_METHODS = frozenset({"numpy", "detach", "cpu", "contiguous"})
KEYWORDS = {"dim": "axis", "keepdim": "keepdims", "diagonal": "k"}
_SPREAD = frozenset({"reshape", "permute", "expand", "repeat", "tile"})    # x.reshape((a, b)) is x.reshape(a, b)


def canonicalise(tree: ast.Module) -> ast.Module:
    """`tree` rewritten in place with every library operation in its one spelling, and every read
    of a module constant as its literal (a minifier hoists repeated literals into names)."""
    try:
        _Rewrite(Names(tree)).visit(tree)
    except RecursionError:      # an expression nested too deep to rewrite: what was rewritten stays
        pass
    return tree


def _name(path: str) -> tuple[str, bool]:
    """A library path's one spelling, and whether it is an operation of the merged libraries."""
    merged = path.split(".")[0] in MERGED
    if merged:
        for prefix in _PREFIXES:
            if path.startswith(prefix):
                path = path[len(prefix):]
                break
        path = ALIASES.get(path, path)
    return path, merged


class _Rewrite(ast.NodeTransformer):

    def __init__(self, names: Names):
        self.names = names
        self.scopes: list[ast.AST] = []

    def visit(self, node: ast.AST) -> ast.AST:
        if not isinstance(node, SCOPES):
            return super().visit(node)
        self.scopes.append(node)
        try:
            return super().visit(node)
        finally:
            self.scopes.pop()

    def _library(self, node: ast.AST) -> str | None:
        """The library path `node` reads (`np.linalg.norm` -> "numpy.linalg.norm"), if it reads one."""
        if isinstance(node, ast.Name) and isinstance(node.ctx, ast.Load):
            return self.names.library(node.id, self.scopes)
        if isinstance(node, ast.Attribute) and isinstance(node.ctx, ast.Load) and not node.attr.startswith("__"):
            base = self._library(node.value)      # (a dunder is an operator's method: np.inf.__neg__())
            return f"{base}.{node.attr}" if base else None
        return None

    def visit_Expr(self, node: ast.Expr) -> ast.Expr:
        """A call made for what it does stays a call (an operator alone would read as a no-op)."""
        if isinstance(node.value, ast.Call):
            call = node.value
            call.func = self.visit(call.func)
            call.args = [self.visit(a) for a in call.args]
            call.keywords = [self.visit(k) for k in call.keywords]
            return node
        return self.generic_visit(node)

    def visit_Assign(self, node: ast.Assign) -> ast.Assign | None:
        """`x = np.asarray(x)`, `x = torch.as_tensor(x, dtype=...)`: an input taken as the library's
        array, as each library spells it, is no code of the student's; nor is another name for a name."""
        if len(node.targets) == 1 and isinstance(node.targets[0], ast.Name) and self._another_name(node.value) \
                and self.names.constant(node.targets[0].id, self.scopes) is node.value:
            return None        # `E = n_trials`: E is read as n_trials
        node = self.generic_visit(node)
        value = node.value
        if len(node.targets) == 1 and isinstance(node.targets[0], ast.Name) and isinstance(value, ast.Call) \
                and isinstance(value.func, ast.Attribute) and value.func.attr == "asarray" \
                and isinstance(value.func.value, ast.Name) and value.func.value.id == node.targets[0].id:
            return None
        return node

    def visit_arg(self, node: ast.arg) -> ast.arg:
        node.annotation = None       # annotations: the grader runs nothing by them
        return node

    def visit_FunctionDef(self, node: ast.FunctionDef) -> ast.FunctionDef:
        node.returns = None
        return self.generic_visit(node)

    visit_AsyncFunctionDef = visit_FunctionDef

    def visit_AnnAssign(self, node: ast.AnnAssign) -> ast.AST | None:
        if node.value is None:
            return None
        return self.visit(ast.copy_location(ast.Assign([node.target], node.value), node))

    def visit_keyword(self, node: ast.keyword) -> ast.keyword:
        node.arg = KEYWORDS.get(node.arg, node.arg)
        return self.generic_visit(node)

    def visit_Attribute(self, node: ast.Attribute) -> ast.AST:
        path = self._library(node)
        if path is None:
            return self.generic_visit(node)
        return self._reference(path, node)

    def visit_Name(self, node: ast.Name) -> ast.AST:
        path = self._library(node)
        if path is not None:
            return self._reference(path, node)
        literal = self.names.constant(node.id, self.scopes) if isinstance(node.ctx, ast.Load) else None
        if literal is None:
            return node
        if isinstance(literal, ast.Name):       # another name for a name: read as that one, once
            return ast.copy_location(ast.Name(literal.id, ast.Load()), node)
        if isinstance(literal, ast.Attribute):
            return self.visit(ast.copy_location(copy.deepcopy(literal), node)) if self._another_name(literal) else node
        return ast.copy_location(copy.deepcopy(literal), node)

    def _another_name(self, value: ast.AST) -> bool:
        """`n_trials`, or a library's `np.float32`: what a name bound to it is read as."""
        return isinstance(value, ast.Name) or (isinstance(value, ast.Attribute) and self._library(value) is not None)

    def _reference(self, path: str, node: ast.AST) -> ast.AST:
        name, merged = _name(path)
        if merged and name == "newaxis":
            return ast.copy_location(ast.Constant(None), node)
        if merged and name == "-inf":
            return ast.copy_location(ast.UnaryOp(ast.USub(), ast.copy_location(ast.Name("inf", ast.Load()), node)), node)
        return ast.copy_location(ast.Name(name, ast.Load()), node)

    def visit_BinOp(self, node: ast.BinOp) -> ast.AST:
        node = self.generic_visit(node)
        return _binary(node.left, node.op, node.right, node)

    def visit_AugAssign(self, node: ast.AugAssign) -> ast.AST:
        """`x -= m` as `x = x - m`."""
        node = self.generic_visit(node)
        if not isinstance(node.target, ast.Name):
            return node
        value = _binary(ast.copy_location(ast.Name(node.target.id, ast.Load()), node), node.op, node.value, node)
        return ast.copy_location(ast.Assign([node.target], value), node)

    def visit_Call(self, node: ast.Call) -> ast.AST:
        path = self._library(node.func)
        args = [self.visit(a) for a in node.args]
        keywords = [self.visit(k) for k in node.keywords]
        plain = not keywords and not any(isinstance(a, ast.Starred) for a in args)
        if path is not None:
            name, merged = _name(path)
            if merged:
                return self._library_call(name, args, keywords, plain, node)
            node.func = self._reference(path, node.func)
        elif isinstance(node.func, ast.Name) and node.func.id == "float" and len(args) == 1 \
                and isinstance(args[0], ast.Constant) and str(args[0].value).strip().lower() in ("inf", "-inf", "+inf"):
            return self._reference("numpy." + ("-inf" if str(args[0].value).strip().startswith("-") else "inf"), node)
        elif isinstance(node.func, ast.Attribute):
            node.func.value = self.visit(node.func.value)
            method = node.func.attr
            operation = method[2:-2] if method.startswith("__") and method.endswith("__") else method
            if plain and len(args) == 1 and operation in BINARY:
                return _binary(node.func.value, BINARY[operation](), args[0], node)
            if plain and len(args) == 1 and operation in COMPARE:
                return ast.copy_location(ast.Compare(node.func.value, [COMPARE[operation]()], [args[0]]), node)
            if plain and not args and operation in UNARY:
                return ast.copy_location(ast.UnaryOp(UNARY[operation](), node.func.value), node)
            if plain and not args and method in DROPPED_METHODS:
                return node.func.value
            return _method(node.func.value, _method_name(method, args), args, keywords, node)
        else:
            node.func = self.visit(node.func)
        node.args, node.keywords = args, keywords
        return node

    def _library_call(self, name: str, args: list, keywords: list, plain: bool, node: ast.Call) -> ast.AST:
        if plain and len(args) == 2 and name in BINARY:
            return _binary(args[0], BINARY[name](), args[1], node)
        if plain and len(args) == 2 and name in COMPARE:
            return ast.copy_location(ast.Compare(args[0], [COMPARE[name]()], [args[1]]), node)
        if plain and len(args) == 1 and name in UNARY:
            return ast.copy_location(ast.UnaryOp(UNARY[name](), args[0]), node)
        if args and not isinstance(args[0], ast.Starred) and name[:1].islower():
            if name == "permute" and len(args) == 3:     # torch.transpose(x, a, b) swaps two axes
                name = "swapaxes"
            return _method(args[0], name, args[1:], keywords, node)
        return ast.copy_location(ast.Call(ast.copy_location(ast.Name(name, ast.Load()), node), args, keywords), node)


def _binary(left: ast.AST, op: ast.operator, right: ast.AST, like: ast.AST) -> ast.AST:
    if isinstance(op, ast.Pow) and isinstance(right, ast.Constant) and right.value == 0.5:
        return _method(left, "sqrt", [], [], like)       # x ** 0.5 is sqrt(x)
    return ast.copy_location(ast.BinOp(left, op, right), like)


def _method_name(method: str, args: list) -> str:
    """A method's one spelling: `x.transpose(a, b)` swaps two axes (torch, or numpy on 2-D), any
    other transpose permutes them (numpy's, like torch's permute)."""
    if method == "transpose":
        return "swapaxes" if len(args) == 2 else "permute"
    return ALIASES.get(method, method)


def _method(receiver: ast.AST, name: str, args: list, keywords: list, like: ast.AST) -> ast.Call:
    if name in _SPREAD and len(args) == 1 and isinstance(args[0], (ast.Tuple, ast.List)):
        args = list(args[0].elts)
    func = ast.copy_location(ast.Attribute(receiver, name, ast.Load()), like)
    return ast.copy_location(ast.Call(func, args, keywords), like)


# ---------------------------------------------------------------- the order of independent statements

# Methods that change their object (a draw advances its generator): a statement calling one on x writes x.
MUTATORS = frozenset({"append", "extend", "insert", "pop", "update", "setdefault", "clear", "remove", "sort", "add",
                      "discard", "fill", "put", "resize", "seed", "manual_seed", "normal", "standard_normal", "randn",
                      "random", "integers", "choice", "uniform", "permutation", "shuffle", "rand", "randint"})
_REORDERED = (ast.Assign, ast.AnnAssign, ast.AugAssign)
LONGEST_RUN = 24


def in_canonical_order(statement: ast.stmt) -> ast.stmt:
    """`statement` with, in each of its bodies, every run of assignments to plain names put in one
    order that keeps what each reads after what it depends on (the first by their shape, names
    aside, whenever the order is free): a copier's swapped independent lines read as the original."""
    stack = [statement]
    while stack:                    # statements only: bodies hold no expression's nodes
        node = stack.pop()
        for name in ("body", "orelse", "finalbody", "handlers", "cases"):
            body = getattr(node, name, None)
            if isinstance(body, list):
                if len(body) > 1 and name not in ("handlers", "cases"):
                    body = _ordered(body)
                    setattr(node, name, body)
                stack += body
    return statement


def _ordered(body: list[ast.stmt]) -> list[ast.stmt]:
    out, run = [], []
    for statement in body + [None]:
        if statement is not None and _movable(statement):
            run.append(statement)
            continue
        for start in range(0, len(run), LONGEST_RUN):         # sorting is cubic in the run's length
            out += _sorted_run(run[start:start + LONGEST_RUN])
        run = []
        if statement is not None:
            out.append(statement)
    return out


def _movable(statement: ast.stmt) -> bool:
    targets = statement.targets if isinstance(statement, ast.Assign) else [getattr(statement, "target", None)]
    if not isinstance(statement, _REORDERED) or not all(_plain_names(t) for t in targets):
        return False
    return not any(isinstance(n, ast.Call) and isinstance(n.func, ast.Name) and n.func.id not in _BUILTINS
                   or isinstance(n, (ast.NamedExpr, ast.Await, ast.Yield, ast.YieldFrom, ast.Lambda))
                   for n in walk(statement))        # a call of the file's own function may read anything


def _plain_names(target: ast.AST | None) -> bool:
    if isinstance(target, ast.Name):
        return True
    if isinstance(target, (ast.Tuple, ast.List)):
        return all(_plain_names(e) for e in target.elts)
    return isinstance(target, ast.Starred) and _plain_names(target.value)


def _reads_writes(statement: ast.stmt) -> tuple[set[str], set[str]]:
    reads, writes = set(), set()
    for n in walk(statement):
        if isinstance(n, ast.Name):
            (reads if isinstance(n.ctx, ast.Load) else writes).add(n.id)
        elif isinstance(n, ast.Call) and isinstance(n.func, ast.Attribute) and isinstance(n.func.value, ast.Name) \
                and (n.func.attr in MUTATORS or n.func.attr.endswith("_")):
            writes.add(n.func.value.id)
    if isinstance(statement, ast.AugAssign):
        reads |= writes
    return reads, writes


def _shape(statement: ast.stmt) -> str:
    return " ".join(type(n).__name__ if not isinstance(n, (ast.Attribute, ast.Constant))
                    else repr(getattr(n, "attr", None) or getattr(n, "value", None)) for n in walk(statement))


def _sorted_run(run: list[ast.stmt]) -> list[ast.stmt]:
    """Kahn's topological order of the run, the smallest shape first among those free to go."""
    effects = [_reads_writes(s) for s in run]
    after: list[set[int]] = [set() for _ in run]
    for j, (reads_j, writes_j) in enumerate(effects):
        for i in range(j):
            reads_i, writes_i = effects[i]
            if writes_i & (reads_j | writes_j) or writes_j & reads_i:
                after[j].add(i)
    keys = [(_shape(s), i) for i, s in enumerate(run)]
    done: list[int] = []
    left = set(range(len(run)))
    while left:
        free = min((keys[i] for i in left if not after[i] - set(done)))
        done.append(free[1])
        left.discard(free[1])
    return [run[i] for i in done]
