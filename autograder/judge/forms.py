"""Which file of an exercise counts, `attention.py` or `attention.ipynb`: the grader's rule, and
the handout's check.py's.

An untouched stub never wins over work: a graded function whose body does nothing (a docstring,
`pass`, `...`, `return` or `return None`, `raise NotImplementedError`) is a stub, and so is a graded
constant still None. With one form holding work, that form is graded; with both holding work,
both are graded and the better counts; with neither, the .py. A file that cannot be read (it does
not compile, is not a notebook, ...) is not the stub either: beside an untouched stub it is graded,
its error named; beside work it is passed over with a note. Which file was saved last plays no
part (Jupyter's autosave would decide it).

Kit-free (the standard library only): the grader's intake (autograder/intake/load.py, stubs.py)
and the handout's check.py (as check_forms.py) decide with this one module.
"""

from __future__ import annotations

import ast
from dataclasses import dataclass
from typing import Callable, Collection

_FUNCTIONS = (ast.FunctionDef, ast.AsyncFunctionDef)

BOTH_FORMS = "both_forms"        # intake.Flag values: both forms hold work / the other form is a stub
STUB_SKIPPED = "stub_skipped"


def has_work(source: str, graded: Collection[str], parse: Callable[[str], ast.Module] = ast.parse) -> bool:
    """Whether the code answers anything: a graded function or method that is not a stub, or a
    graded constant that is not None. Code that does not parse is somebody's work in progress."""
    try:
        tree = parse(source)
    except (SyntaxError, ValueError, RecursionError, MemoryError):
        return True
    graded = set(graded)
    for node in tree.body:
        if isinstance(node, (*_FUNCTIONS, ast.ClassDef)) and node.name in graded:
            if not is_stub(node):
                return True
        elif isinstance(node, (ast.Assign, ast.AnnAssign)):
            targets = node.targets if isinstance(node, ast.Assign) else [node.target]
            names = {t.id for t in targets if isinstance(t, ast.Name)}
            value = node.value
            if names & graded and value is not None and not _is_none(value):
                return True
    return False


def stub_names(source: str, graded: Collection[str], parse: Callable[[str], ast.Module] = ast.parse) -> frozenset[str]:
    """The graded functions and classes whose last top-level definition is a stub."""
    try:
        tree = parse(source)
    except (SyntaxError, ValueError, RecursionError, MemoryError):
        return frozenset()
    graded = set(graded)
    last = {node.name: node for node in tree.body if isinstance(node, (*_FUNCTIONS, ast.ClassDef))
            and node.name in graded}
    return frozenset(name for name, node in last.items() if is_stub(node))


def is_stub(node: ast.stmt) -> bool:
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


# ---------------------------------------------------------------- the rule

@dataclass(frozen=True)
class Form:
    """One file of an exercise as read: its name, why it cannot be read (None: it was), whether
    it holds work (has_work)."""
    filename: str
    problem: str | None = None
    work: bool = False


@dataclass(frozen=True)
class Choice:
    """The form graded, the other one graded too when both hold work (the better counts), why."""
    graded: Form
    alternative: Form | None = None
    note: str = ""
    flag: str = ""


def choose(forms: list[Form]) -> Choice:
    """Which of an exercise's forms (the .py first, then the notebook; one or two) counts."""
    if len(forms) == 1:
        return Choice(forms[0])
    good = [f for f in forms if f.problem is None]
    if not good:
        return Choice(forms[0])
    if len(good) == 1:
        read, other = good[0], next(f for f in forms if f is not good[0])
        if read.work:
            return Choice(read, note=f"{other.filename} could not be read ({other.problem}); graded {read.filename}")
        # the stub reads; the student's file, broken as it is, is their work, graded with its error named
        return Choice(other, note=f"{read.filename} is an untouched stub; graded {other.filename}", flag=STUB_SKIPPED)
    py, nb = good
    if py.work and nb.work:
        return Choice(py, nb, f"both {py.filename} and {nb.filename} hold work", BOTH_FORMS)
    if not py.work and not nb.work:
        return Choice(py, note=f"both {py.filename} and {nb.filename} are untouched stubs; graded {py.filename}")
    keep, stub = (nb, py) if nb.work else (py, nb)
    return Choice(keep, note=f"{stub.filename} is an untouched stub; graded {keep.filename}", flag=STUB_SKIPPED)
