"""The part of a student's file the grader can ever run, for the similarity fingerprints: padding a
copy with code that is never called must change nothing in them.

The roots are the exercise's contract names (the functions and classes its stub defines). A
top-level statement is live when it binds or changes a live name; what a live statement reads is
live in turn. A live class keeps the methods something can call: the dunders, the ones a
framework calls (`forward`), and those whose name live code reads as an attribute or writes as a
string (`self.helper(...)`, `getattr(self, "helper")`). Live code that looks names up by a
computed string (`getattr(obj, name)`, `globals()`, `eval`) keeps everything: what it reaches
cannot be known. Within what is kept, branches that cannot run (`if False:`, `if DEBUG:` with a
module constant `DEBUG = False`, which integrity/canonical.py reads as its literal, a demo under
`if __name__ == "__main__":`, code after a `return`), statements that do nothing (`pass`, a bare
expression, `x = x`, `x += 0`) and assignments, imports and nested functions nobody reads are
dropped.

Nothing here runs student code: it reads and prunes the syntax tree.
"""

from __future__ import annotations

import ast
import operator

from autograder.integrity.names import free_reads
from autograder.judge.syntax import children, walk

# Names a framework calls on a class the grader builds (torch.nn.Module's hooks).
CALLED_BY_FRAMEWORK = frozenset({"forward", "extra_repr", "reset_parameters", "_reset_parameters",
                                 "_apply", "train", "eval", "state_dict", "load_state_dict"})
# Calls that reach names by a string computed at run time.
DYNAMIC_LOOKUP = frozenset({"getattr", "setattr", "hasattr", "delattr", "globals", "locals", "vars", "eval",
                            "exec", "__import__", "import_module", "attrgetter", "methodcaller"})
_SCOPES = (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)
_UNKNOWN = object()
# Passes over a file (a hostile one chains thousands of names): past them, what is left is kept.
LIVE_PASSES = 64       # each over the top-level statements' facts
DROP_PASSES = 3        # each a walk of a function
_MAX_FOLDED = 10 ** 6      # constant folding of `if 2 ** 3 > 7:` stays small


def live_statements(tree: ast.Module, roots: frozenset[str]) -> list[ast.stmt | None]:
    """Each top-level statement of `tree`: its live part, or None when dead (the statements are
    pruned in place). Without a root the file defines, every statement is kept (pruned inside):
    nothing says what is called."""
    constants = {"__name__": "attnkit-grader"}     # not "__main__" where the grader imports the file
    pruned = [_one(_simplify([s], constants)) for s in tree.body]
    for function in _functions([s for s in pruned if s is not None]):
        _drop_unread_locals(function)
    facts = [_Facts(s) if s is not None else None for s in pruned]
    defined = set().union(*(f.binds for f in facts if f is not None))
    if not roots & defined:
        return pruned
    live_names, live_attrs = set(roots), set()
    live = [False] * len(pruned)
    changed, passes = True, 0
    while changed:
        changed, passes = False, passes + 1
        if passes > LIVE_PASSES:
            return pruned
        for i, f in enumerate(facts):
            if f is None:
                continue
            if not live[i] and (f.binds | f.changes) & live_names:
                live[i] = changed = True
                if f.dynamic:
                    return pruned
                live_names |= f.reads
                live_attrs |= f.attrs
            if live[i]:
                for method in f.methods_called(live_attrs):
                    changed = True
                    if method.dynamic:
                        return pruned
                    live_names |= method.reads
                    live_attrs |= method.attrs
    return [s if live[i] and s is not None else None for i, s in enumerate(_with_live_methods(pruned, facts, live))]


def _functions(body: list[ast.stmt]) -> list[ast.FunctionDef | ast.AsyncFunctionDef]:
    """The functions and methods defined in `body`, at any depth, outer ones first (statements
    only are visited: a function is a statement; one in a lambda or a comprehension cannot be)."""
    found, stack = [], list(reversed(body))
    while stack:
        node = stack.pop()
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
            found.append(node)
        for name in ("body", "orelse", "finalbody", "handlers", "cases"):
            part = getattr(node, name, None)
            if isinstance(part, list):
                stack += reversed(part)
    return found


def _one(statements: list[ast.stmt]) -> ast.stmt | None:
    """A top-level statement simplified to one, several (an `if True:` block: wrapped as one
    `if True:` again, so the statement keeps one place) or none."""
    if not statements:
        return None
    if len(statements) == 1:
        return statements[0]
    test = ast.copy_location(ast.Constant(True), statements[0])
    return ast.copy_location(ast.If(test=test, body=statements, orelse=[]), statements[0])


# ---------------------------------------------------------------- branches that cannot run, no-ops


def _bound_by(node: ast.AST) -> tuple[str, ...]:
    if isinstance(node, ast.Name) and not isinstance(node.ctx, ast.Load):
        return (node.id,)
    if isinstance(node, ast.arg):
        return (node.arg,)
    if isinstance(node, _SCOPES):
        return (node.name,)
    if isinstance(node, ast.alias):
        return (node.asname or node.name.split(".")[0],)
    if isinstance(node, (ast.Global, ast.Nonlocal)):
        return tuple(node.names)
    if isinstance(node, ast.ExceptHandler) and node.name:
        return (node.name,)
    return ()


_COMPARE = {ast.Eq: operator.eq, ast.NotEq: operator.ne, ast.Lt: operator.lt, ast.LtE: operator.le,
            ast.Gt: operator.gt, ast.GtE: operator.ge, ast.Is: operator.is_, ast.IsNot: operator.is_not}
_ARITHMETIC = {ast.Add: operator.add, ast.Sub: operator.sub, ast.Mult: operator.mul}


def _constant(node: ast.AST, constants: dict[str, object]) -> object:
    """The value of an expression of constants (`False`, `0`, `1 > 2`, `not DEBUG`), else _UNKNOWN."""
    if isinstance(node, ast.Constant):
        value = node.value
        return value if isinstance(value, (bool, int, float, str, type(None))) else _UNKNOWN
    if isinstance(node, ast.Name):
        return constants.get(node.id, _UNKNOWN)
    if isinstance(node, ast.UnaryOp):
        value = _constant(node.operand, constants)
        if value is _UNKNOWN:
            return _UNKNOWN
        if isinstance(node.op, ast.Not):
            return not value
        if isinstance(node.op, ast.USub) and isinstance(value, (int, float)):
            return -value
        return _UNKNOWN
    if isinstance(node, ast.BoolOp):
        values = [_constant(v, constants) for v in node.values]
        if _UNKNOWN in values:
            return _UNKNOWN
        return all(values) if isinstance(node.op, ast.And) else any(values)
    if isinstance(node, ast.Compare) and all(type(op) in _COMPARE for op in node.ops):
        values = [_constant(v, constants) for v in (node.left, *node.comparators)]
        if _UNKNOWN in values:
            return _UNKNOWN
        try:
            return all(_COMPARE[type(op)](a, b) for op, a, b in zip(node.ops, values, values[1:]))
        except TypeError:
            return _UNKNOWN
    if isinstance(node, ast.BinOp) and type(node.op) in _ARITHMETIC:
        a, b = _constant(node.left, constants), _constant(node.right, constants)
        if all(isinstance(v, (int, float)) and not isinstance(v, bool) and abs(v) < _MAX_FOLDED for v in (a, b)):
            return _ARITHMETIC[type(node.op)](a, b)
    return _UNKNOWN


def _simplify(body: list[ast.stmt], constants: dict[str, object]) -> list[ast.stmt]:
    """`body` without what cannot run or does nothing, its nested bodies likewise."""
    kept: list[ast.stmt] = []
    for statement in body:
        kept += _simplified(statement, constants)
        if kept and isinstance(kept[-1], (ast.Return, ast.Raise, ast.Continue, ast.Break)):
            break       # what follows in this block never runs
    return kept


def _simplified(statement: ast.stmt, constants: dict[str, object]) -> list[ast.stmt]:
    if isinstance(statement, (ast.If, ast.While)):
        test = _constant(statement.test, constants)
        if test is not _UNKNOWN and not test:
            return _simplify(statement.orelse, constants)
        if test is not _UNKNOWN and isinstance(statement, ast.If):
            return _simplify(statement.body, constants)
    if _does_nothing(statement):
        return []
    for name in ("body", "orelse", "finalbody"):
        if isinstance(getattr(statement, name, None), list):
            setattr(statement, name, _simplify(getattr(statement, name), constants))
    if isinstance(statement, ast.Try):
        for handler in statement.handlers:
            handler.body = _simplify(handler.body, constants)
        if not statement.body:           # nothing can raise: neither handlers nor else run
            return statement.finalbody
    if isinstance(statement, ast.Match):
        for case in statement.cases:
            case.body = _simplify(case.body, constants)
    if isinstance(statement, (ast.If, ast.For, ast.AsyncFor, ast.While, ast.With, ast.AsyncWith)) \
            and not statement.body and not getattr(statement, "orelse", None):
        return []
    return [statement]


def _does_nothing(statement: ast.stmt) -> bool:
    """`pass`, a bare expression that calls nothing, `x = x`, `x += 0`, `x *= 1`."""
    if isinstance(statement, ast.Pass):
        return True
    if isinstance(statement, ast.Expr):
        return not any(isinstance(n, (ast.Call, ast.Await, ast.Yield, ast.YieldFrom, ast.NamedExpr))
                       for n in walk(statement.value))
    if isinstance(statement, ast.Assign) and len(statement.targets) == 1:
        target, value = statement.targets[0], statement.value
        if isinstance(value, ast.BinOp) and _same_place(target, value.left):     # x = x + 0 (x += 0, as read)
            return _identity(value.op, value.right)
        return _same_place(target, value)
    if isinstance(statement, ast.AugAssign):
        return _identity(statement.op, statement.value)
    return False


_IDENTITY = {ast.Add: 0, ast.Sub: 0, ast.Mult: 1, ast.Div: 1, ast.FloorDiv: 1, ast.Pow: 1}


def _identity(op: ast.operator, operand: ast.AST) -> bool:
    """`+ 0`, `* 1`, ...: an operation that leaves a number as it is."""
    return isinstance(operand, ast.Constant) and type(op) in _IDENTITY and not isinstance(operand.value, bool) \
        and operand.value == _IDENTITY[type(op)]


def _same_place(target: ast.AST, value: ast.AST) -> bool:
    """`x` and `x`, `self.a` and `self.a`: an assignment of a place to itself."""
    while isinstance(target, ast.Attribute) and isinstance(value, ast.Attribute) and target.attr == value.attr:
        target, value = target.value, value.value
    return isinstance(target, ast.Name) and isinstance(value, ast.Name) and target.id == value.id


# ---------------------------------------------------------------- locals nobody reads


def _drop_unread_locals(function: ast.FunctionDef | ast.AsyncFunctionDef) -> None:
    """Assignments, imports and nested definitions in `function` whose names nothing in it reads
    (nested functions and comprehensions included), until none is left."""
    for _ in range(DROP_PASSES):
        keep = free_reads(function)         # names declared global or nonlocal count as read
        if keep & _READS_LOCALS or not _drop_in(function, keep):
            return


_READS_LOCALS = frozenset({"locals", "vars", "eval", "exec"})


def _drop_in(node: ast.AST, keep: set[str]) -> bool:
    """Drops the unread assignments of the bodies of `node` that belong to its scope."""
    dropped = False
    for name in ("body", "orelse", "finalbody"):
        body = getattr(node, name, None)
        if not isinstance(body, list):
            continue
        kept = [s for s in body if not _unread(s, keep)]
        dropped |= len(kept) != len(body)
        setattr(node, name, kept)
        for statement in kept:
            if not isinstance(statement, _SCOPES):
                dropped |= _drop_in(statement, keep)
    for part in getattr(node, "handlers", None) or getattr(node, "cases", None) or ():
        dropped |= _drop_in(part, keep)
    return dropped


def _unread(statement: ast.stmt, keep: set[str]) -> bool:
    if isinstance(statement, ast.Assign):
        targets = [t for target in statement.targets for t in _names_of(target)]
        return None not in targets and not set(targets) & keep
    if isinstance(statement, (ast.AnnAssign, ast.AugAssign)):
        return isinstance(statement.target, ast.Name) and statement.target.id not in keep
    if isinstance(statement, (ast.Import, ast.ImportFrom)):
        return all(a.name != "*" and (a.asname or a.name.split(".")[0]) not in keep for a in statement.names)
    if isinstance(statement, _SCOPES):
        return statement.name not in keep
    return False


def _names_of(target: ast.AST) -> list[str | None]:
    """The plain names a target binds; None for a part that is not one (`x[0] = `, `self.a = `)."""
    if isinstance(target, ast.Name):
        return [target.id]
    if isinstance(target, (ast.Tuple, ast.List)):
        return [n for element in target.elts for n in _names_of(element)]
    if isinstance(target, ast.Starred):
        return _names_of(target.value)
    return [None]


def _dynamic_call(call: ast.Call) -> bool:
    """`getattr(obj, name)` with a name computed at run time, `globals()`, `eval(...)`, ..."""
    func = call.func
    name = func.id if isinstance(func, ast.Name) else func.attr if isinstance(func, ast.Attribute) else ""
    if name not in DYNAMIC_LOOKUP:
        return False
    named = [a for a in call.args[1:2] if isinstance(a, ast.Constant) and isinstance(a.value, str)]
    return name not in {"getattr", "setattr", "hasattr", "delattr"} or not named


# ---------------------------------------------------------------- what is reachable from the roots


class _Part:
    """What a piece of code reads: names, attribute names and strings (which may name a method);
    and whether it looks names up by a computed string."""

    def __init__(self, nodes: list[ast.AST]):
        self.reads: set[str] = set()
        self.attrs: set[str] = set()
        self.dynamic = False
        for node in (n for top in nodes for n in walk(top)):
            if isinstance(node, ast.Name):
                if isinstance(node.ctx, ast.Load):
                    self.reads.add(node.id)
            elif isinstance(node, ast.Attribute):
                self.attrs.add(node.attr)
            elif isinstance(node, ast.Constant):
                if isinstance(node.value, str) and node.value.isidentifier():
                    self.attrs.add(node.value)
                    self.reads.add(node.value)
            elif isinstance(node, ast.Call):
                self.dynamic = self.dynamic or _dynamic_call(node)
        self.dynamic = self.dynamic or bool(self.attrs & {"__dict__", "modules"})


class _Facts(_Part):
    """One top-level statement: the names it binds at the top level, the top-level names whose
    objects it changes (`X.a = ...`, `X[k] = ...`, `X.update(...)`), what it reads; for a class,
    what its methods read, each apart."""

    def __init__(self, statement: ast.stmt):
        self.binds, self.changes = set(), set()
        self.methods: dict[str, _Part] = {}
        self._method_nodes: dict[str, ast.AST] = {}
        self._called: set[str] = set()
        outside = []
        if isinstance(statement, ast.ClassDef):
            self.binds.add(statement.name)
            outside = [*statement.bases, *statement.keywords, *statement.decorator_list]
            for item in statement.body:
                if isinstance(item, (ast.FunctionDef, ast.AsyncFunctionDef)):
                    self.methods[item.name] = _Part([item])
                    self._method_nodes[item.name] = item
                else:
                    outside.append(item)
        else:
            self._top_level_effects(statement)
            outside = [statement]
        super().__init__(outside)

    def _top_level_effects(self, statement: ast.AST) -> None:
        for node in _top_scope(statement):
            self.binds.update(_bound_by(node) if not isinstance(node, (ast.arg, ast.Global, ast.Nonlocal)) else ())
            if isinstance(node, (ast.Attribute, ast.Subscript)) and not isinstance(node.ctx, ast.Load):
                self.changes.add(_base_name(node))
            elif isinstance(node, ast.Expr) and isinstance(node.value, ast.Call) \
                    and isinstance(node.value.func, ast.Attribute):
                self.changes.add(_base_name(node.value.func))
        self.changes.discard(None)

    def methods_called(self, attrs: set[str]) -> list[_Part]:
        """The methods newly callable given the attribute names live code reads."""
        new = [name for name in self.methods if name not in self._called
               and (name in attrs or name in CALLED_BY_FRAMEWORK or (name.startswith("__") and name.endswith("__")))]
        self._called.update(new)
        return [self.methods[name] for name in new]

    def live_method(self, name: str) -> bool:
        return name in self._called


def _top_scope(statement: ast.AST):
    """The nodes of a top-level statement that run in the module's scope (the bodies of its
    functions, classes, lambdas and comprehensions are theirs)."""
    stack = [statement]
    while stack:
        node = stack.pop()
        yield node
        if not isinstance(node, _OWN_SCOPE):
            stack.extend(children(node))


_OWN_SCOPE = (*_SCOPES, ast.Lambda, ast.ListComp, ast.SetComp, ast.DictComp, ast.GeneratorExp)


def _base_name(node: ast.AST) -> str | None:
    while isinstance(node, (ast.Attribute, ast.Subscript)):
        node = node.value
    return node.id if isinstance(node, ast.Name) else None


def _with_live_methods(pruned: list[ast.stmt | None], facts: list[_Facts | None], live: list[bool]) -> list:
    """Live classes without the methods nothing can call."""
    out = []
    for statement, f, alive in zip(pruned, facts, live):
        if alive and isinstance(statement, ast.ClassDef):
            statement.body = [item for item in statement.body
                              if not isinstance(item, (ast.FunctionDef, ast.AsyncFunctionDef)) or f.live_method(item.name)]
        out.append(statement)
    return out
