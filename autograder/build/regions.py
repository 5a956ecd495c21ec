"""Solution regions: nbgrader's markers in a solution file, found, validated and named by task.

``solutions/<stem>.py`` holds its solution code between nbgrader's markers, each alone on its
line and indented to the code. A region inside a top-level ``def`` or ``class`` belongs to the
task ``<stem>.<that name>``; a module-level region names its task in a ``# Task: <stem>.<name>``
comment on the line above it. ``parse_regions`` returns the regions or raises a ``BuildError``
that names the file and line; ``check_imports`` holds a solution to what a submission may import.
The build (autograder/build/exercises.py) and the nbgrader course (autograder/nbgrader/course.py) read
solution files through this module.
"""

from __future__ import annotations

import ast
import re
import sys
from dataclasses import dataclass

from autograder.judge import syntax

BEGIN = "### BEGIN SOLUTION"
END = "### END SOLUTION"

# What a solution file may import: the same rule as for a student's submission.
ALLOWED_IMPORTS = frozenset({"numpy", "torch", "matplotlib", "math"})

_CELL_RE = re.compile(r"^# %%(.*)$")
_NON_CODE_CELL_RE = re.compile(r"\[(markdown|md|raw)\]")
_TASK_RE = re.compile(r"^#\s*Task:\s*(\S+)\s*$")
_TASK_ID_RE = re.compile(r"^[A-Za-z_]\w*\.[A-Za-z_]\w*$")
_MARKER_WORDS = re.compile(r"\b(BEGIN|END)\s+SOLUTION\b")


class BuildError(Exception):
    """A solution file the generator cannot turn into an exercise; names file and line."""

    def __init__(self, filename: str, line: int | None, message: str) -> None:
        self.filename = filename
        self.line = line
        self.reason = message
        where = f"{filename}:{line}" if line is not None else filename
        super().__init__(f"{where}: {message}")


@dataclass(frozen=True)
class Region:
    """One solution region. Line numbers are 1-based and point at the marker lines."""

    begin: int
    end: int
    indent: str
    task: str
    module_level: bool
    task_line: int | None  # the ``# Task:`` comment line, if any
    where: str  # what the student implements here, for the TODO text: "softmax", "MultiHeadAttention.__init__"


def _find_markers(lines: list[str], filename: str) -> list[tuple[int, int, str]]:
    """Balanced (begin, end, indent) triples, or a BuildError at the first bad marker."""
    pairs: list[tuple[int, int, str]] = []
    open_at: int | None = None
    open_indent = ""
    in_code_cell = True  # text before the first cell marker becomes a code cell
    for number, line in enumerate(lines, start=1):
        cell = _CELL_RE.match(line)
        if cell:
            if open_at is not None:
                raise BuildError(filename, number,
                                 f"a cell marker inside the solution region opened at line {open_at}; "
                                 f"close it with '{END}' before the next '# %%'")
            in_code_cell = not _NON_CODE_CELL_RE.search(cell.group(1))
            continue
        stripped = line.strip()
        if stripped in (BEGIN, END):
            indent = line[: len(line) - len(line.lstrip())]
            if not in_code_cell:
                raise BuildError(filename, number, f"'{stripped}' in a markdown or raw cell; markers belong in code")
            if stripped == BEGIN:
                if open_at is not None:
                    raise BuildError(filename, number,
                                     f"'{BEGIN}' inside the region already opened at line {open_at} "
                                     f"(regions do not nest)")
                open_at, open_indent = number, indent
            else:
                if open_at is None:
                    raise BuildError(filename, number, f"'{END}' without a matching '{BEGIN}'")
                if indent != open_indent:
                    raise BuildError(filename, number,
                                     f"'{END}' is indented differently from its '{BEGIN}' at line {open_at}")
                if not any(lines[i].strip() for i in range(open_at, number - 1)):
                    raise BuildError(filename, open_at, "empty solution region")
                pairs.append((open_at, number, open_indent))
                open_at = None
        elif _MARKER_WORDS.search(line) and "SOLUTION" in line and "###" in line:
            raise BuildError(filename, number,
                             f"misplaced marker: '{BEGIN}' and '{END}' must stand alone on their line")
        elif open_at is not None and stripped and not line.startswith(open_indent):
            raise BuildError(filename, number,
                             f"line is indented less than the '{BEGIN}' at line {open_at}; "
                             f"a region must stay inside one block")
    if open_at is not None:
        raise BuildError(filename, open_at, f"'{BEGIN}' is never closed with '{END}'")
    return pairs


def _task_comment(lines: list[str], begin: int) -> tuple[str, int] | None:
    """The ``# Task: <id>`` comment on the nearest non-blank line above ``begin``."""
    number = begin - 1
    while number >= 1 and not lines[number - 1].strip():
        number -= 1
    if number < 1:
        return None
    match = _TASK_RE.match(lines[number - 1].strip())
    return (match.group(1), number) if match else None


def _enclosing(tree: ast.Module, line: int) -> ast.stmt | None:
    for node in tree.body:
        start = min([node.lineno] + [d.lineno for d in getattr(node, "decorator_list", [])])
        if start < line <= (node.end_lineno or node.lineno):
            return node
    return None


def _innermost_def_name(node: ast.AST, line: int) -> str:
    """Dotted name of the innermost def/class around ``line``, from the top-level ``node``."""
    names = [node.name]  # type: ignore[attr-defined]
    current = node
    while True:
        for child in ast.iter_child_nodes(current):
            if isinstance(child, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)) and \
                    child.lineno < line <= (child.end_lineno or child.lineno):
                names.append(child.name)
                current = child
                break
        else:
            return ".".join(names)


def parse_python(text: str, filename: str) -> ast.Module:
    try:
        return syntax.parse(text, filename=filename)
    except SyntaxError as err:
        raise BuildError(filename, err.lineno, f"syntax error: {err.msg}") from None


def parse_regions(text: str, filename: str, stem: str) -> list[Region]:
    """Find and validate the solution regions of one solution file."""
    lines = text.splitlines()
    pairs = _find_markers(lines, filename)
    tree = parse_python(text, filename)
    regions: list[Region] = []
    for begin, end, indent in pairs:
        comment = _task_comment(lines, begin)
        if not indent:
            if comment is None:
                raise BuildError(filename, begin,
                                 f"a module-level solution region needs a '# Task: {stem}.<name>' "
                                 f"comment on the line above it")
            task, task_line = comment
            where = task.split(".", 1)[-1]
        else:
            node = _enclosing(tree, begin)
            if not isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
                raise BuildError(filename, begin,
                                 "an indented solution region must sit inside a top-level def or class")
            task, task_line = f"{stem}.{node.name}", None
            where = _innermost_def_name(node, begin)
            if comment is not None and comment[0] != task:
                raise BuildError(filename, comment[1],
                                 f"'# Task: {comment[0]}' disagrees with the enclosing definition ({task})")
        if not _TASK_ID_RE.match(task) or not task.startswith(f"{stem}."):
            raise BuildError(filename, task_line or begin,
                             f"task id {task!r} must have the form '{stem}.<name>'")
        regions.append(Region(begin, end, indent, task, not indent, task_line, where))
    return regions


def check_imports(tree: ast.Module, filename: str) -> None:
    stdlib = set(getattr(sys, "stdlib_module_names", ())) | {"__future__"}
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            names = [alias.name for alias in node.names]
        elif isinstance(node, ast.ImportFrom):
            if node.level:
                raise BuildError(filename, node.lineno, "relative imports are not allowed in an exercise")
            names = [node.module or ""]
        else:
            continue
        for name in names:
            top = name.split(".")[0]
            if top not in ALLOWED_IMPORTS and top not in stdlib:
                raise BuildError(filename, node.lineno,
                                 f"import of {name!r}: an exercise may import only numpy, torch, "
                                 f"matplotlib, math and the standard library")
