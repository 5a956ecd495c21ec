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


# ---------------------------------------------------------------- padding: code that never runs

UNUSED_FUNCTIONS = ("""

def summarise_rows(values, precision=3):
    \"\"\"Mean, spread and extremes of each row, rounded.\"\"\"
    table = []
    for index, row in enumerate(values):
        row = [float(v) for v in row]
        count = len(row)
        mean = sum(row) / count
        spread = (sum((v - mean) ** 2 for v in row) / count) ** 0.5
        lowest, highest = min(row), max(row)
        table.append({
            "row": index, "mean": round(mean, precision), "spread": round(spread, precision),
            "low": round(lowest, precision), "high": round(highest, precision),
        })
    return table
""", """

def describe_shape(array, name="array"):
    shape = getattr(array, "shape", None)
    if shape is None:
        return f"{name}: not an array"
    parts = []
    for axis, size in enumerate(shape):
        if size == 0:
            parts.append(f"axis {axis} empty")
        elif size == 1:
            parts.append(f"axis {axis} broadcastable")
        else:
            parts.append(f"axis {axis} of {size}")
    dims = len(shape)
    kind = "scalar" if dims == 0 else "vector" if dims == 1 else "matrix" if dims == 2 else "tensor"
    return f"{name} ({kind}): " + ", ".join(parts)
""", """

def moving_average(series, window=3):
    if window < 1:
        raise ValueError("window must be positive")
    averaged = []
    running = 0.0
    queue = []
    for value in series:
        queue.append(value)
        running += value
        if len(queue) > window:
            running -= queue.pop(0)
        averaged.append(running / len(queue))
    smoothed = [round(a, 4) for a in averaged]
    assert len(smoothed) == len(series)
    return smoothed
""", """

def top_k_positions(weights, k=2):
    found = {}
    for query, row in enumerate(weights):
        ranked = sorted(range(len(row)), key=lambda j: -row[j])
        chosen = ranked[:k]
        total = 0.0
        for j in chosen:
            total += row[j]
        found[query] = {
            "positions": chosen,
            "mass": total,
            "rest": 1.0 - total,
        }
    best = max(found, key=lambda q: found[q]["mass"]) if found else None
    return found, best
""")


def pad_with_unused_function(source: str) -> str:
    """`source` with 15-line functions of its own that nothing calls appended (each another), as
    many as it has lines of code over 15 (one at least)."""
    code_lines = sum(1 for line in ast.unparse(ast.parse(source)).splitlines() if line.strip())
    count = min(len(UNUSED_FUNCTIONS), max(1, -(-code_lines // 15)))
    return source.rstrip("\n") + "\n" + "".join(UNUSED_FUNCTIONS[:count])


def pad_with_dead_branches(source: str, seed: int = 0) -> str:
    """Every function of `source` with blocks that can never run put between its statements:
    `if False:`, `if DEBUG:` (a module constant False), `while 0:`, and code after its return."""
    tree = ast.parse(source)
    rng = random.Random(seed)
    tests = ["False", "DEBUG", "0", "1 > 2", "not True"]
    padding = ("scratch = [k * k for k in range(10)]\n    print('debug', scratch, len(scratch))\n"
               "    total = 0\n    for k in scratch:\n        total += k\n    print(total)")
    for function in _functions(tree):
        body = []
        for statement in function.body:
            body.append(statement)
            if not isinstance(statement, ast.Return):
                test = rng.choice(tests)
                keyword = "while" if test == "0" else "if"
                body += ast.parse(f"{keyword} {test}:\n    {padding}\n").body
        if isinstance(body[-1], ast.Return):
            body += ast.parse("print('unreachable')\nreturn None\n").body
        function.body = body
    tree.body.insert(_after_imports(tree), ast.parse("DEBUG = False").body[0])
    return ast.unparse(ast.fix_missing_locations(tree)) + "\n"


def pad_with_no_ops(source: str, seed: int = 0) -> str:
    """Every function of `source` with statements that do nothing between its own: `pass`, bare
    names and numbers, `x = x`, `x += 0`, a string, an unused assignment and an unused import."""
    tree = ast.parse(source)
    rng = random.Random(seed)
    for function in _functions(tree):
        names = sorted({a.arg for a in function.args.args if a.arg != "self"})
        body = [*ast.parse("import itertools as _unused_tools").body]
        for statement in function.body:
            if not isinstance(statement, ast.Return) and names:
                name = rng.choice(names)
                body += ast.parse(rng.choice([
                    f"pass\n{name}\n", f"{name} = {name}\n{name} += 0\n", f"'{name} is ready'\n42\n",
                    f"unused_{len(body)} = {name}\n...\n", f"{name}\n{name} *= 1\npass\n"])).body
            body.append(statement)
        function.body = body
    return ast.unparse(ast.fix_missing_locations(tree)) + "\n"


def _functions(tree: ast.Module) -> list[ast.FunctionDef]:
    """The top-level functions and the methods of top-level classes (not the nested ones)."""
    found = []
    for node in tree.body:
        if isinstance(node, ast.FunctionDef):
            found.append(node)
        elif isinstance(node, ast.ClassDef):
            found += [n for n in node.body if isinstance(n, ast.FunctionDef)]
    return found


def _after_imports(tree: ast.Module) -> int:
    places = [i + 1 for i, s in enumerate(tree.body) if isinstance(s, (ast.Import, ast.ImportFrom))]
    return max(places, default=0)


# ---------------------------------------------------------------- the same operations, spelled otherwise

def star_import(source: str, modules: tuple[tuple[str, str], ...] = (("numpy", "np"), ("math", "math"))) -> str:
    """`import numpy as np` and `import math` (wherever they are) as `from numpy import *` and
    `from math import *` at the top, and every `np.name` and `math.name` as `name`."""
    tree = ast.parse(source)
    aliases = {alias: module for module, alias in modules}
    used = set()

    class Unqualify(ast.NodeTransformer):
        def visit_Attribute(self, node):
            self.generic_visit(node)
            if isinstance(node.value, ast.Name) and node.value.id in aliases:
                used.add(aliases[node.value.id])
                return ast.copy_location(ast.Name(node.attr, node.ctx), node)
            return node

        def visit_Import(self, node):
            kept = [a for a in node.names if (a.asname or a.name) not in aliases]
            return ast.Import(kept) if kept else None

    tree = Unqualify().visit(tree)
    for node in ast.walk(tree):
        if getattr(node, "body", None) == []:        # a body that held only the import
            node.body = [ast.Pass()]
    at = _after_imports(tree)
    for module, _ in reversed(modules):
        if module in used:
            tree.body.insert(at, ast.ImportFrom(module=module, names=[ast.alias("*")], level=0))
    return ast.unparse(ast.fix_missing_locations(tree)) + "\n"


_AS_CALLS = {ast.MatMult: ("np.matmul", "operator.matmul", "__matmul__"),
             ast.Div: ("np.divide", "operator.truediv", "__truediv__"), ast.Mult: ("np.multiply", "operator.mul", "__mul__"), ast.Add: ("np.add", "operator.add", "__add__"),
             ast.Sub: ("np.subtract", "operator.sub", "__sub__"), ast.Pow: ("np.power", "operator.pow", "__pow__"),
             ast.FloorDiv: ("np.floor_divide", "operator.floordiv", "__floordiv__"),
             ast.Mod: ("np.mod", "operator.mod", "__mod__"), ast.Lt: ("np.less", "operator.lt", "__lt__"),
             ast.LtE: ("np.less_equal", "operator.le", "__le__"), ast.Gt: ("np.greater", "operator.gt", "__gt__"),
             ast.GtE: ("np.greater_equal", "operator.ge", "__ge__"), ast.Eq: ("np.equal", "operator.eq", "__eq__"),
             ast.USub: ("np.negative", "operator.neg", "__neg__")}


def operators_as_calls(source: str, seed: int = 0) -> str:
    """Every arithmetic operator, comparison and unary minus written as a call: numpy's function,
    the `operator` module's, or the operand's dunder method; `a /= b` as `a = operator.truediv(a, b)`."""
    tree = ast.parse(source)
    rng = random.Random(seed)

    def call(op, *operands):
        way = rng.randrange(3)
        if way == 2:
            return ast.Call(ast.Attribute(operands[0], _AS_CALLS[type(op)][2], ast.Load()), list(operands[1:]), [])
        return ast.Call(ast.parse(_AS_CALLS[type(op)][way], mode="eval").body, list(operands), [])

    class AsCall(ast.NodeTransformer):
        def visit_BinOp(self, node):
            self.generic_visit(node)
            return ast.copy_location(call(node.op, node.left, node.right), node) if type(node.op) in _AS_CALLS else node

        def visit_UnaryOp(self, node):
            self.generic_visit(node)
            if type(node.op) in _AS_CALLS and not isinstance(node.operand, ast.Constant):
                return ast.copy_location(call(node.op, node.operand), node)
            return node

        def visit_Compare(self, node):
            self.generic_visit(node)
            if len(node.ops) == 1 and type(node.ops[0]) in _AS_CALLS:
                return ast.copy_location(call(node.ops[0], node.left, node.comparators[0]), node)
            return node

        def visit_AugAssign(self, node):
            self.generic_visit(node)
            if type(node.op) not in _AS_CALLS or not isinstance(node.target, ast.Name):
                return node
            value = call(node.op, ast.Name(node.target.id, ast.Load()), node.value)
            return ast.copy_location(ast.Assign([node.target], value), node)

    tree = AsCall().visit(tree)
    tree.body.insert(0, ast.parse("import operator").body[0])
    if not any(isinstance(n, ast.Import) and any(a.asname == "np" for a in n.names) for n in tree.body):
        tree.body.insert(0, ast.parse("import numpy as np").body[0])
    return ast.unparse(ast.fix_missing_locations(tree)) + "\n"


# numpy's name -> torch's, where they differ
_TORCH_NAMES = {"swapaxes": "transpose", "concatenate": "cat", "asarray": "as_tensor", "array": "as_tensor",
                "expand_dims": "unsqueeze", "max": "amax", "min": "amin", "newaxis": "newaxis", "bool_": "bool",
                "float_": "float64", "ascontiguousarray": "as_tensor"}
_TORCH_KEYWORDS = {"axis": "dim", "keepdims": "keepdim", "k": "diagonal"}
_ARRAY_PARAMETERS = {"x", "X", "Q", "K", "V", "W_q", "W_k", "W_v", "W_o", "scores", "weights"}


def numpy_to_torch(source: str) -> str:
    """`source` with numpy swapped for torch: `np.f` as `torch.f` (torch's name where it differs),
    `axis=` as `dim=`, `keepdims=` as `keepdim=`, `.astype` as `.to`, numpy's `.transpose(axes)` as
    `.permute`, `.swapaxes` as `.transpose`, `.max(axis=...)` as `.amax(dim=...)`, the array
    arguments made tensors on the way in."""
    tree = ast.parse(source)

    class ToTorch(ast.NodeTransformer):
        def visit_Attribute(self, node):
            self.generic_visit(node)
            if isinstance(node.value, ast.Name) and node.value.id == "np":
                if node.attr == "newaxis":
                    return ast.copy_location(ast.Constant(None), node)
                return ast.copy_location(ast.Attribute(ast.Name("torch", ast.Load()),
                                                       _TORCH_NAMES.get(node.attr, node.attr), node.ctx), node)
            return node

        def visit_Call(self, node):
            self.generic_visit(node)
            func = node.func
            if not isinstance(func, ast.Name):      # a library call or a method (not the file's own): torch's keywords
                for keyword in node.keywords:
                    keyword.arg = _TORCH_KEYWORDS.get(keyword.arg, keyword.arg)
            if isinstance(func, ast.Attribute) and func.attr == "sqrt" \
                    and isinstance(func.value, ast.Name) and func.value.id == "torch":
                func.value.id = "math"          # of a dimension: a number, not a tensor
            if isinstance(func, ast.Attribute) and not (isinstance(func.value, ast.Name) and func.value.id == "torch"):
                if func.attr == "astype":
                    func.attr = "to"
                elif func.attr == "swapaxes":
                    func.attr = "transpose"
                elif func.attr == "transpose" and len(node.args) != 2:
                    func.attr = "permute"
                elif func.attr in ("max", "min") and node.keywords:
                    func.attr = "a" + func.attr
            return node

    tree = ToTorch().visit(tree)
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            node.names = [ast.alias("torch") if a.name == "numpy" else a for a in node.names]
    if not any(isinstance(n, ast.Import) and any(a.name == "math" for a in n.names) for n in tree.body):
        tree.body.insert(0, ast.parse("import math").body[0])
    for function in _functions(tree):
        arrays = [a.arg for a in function.args.args if a.arg in _ARRAY_PARAMETERS]
        function.body[:0] = [ast.parse(f"{a} = torch.as_tensor({a})").body[0] for a in arrays]
        if any(a.arg == "mask" for a in function.args.args):
            function.body.insert(0, ast.parse("mask = None if mask is None else torch.as_tensor(mask)").body[0])
    return ast.unparse(ast.fix_missing_locations(tree)) + "\n"
