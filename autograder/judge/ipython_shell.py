"""Child side: the few IPython names a notebook's cells expect, as small stand-ins.

The grader hands a child notebook cells already transformed by IPython's own input transformer
(`notebook.py` beside this file): `%%time` became `get_ipython().run_cell_magic('time', '', body)`,
`!ls` became `get_ipython().system('ls')`, `x?` became `get_ipython().run_line_magic('pinfo', 'x')`.
This module answers those calls the way Jupyter's Run All does as far as the cells' definitions
go: magics that only time or capture run their body (in the user namespace, or, as IPython's
`timeit` does, in a function's scope); `%%writefile` writes only inside the child's own folder;
display-only cell magics and every other line magic or shell command do nothing; a cell magic
that runs another program (`%%bash`) is not run, and the cell is reported as skipped.

Standard library only: loaded inside the zygote from the judge's folder, run in check.py's child
too, and imported by the grader for its constants.
"""

from __future__ import annotations

import ast
import builtins
import contextlib
import getopt
import io
import os
import sys

# Cell magics whose body is Python run in the user namespace (its definitions stay).
CELL_MAGICS_IN_NAMESPACE = frozenset({"time", "capture", "prun"})
# Cell magics whose body is Python run once in a function's scope, as IPython's timeit compiles it.
CELL_MAGICS_IN_FUNCTION = frozenset({"timeit"})
# Cell magics that only show their body: nothing a later cell could use.
CELL_MAGICS_DISPLAY = frozenset({"html", "HTML", "javascript", "js", "latex", "markdown", "svg"})
TIMEIT_OPTIONS = "n:r:tcp:qo"       # IPython's timeit options (the setup statement follows them)


class CellMagicNotRun(Exception):
    """A cell magic that runs something other than Python (%%bash, %%sh, %%script, ...)."""


class CapturedIO:
    """What `%%capture name` stores: the cell's printed output."""

    def __init__(self, stdout: str, stderr: str):
        self.stdout, self.stderr, self.outputs = stdout, stderr, []

    def show(self) -> None:
        sys.stdout.write(self.stdout)
        sys.stderr.write(self.stderr)

    __call__ = show


class Shell:
    """What `get_ipython()` returns in a child: enough of IPython's shell for transformed cells."""

    def __init__(self, namespace: dict, folder: str):
        self.user_ns, self.folder = namespace, folder

    def __repr__(self) -> str:
        return "<the grader's stand-in for IPython's shell>"

    # ---------------------------------------------------------------- magics

    def run_line_magic(self, name: str, line: str, _stack_depth: int = 1):
        caller = sys._getframe(1)
        where = (caller.f_code.co_filename, caller.f_lineno)
        if name in ("time", "prun"):     # inside a function it sees the function's locals, as in IPython
            return _run(line, where, self.user_ns, caller.f_locals)
        if name == "timeit":
            _run_in_function("", _timeit_statement(line), where, where, self.user_ns)
        return None      # %matplotlib, %load_ext, %config, %pip, %pinfo (`x?`), ...: nothing to do here

    def magic(self, line: str):
        """The old spelling, `get_ipython().magic('matplotlib inline')`."""
        name, _, rest = line.lstrip("%").partition(" ")
        return self.run_line_magic(name, rest)

    def run_cell_magic(self, name: str, line: str, cell: str):
        caller = sys._getframe(1)
        magic_at = (caller.f_code.co_filename, caller.f_lineno)
        body_at = (caller.f_code.co_filename, caller.f_lineno + 1)
        if name in CELL_MAGICS_IN_NAMESPACE:
            if name == "capture":
                return self._capture(line, cell, body_at)
            _run(cell, body_at, self.user_ns)
        elif name in CELL_MAGICS_IN_FUNCTION:
            _run_in_function(_timeit_statement(line), cell, magic_at, body_at, self.user_ns)
        elif name == "writefile":
            self._write_file(line, cell)
        elif name not in CELL_MAGICS_DISPLAY:
            raise CellMagicNotRun(f"%%{name} cells are not run by the grader (it runs Python only)")
        return None

    def _capture(self, line: str, cell: str, body_at: tuple[str, int]) -> None:
        words = line.split()
        target = next((w for w in words if not w.startswith("-")), None)
        out, err = io.StringIO(), io.StringIO()
        try:
            with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
                _run(cell, body_at, self.user_ns)
        finally:
            if target is not None and target.isidentifier():
                self.user_ns[target] = CapturedIO(out.getvalue(), err.getvalue())

    def _write_file(self, line: str, cell: str) -> None:
        """Writes only inside the child's own folder (where `import` finds it); anywhere else is
        not written, and the output says so."""
        words = line.split()
        append = bool({"-a", "--append"} & set(words))
        names = [w for w in words if not w.startswith("-")]
        if not names:
            return
        target = os.path.realpath(os.path.join(self.folder, os.path.expanduser(names[0].strip("'\""))))
        if os.path.commonpath([target, os.path.realpath(self.folder)]) != os.path.realpath(self.folder):
            print(f"%%writefile {names[0]}: not written (the grader writes only into its own folder)", file=sys.stderr)
            return
        with open(target, "a" if append else "w", encoding="utf-8") as f:
            f.write(cell)

    # ---------------------------------------------------------------- shell commands

    def system(self, command: str) -> None:
        return None     # `!pip install ...`, `!ls`: no shell runs here

    def getoutput(self, command: str, split: bool = True, depth: int = 0) -> list:
        return []       # `files = !ls`: nothing ran, nothing came out


def _run(source: str, where: tuple[str, int], namespace: dict, local: dict | None = None):
    """`source` run in `namespace`, compiled as the cell's own lines (errors name the cell and
    line); an expression's value is returned, as `x = %time f()` expects."""
    filename, line = where
    padded = "\n" * (line - 1) + source
    try:
        code = compile(padded, filename, "eval", dont_inherit=True)
    except SyntaxError:
        exec(compile(padded, filename, "exec", dont_inherit=True), namespace, local)
        return None
    return eval(code, namespace, local)


def _run_in_function(setup: str, statement: str, setup_at: tuple[str, int], body_at: tuple[str, int],
                     namespace: dict) -> None:
    """Setup and statement run once inside one function whose globals are the user namespace,
    as IPython's timeit runs them: what they assign stays local."""
    filename = body_at[0]
    parts = [ast.parse("\n" * (at[1] - 1) + text, filename) for text, at in ((setup, setup_at), (statement, body_at))]
    body = [s for p in parts for s in p.body] or [ast.Pass(lineno=body_at[1], col_offset=0)]
    function = ast.FunctionDef(name="_timed", args=ast.arguments(posonlyargs=[], args=[], kwonlyargs=[],
                                                                 kw_defaults=[], defaults=[]),
                               body=body, decorator_list=[], returns=None, lineno=min(setup_at[1], body[0].lineno),
                               col_offset=0, end_lineno=max(getattr(s, "end_lineno", s.lineno) or s.lineno for s in body))
    module = ast.fix_missing_locations(ast.Module(body=[function], type_ignores=[]))
    scope: dict = {}
    exec(compile(module, filename, "exec", dont_inherit=True), namespace, scope)
    scope["_timed"]()


def _timeit_statement(line: str) -> str:
    """The statement after timeit's options (`-n1 -r1 setup`), as IPython parses them."""
    _options, words = getopt.getopt(line.split(), TIMEIT_OPTIONS)
    return " ".join(words)


def display(*objects, **kwargs) -> None:
    """Jupyter's `display`: shows rich output in a notebook; here there is nothing to show it on."""
    return None


def user_names(namespace: dict, folder: str) -> dict:
    """The names Jupyter defines in a notebook's namespace (and `display`, one of its builtins)."""
    shell = Shell(namespace, folder)
    inputs: list[str] = [""]
    outputs: dict = {}
    names = {"get_ipython": lambda: shell, "display": display, "In": inputs, "_ih": inputs, "Out": outputs,
             "_oh": outputs, "_dh": [folder], "_": "", "__": "", "___": "", "_i": "", "_ii": "", "_iii": "",
             "__builtin__": builtins}
    names.update((n, builtins.__dict__[n]) for n in ("exit", "quit") if n in builtins.__dict__)
    return names
