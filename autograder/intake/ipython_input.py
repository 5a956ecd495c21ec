"""Notebook cells as Jupyter runs them: IPython's own input transformer, only where it is needed.

A cell that is plain Python runs as it is (IPython would not change it). A cell that is not
(`%%time`, `%matplotlib inline`, `!pip install`, `np.exp?`, `>>>` prompts) goes through
`IPython.core.inputtransformer2.TransformerManager().transform_cell`, which turns it into the
Python IPython runs: `get_ipython().run_cell_magic('time', '', body)`. The child answers those
calls with small stand-ins (`autograder/sandbox/inside/ipython_shell.py`).

IPython's package costs 0.25-0.4 s to import; its transformer module needs only the standard
library, so it is loaded from its file alone (a few ms), and only for the first cell that needs it.
"""

from __future__ import annotations

import ast
import importlib.util
import threading
from dataclasses import dataclass
from pathlib import Path

from autograder.sandbox.inside.ipython_shell import CELL_MAGICS_IN_FUNCTION, CELL_MAGICS_IN_NAMESPACE

_BODY_RUNS = CELL_MAGICS_IN_NAMESPACE | CELL_MAGICS_IN_FUNCTION
_LOCK = threading.Lock()
_transformer = None


@dataclass(frozen=True)
class CellCode:
    runnable: str   # what the child executes: the cell as IPython transforms it, lines where they were
    python: str     # the Python the grader reads for definitions and imports: a `%%time` cell's body


def transformed(text: str) -> CellCode:
    """The cell as IPython runs it; every line keeps its number (errors name the cell's own lines)."""
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
    python = "\n" * at + body if name in CELL_MAGICS_IN_NAMESPACE else runnable
    return CellCode(runnable, python)


def _transform(text: str) -> str:
    """IPython's transformation, with the blank lines it drops at the top put back."""
    lines = text.splitlines()
    blank = next((i for i, line in enumerate(lines) if line.strip()), len(lines))
    return "\n" * blank + transformer().transform_cell(text)


def _cell_magic_call(runnable: str) -> tuple[str, str, str, int] | None:
    """(magic, its line, its body, the call's line number) when the cell is one cell magic."""
    try:
        tree = ast.parse(runnable)
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
        compile(text, "<cell>", "exec", dont_inherit=True, flags=ast.PyCF_ONLY_AST)
    except (SyntaxError, ValueError, RecursionError, MemoryError):
        return False
    return True


def transformer():
    """IPython's TransformerManager, made once per process."""
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
