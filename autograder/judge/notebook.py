"""A notebook read as Jupyter's Run All runs it: its code cells, each as IPython transforms it.

The grader (autograder/intake/load.py) and the handout's check.py read notebooks with this one
module, so a cell means the same on both sides: a code cell is numbered as Jupyter shows it
(markdown cells counted), nbgrader's test cells and the kit's own cells are left out, a cell that
is not plain Python (`%%time`, `%matplotlib inline`, `!pip install`, `np.exp?`) becomes what IPython
runs (`get_ipython().run_cell_magic('time', '', body)`), answered by the stand-ins of
ipython_shell.py; a scratch cell that does not compile even so is left out with a note, a solution
cell that does not is the file's error. The cells are run by `run_cells`, in the grader's sandbox
child and in check.py's child alike; a cell that raises is skipped, as Jupyter runs past it, and
named by its number.

Kit-free: the standard library only (IPython's transformer when a cell needs it, nbformat for a
notebook that is not plain format 4). The sandbox's zygote loads it from the judge's folder.
"""

from __future__ import annotations

import ast
import importlib.util
import json
import linecache
import re
import threading
from dataclasses import dataclass
from pathlib import Path

# The stand-ins for IPython, and the reading of an error (the sandbox child's too).
from . import errors, ipython_shell
from .syntax import count_nodes, one_at_a_time, parse, parsed

_BODY_RUNS = ipython_shell.CELL_MAGICS_IN_NAMESPACE | ipython_shell.CELL_MAGICS_IN_FUNCTION


@dataclass(frozen=True)
class Cell:
    """A notebook cell as the grader reads it (its number as Jupyter shows it)."""
    index: int           # 1-based, counting every cell of the notebook (markdown too), as Jupyter shows them
    source: str          # the Python the grader reads (definitions, imports): the cell, or a `%%time` cell's body
    solution: bool       # nbgrader's `solution` metadata, or the `### BEGIN SOLUTION` markers
    runnable: str = ""   # what the sandbox executes, when IPython's transformation changed the cell
    written: str = ""    # the cell as the student wrote it, when that is not `source`

    @property
    def first_line(self) -> str:
        return next((line.strip() for line in (self.written or self.source).splitlines() if line.strip()), "")

    def as_dict(self) -> dict:
        """The form the sandbox takes: {"source", "index", "solution", "text"} (text: as written, for tracebacks)."""
        return {"source": self.runnable or self.source, "index": self.index, "solution": self.solution,
                "text": self.written or self.source}


# ---------------------------------------------------------------- the notebook's code cells

# nbgrader's release puts this line, at the left margin, where a solution was. In a module-level
# cell (hand_computation's constants) it would stop the whole file from importing, and cost
# the parts that are answered; a stub inside a function still raises, as it should.
NBGRADER_STUB = "raise NotImplementedError()"
NBGRADER_STUB_ANSWER = "pass  # nbgrader's stub: not answered yet"
KIT_CELL_ROLES = ("numbers", "practice")      # metadata.attnkit.role of the cells is_kit_cell names


def notebook_cells(text: str, name: str, kit_roles_run: tuple[str, ...] = ()) -> list[Cell] | tuple[str]:
    """The code cells of a notebook; or (message,) when it is not a usable notebook. The kit's own
    cells are left out, but those of `kit_roles_run` (check.py runs the student's numbers cell, as
    their Jupyter does; the grader gives each student's numbers itself)."""
    try:
        raw = json.loads(text)
    except json.JSONDecodeError as err:
        return (f"{name} is not a valid notebook: invalid JSON at line {err.lineno}, column {err.colno} "
                f"({err.msg})",)
    if not isinstance(raw, dict) or "cells" not in raw:
        return (f"{name} is JSON but not a Jupyter notebook (no 'cells')",)
    if plain_v4(raw):
        cells_read = raw["cells"]
    else:
        try:
            import nbformat  # only for other versions and odd files: importing it is slow
        except ImportError:
            return (f"{name} is not a plain notebook of format 4; open it in Jupyter and save it again",)
        try:
            cells_read = nbformat.reads(text, as_version=4).cells
        except Exception as err:  # nbformat raises several types for one thing: not a notebook
            return (f"{name} is not a valid nbformat notebook: {str(err).splitlines()[0][:200]}",)
    cells = []
    for number, cell in enumerate(cells_read, start=1):
        if cell.get("cell_type") != "code" or is_nbgrader_test_cell(cell):
            continue
        if is_kit_cell(cell) and cell["metadata"]["attnkit"].get("role") not in kit_roles_run:
            continue
        source = cell.get("source", "")
        if isinstance(source, list):
            source = "".join(source)
        lines = [NBGRADER_STUB_ANSWER if line.rstrip() == NBGRADER_STUB else line
                 for line in str(source).splitlines()]
        cells.append(Cell(number, "\n".join(lines), is_solution_cell(cell)))
    return cells


def plain_v4(raw: dict) -> bool:
    """A notebook of format 4 whose cells nbformat would hand over as they are: read directly,
    without importing nbformat (its schema validator imports a grammar library: slow, once per
    process, more than grading a submission). Anything else goes through nbformat."""
    if raw.get("nbformat") != 4 or type(raw.get("nbformat_minor")) is not int or not isinstance(raw.get("metadata"), dict):
        return False
    cells = raw.get("cells")
    if not isinstance(cells, list):
        return False
    for cell in cells:
        if not isinstance(cell, dict) or cell.get("cell_type") not in ("code", "markdown", "raw"):
            return False
        source = cell.get("source")
        if not (isinstance(source, str) or (isinstance(source, list) and all(isinstance(x, str) for x in source))):
            return False
        if not isinstance(cell.get("metadata", {}), dict):
            return False
    return True


def is_solution_cell(cell) -> bool:
    """nbgrader's solution cells: `solution: true` in the metadata, or the BEGIN SOLUTION markers."""
    meta = (cell.get("metadata") or {}).get("nbgrader") or {}
    source = cell.get("source", "")
    source = "".join(source) if isinstance(source, list) else str(source)
    return bool(meta.get("solution")) or "### BEGIN SOLUTION" in source


def is_nbgrader_test_cell(cell) -> bool:
    """nbgrader's autograded test cells (grade: true, solution: false) are the grader's, not the student's."""
    meta = (cell.get("metadata") or {}).get("nbgrader") or {}
    return cell.get("cell_type") == "code" and bool(meta.get("grade")) and not meta.get("solution")


def is_kit_cell(cell) -> bool:
    """A cell the kit put into an nbgrader notebook to run beside the student's work (drawing their
    numbers, practice: autograder/nbgrader/variant_cells.py): the grader recomputes the numbers itself."""
    meta = (cell.get("metadata") or {}).get("attnkit")
    return isinstance(meta, dict) and meta.get("role") in KIT_CELL_ROLES


# Parts of a syntax tree past which code is not graded: the grader parses what it keeps again
# itself (which file counts, literals, code similarity); an exercise file has a few thousand.
MAX_NODES = 50_000


def compile_problem(source: str, name: str) -> str | None:
    """What compile() says is wrong with `source` (None: it compiles), in one sentence."""
    try:
        tree = parsed(source)        # the tree the other rules read too
        nodes = count_nodes(tree)
        if nodes > MAX_NODES:
            return (f"{name} is too large to grade: {nodes} parts of Python code, the limit is {MAX_NODES} "
                    f"(an exercise file has a few thousand)")
        one_at_a_time(compile, tree, name, "exec", dont_inherit=True)
    except SyntaxError as err:
        where = f"line {err.lineno}" if err.lineno else "an unknown line"
        text = f": {err.text.strip()}" if err.text and err.text.strip() else ""
        return f"{name} has a syntax error at {where} ({err.msg}){text}"
    except (ValueError, RecursionError, MemoryError) as err:
        return f"{name} cannot be compiled: {type(err).__name__}"
    return None


def compiled_cells(cells: list[Cell], name: str, problem=compile_problem):
    """(kept cells, notes on the cells left out, those cells), or (None, the file's error, ()): the
    cells that compile (as IPython runs them); a scratch cell that does not is left out with a note,
    a solution cell that does not is the file's error. `problem(source, name)`: compile_problem."""
    kept, skipped, left_out = [], [], []
    for cell in cells:
        why = problem(cell.source, f"{name}, cell {cell.index}")
        if why is not None:
            cell, why = as_ipython_runs(cell, name, problem)
        if why is None:
            kept.append(cell)
        elif cell.solution:
            return None, why, ()
        else:
            skipped.append(skip_note(cell, why))
            left_out.append(cell)
    return kept, skipped, left_out


def as_ipython_runs(cell: Cell, name: str, problem=compile_problem) -> tuple[Cell, str | None]:
    """A cell that is not plain Python, as IPython runs it; and what is wrong with it even so."""
    try:
        code = transformed(cell.source)
    except ImportError:
        return cell, (f"{name}, cell {cell.index} is not plain Python and IPython is not installed to read it "
                      f"as Jupyter does (pip install ipython)")
    ran = Cell(cell.index, code.python, cell.solution, runnable=code.runnable, written=cell.source)
    where = f"{name}, cell {cell.index}"
    return ran, problem(code.python, where) or problem(code.runnable, where)


def skip_note(cell: Cell, why: str) -> str:
    return f"cell {cell.index} ({cell.first_line[:60]!r}) was skipped: {why}"


# ---------------------------------------------------------------- IPython's transformation of a cell

@dataclass(frozen=True)
class CellCode:
    runnable: str   # what the child executes: the cell as IPython transforms it, lines where they were
    python: str     # the Python the grader reads for definitions and imports: a `%%time` cell's body


def transformed(text: str) -> CellCode:
    """The cell as IPython runs it; every line keeps its number (errors name the cell's own lines).
    IPython's package is slow to import; its transformer module needs only the standard
    library, so it is loaded from its file alone, and only for the first cell that needs it."""
    runnable = _transform(text)
    call = _cell_magic_call(runnable)
    if call is None:
        return CellCode(runnable, runnable)
    name, line, body, at = call
    if name not in _BODY_RUNS:
        return CellCode(runnable, runnable)
    if not _compiles(body):     # IPython transforms a magic's body again when it runs it
        body = _transform(body)
        runnable = "\n" * (at - 1) + f"get_ipython().run_cell_magic({name!r}, {line!r}, {body!r})\n"
    python = "\n" * at + body if name in ipython_shell.CELL_MAGICS_IN_NAMESPACE else runnable
    return CellCode(runnable, python)


def _transform(text: str) -> str:
    """IPython's transformation, with the blank lines it drops at the top put back."""
    lines = text.splitlines()
    blank = next((i for i, line in enumerate(lines) if line.strip()), len(lines))
    return "\n" * blank + transformer().transform_cell(text)


def _cell_magic_call(runnable: str) -> tuple[str, str, str, int] | None:
    """(magic, its line, its body, the call's line number) when the cell is one cell magic."""
    try:
        tree = parse(runnable)
    except (SyntaxError, ValueError, RecursionError, MemoryError):
        return None
    if len(tree.body) != 1 or not isinstance(tree.body[0], ast.Expr):
        return None
    call = tree.body[0].value
    if not (isinstance(call, ast.Call) and isinstance(call.func, ast.Attribute)
            and call.func.attr == "run_cell_magic" and len(call.args) == 3
            and all(isinstance(a, ast.Constant) and isinstance(a.value, str) for a in call.args)):
        return None
    name, line, body = (a.value for a in call.args)
    return name, line, body, call.lineno


def _compiles(text: str) -> bool:
    try:
        one_at_a_time(compile, text, "<cell>", "exec", dont_inherit=True, flags=ast.PyCF_ONLY_AST)
    except (SyntaxError, ValueError, RecursionError, MemoryError):
        return False
    return True


_LOCK = threading.Lock()
_transformer = None


def transformer():
    """IPython's TransformerManager, made once per process (ImportError: IPython is not installed)."""
    global _transformer
    with _LOCK:
        if _transformer is None:
            _transformer = _transformer_module().TransformerManager()
        return _transformer


def _transformer_module():
    """IPython.core.inputtransformer2 from its file (it imports only the standard library), or
    through IPython's package if that file cannot be loaded alone."""
    import sys

    if "IPython.core.inputtransformer2" in sys.modules:
        return sys.modules["IPython.core.inputtransformer2"]
    package = importlib.util.find_spec("IPython")
    if package is not None and package.origin:
        path = Path(package.origin).parent / "core" / "inputtransformer2.py"
        spec = importlib.util.spec_from_file_location("_attnkit_inputtransformer2", path)
        if spec is not None and spec.loader is not None:
            module = importlib.util.module_from_spec(spec)
            try:
                spec.loader.exec_module(module)
                return module
            except Exception:  # noqa: BLE001 - a future IPython whose module needs its package
                pass
    import IPython.core.inputtransformer2 as module

    return module


# ---------------------------------------------------------------- running the cells

def run_cells(cells: list[dict], namespace: dict, path: str, files: dict) -> list[dict]:
    """Each cell ({"source", "index", "solution", "text"}: Cell.as_dict) run in order in
    `namespace`, as Jupyter's Run All runs it, by the grader's sandbox child and by check.py's
    child alike: IPython's names defined first (`display`, `get_ipython`), each cell compiled
    under its own name (`path::cellN`, recorded in `files` with its number, its text put in
    linecache for tracebacks); a cell that raises is skipped, as Run All goes past it: the skipped
    cells' {"index", "first_line", "solution", "error": errors.error_info}. An error that says
    memory ran out is raised, not skipped: the run is over (errors.is_memory_error)."""
    import os

    namespace.update(ipython_shell.user_names(namespace, os.path.dirname(path)))
    skipped = []
    for cell in cells:
        index, text = int(cell["index"]), str(cell["source"])
        written = str(cell.get("text", text))     # tracebacks show the cell as written (`%%time` and all)
        name = f"{path}::cell{index}"
        files[name] = index
        linecache.cache[name] = (len(written), None, written.splitlines(True), name)
        try:
            exec(compile(text, name, "exec", dont_inherit=True), namespace)   # noqa: S102 - the student's cell
        except BaseException as err:  # noqa: BLE001 - whatever a cell raises, Jupyter goes on
            if errors.is_memory_error(err):
                raise
            first = next((ln.strip() for ln in written.splitlines() if ln.strip()), "")[:200]
            skipped.append({"index": index, "first_line": first, "solution": bool(cell.get("solution")),
                            "error": errors.error_info(err, files, at_import=True)})
    return skipped


def skipped_definitions(cells: list[Cell], left_out: list[Cell], raised: list[int]) -> dict[str, int]:
    """name -> the number of a skipped cell that would have defined it: of `left_out` (cells that do
    not compile, compiled_cells) and of `cells` those numbered in `raised` (run_cells skipped them);
    a name defined at the left margin (def, class, an assignment). A check of a name the file does
    not define says this cell (calls.missing), on both sides."""
    by_index = {c.index: c for c in cells}
    found: dict[str, int] = {}
    for cell in [*left_out, *(by_index[i] for i in raised if i in by_index)]:
        for match in _DEFINITION.finditer(cell.source):
            found.setdefault(match.group(1) or match.group(2), cell.index)
    return found


_DEFINITION = re.compile(r"^(?:def|class)[ \t]+([A-Za-z_]\w*)|^([A-Za-z_]\w*)[ \t]*(?::[^=\n]*)?=(?!=)", re.MULTILINE)


def raised_note(index: int, first_line: str, solution: bool, error_type: str | None, error_text: str = "",
                error_line: int | None = None) -> str:
    """"cell 4 ('x = undefined_name') raised NameError: ... and was skipped": a cell run_cells skipped."""
    if error_type == ipython_shell.CellMagicNotRun.__name__:    # %%bash: Jupyter runs a shell, the grader does not
        return f"cell {index} ({first_line[:60]!r}) was skipped: {error_text}"
    why = f"{error_type}: {error_text}" if error_type is not None else "an error"
    if error_type is not None and error_line:
        why += f" (line {error_line})"
    whose = "your solution cell" if solution else "cell"
    return f"{whose} {index} ({first_line[:60]!r}) raised {why} and was skipped"
