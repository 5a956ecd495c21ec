"""Room 1: a submission folder becomes source text per stem, or a LoadError that says why not.

Nothing is executed here. Notebooks become their code cells (`Cell`: 1-based index among the
notebook's cells, source, whether it is a solution cell) and the concatenation of those cells as
the source. A cell that is not plain Python (`%%time`, `%matplotlib inline`, `!pip install`,
`np.exp?`) becomes what IPython runs (autograder/intake/ipython_input.py), as in Jupyter's Run All. A
scratch cell (not a solution cell) that does not compile even so is left out with a note; a
solution cell that does not compile makes the file a LoadError naming cell and line. A notebook
is read in a bounded child (autograder/intake/bounded.py): JSON, nbformat and IPython's
transformer are the student's to feed, and a notebook they cannot read within its limits is a
LoadError that says so.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path

from autograder.intake.syntax import TextMemo

MAX_BYTES = 2 * 1024 * 1024   # a hand-written exercise file is a few KB; a notebook with plots maybe 1 MB


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


class NotebookSource(str):
    """A notebook's code as one source (str: what is hashed, shown and checked for stubs), carrying
    its cells (what the sandbox runs, one by one) and the cells the loader left out."""
    cells: tuple[Cell, ...] = ()
    skipped: tuple[str, ...] = ()
    skipped_cells: tuple[Cell, ...] = ()     # the cells behind those notes

    @classmethod
    def join(cls, cells: list[Cell], skipped: list[str] = (), skipped_cells: list[Cell] = ()) -> "NotebookSource":
        text = cls(CELL_SEPARATOR.join(c.source for c in cells) + "\n")
        text.cells, text.skipped, text.skipped_cells = tuple(cells), tuple(skipped), tuple(skipped_cells)
        return text


CELL_SEPARATOR = "\n\n"


@dataclass(frozen=True)
class SourceFile:
    """A stem's source as it will be executed, and which file it came from."""
    stem: str
    filename: str        # the file the source came from: "attention.py", "hw1/Attention.ipynb"
    source: str          # Python source, as it will be executed
    note: str = ""       # e.g. why this file was chosen over another
    flags: tuple[str, ...] = ()             # intake.Flag values: what intake did about the file
    alternative: "SourceFile | None" = None  # the other form, when both hold work (graded too, the better kept)

    @property
    def cells(self) -> tuple[Cell, ...]:
        """A notebook's code cells; () for a .py file."""
        return getattr(self.source, "cells", ())


@dataclass(frozen=True)
class LoadError:
    """A stem with nothing to execute: no file, or one that could not be read (the message says why)."""
    stem: str
    filename: str | None  # None: no file for this stem
    message: str
    reason: str = "load_error"               # "refused": a link out of the folder, a special file
    flags: tuple[str, ...] = ()

    @property
    def missing(self) -> bool:
        return self.filename is None


def load_submission(folder: Path, stems: tuple[str, ...] | None = None) -> dict[str, SourceFile | LoadError]:
    """Each stem's source (default: the contract's stems), chosen and read by autograder.intake.files
    (never outside `folder`)."""
    from autograder.intake.files import discover

    if stems is None:
        from autograder.checks.contract import STEMS as stems   # the contract imports numpy: not in the parser's child

    found = discover(Path(folder), tuple(stems))
    return {stem: _choose(found[stem]) for stem in stems}


def load_stem(folder: Path, stem: str) -> SourceFile | LoadError:
    return load_submission(folder, (stem,))[stem]


def _choose(files) -> SourceFile | LoadError:
    """One SourceFile from intake's files for a stem: the form that holds work; with both holding
    work, the .py, carrying the notebook as its alternative."""
    from autograder.intake.files import Flag
    from autograder.intake.stubs import has_work

    stem = files.stem
    if files.problem is not None:
        p = files.problem
        reason = "refused" if Flag.REFUSED in p.flags else "load_error"
        return LoadError(stem, p.relpath, p.message, reason if p.relpath else "load_error",
                         tuple(f.value for f in p.flags))
    loaded = []
    for found in files.files:
        source = source_from_bytes(found.data, found.relpath, found.suffix, stem)
        flags = tuple(f.value for f in found.flags)
        if isinstance(source, LoadError):
            loaded.append(LoadError(stem, source.filename, source.message, flags=flags))
        else:
            loaded.append(SourceFile(stem, found.relpath, source, found.note, flags))
    if len(loaded) == 1:
        return loaded[0]
    good = [s for s in loaded if isinstance(s, SourceFile)]
    if not good:
        return loaded[0]
    if len(good) == 1:
        other = next(s for s in loaded if s is not good[0])
        return _noted(good[0], f"{other.filename} could not be read ({other.message}); graded {good[0].filename}")
    py, nb = good
    work = [has_work(s.source, stem) for s in good]
    if work == [True, True]:
        return _noted(py, f"both {py.filename} and {nb.filename} hold work", Flag.BOTH_FORMS.value, alternative=nb)
    keep, stub = (nb, py) if work == [False, True] else (py, nb)
    if work == [False, False]:
        return _noted(py, f"both {py.filename} and {nb.filename} are untouched stubs; graded {py.filename}")
    return _noted(keep, f"{stub.filename} is an untouched stub; graded {keep.filename}", Flag.STUB_SKIPPED.value)


def _noted(source: SourceFile, note: str, flag: str = "", alternative: SourceFile | None = None) -> SourceFile:
    from dataclasses import replace

    return replace(source, note="; ".join(filter(None, (source.note, note))),
                   flags=source.flags + ((flag,) if flag else ()), alternative=alternative)


def read_source(path: Path, stem: str) -> str | LoadError:
    name = path.name
    try:
        size = path.stat().st_size
        if size > MAX_BYTES:
            return LoadError(stem, name, _too_big(name, size))
        data = path.read_bytes()
    except OSError as err:
        return LoadError(stem, name, f"{name} cannot be read: {err.strerror or err}")
    return source_from_bytes(data, name, path.suffix, stem)


def _too_big(name: str, size: int) -> str:
    return (f"{name} is {size / 1e6:.1f} MB or more; the limit is {MAX_BYTES / 1e6:.0f} MB "
            f"(clear the notebook's outputs and submit again)")


def source_from_bytes(data: bytes, name: str, suffix: str, stem: str) -> str | LoadError:
    """The Python source of a file's bytes (a notebook's code cells), or why there is none."""
    if len(data) > MAX_BYTES:
        return LoadError(stem, name, _too_big(name, len(data)))
    if not data.strip():
        return LoadError(stem, name, f"{name} is empty")
    if b"\x00" in data:
        return LoadError(stem, name, f"{name} is a binary file, not Python source or a notebook")
    try:
        text = data.decode("utf-8-sig")
    except UnicodeDecodeError as err:
        line = data[: err.start].count(b"\n") + 1
        return LoadError(stem, name, f"{name} is not UTF-8 text (byte 0x{data[err.start]:02x} on line {line}); "
                                     f"save it as UTF-8")
    if suffix.lower() == ".ipynb":
        return _notebook_source(text, name, stem)
    problem = syntax_problem(text, name)
    return LoadError(stem, name, problem) if problem else text


def _notebook_source(text: str, name: str, stem: str) -> NotebookSource | LoadError:
    """A notebook's code, read in a bounded child (notebook_here)."""
    from autograder.intake import bounded

    try:
        answer = bounded.run("notebook", [text, name, stem], memo=bounded.digest(text, name, stem))
    except bounded.OverLimit as err:
        return LoadError(stem, name, f"{name} was not read: {err} (a notebook of exercises takes a small part "
                                     f"of that); nothing of it was graded")
    try:
        if "error" in answer:
            return LoadError(stem, name, str(answer["error"]))
        cells, left_out = ([_cell_from(c) for c in answer[key]] for key in ("cells", "skipped_cells"))
        return NotebookSource.join(cells, [str(n) for n in answer["skipped"]], left_out)
    except (KeyError, TypeError, ValueError, AttributeError) as err:
        raise bounded.ParserUnavailable(f"the notebook reader gave an answer that is not one ({err})") from None


def notebook_here(text: str, name: str, stem: str) -> dict:
    """What _notebook_source runs in its bounded child: the cells, or {"error": why not}."""
    try:
        cells = notebook_cells(text, name)
    except RecursionError:   # json and nbformat recurse per nesting level
        cells = (f"{name} is not a usable notebook: its JSON is nested too deeply",)
    if isinstance(cells, tuple):
        return {"error": cells[0]}
    read = compiled_cells(cells, name, stem)
    if isinstance(read, LoadError):
        return {"error": read.message}
    return {"cells": [_plain_cell(c) for c in read.cells], "skipped": list(read.skipped),
            "skipped_cells": [_plain_cell(c) for c in read.skipped_cells]}


_CELL_FIELDS = {"index": int, "source": str, "solution": bool, "runnable": str, "written": str}


def _plain_cell(cell: Cell) -> dict:
    return {key: getattr(cell, key) for key in _CELL_FIELDS}


def _cell_from(plain: dict) -> Cell:
    """A Cell from the child's answer, whose every field must have its type."""
    if set(plain) != set(_CELL_FIELDS) or any(type(plain[k]) is not t for k, t in _CELL_FIELDS.items()):
        raise ValueError("a cell that is not one")
    return Cell(**plain)


def compiled_cells(cells: list[Cell], name: str, stem: str) -> NotebookSource | LoadError:
    """The cells that compile, joined; a scratch cell that does not is left out with a note."""
    kept, skipped, left_out = [], [], []
    for cell in cells:
        problem = syntax_problem(cell.source, f"{name}, cell {cell.index}")
        if problem is not None:
            cell, problem = as_ipython_runs(cell, name)
        if problem is None:
            kept.append(cell)
        elif cell.solution:
            return LoadError(stem, name, problem)
        else:
            skipped.append(skip_note(cell, problem))
            left_out.append(cell)
    return NotebookSource.join(kept, skipped, left_out)


def as_ipython_runs(cell: Cell, name: str) -> tuple[Cell, str | None]:
    """A cell that is not plain Python, as IPython runs it; and what is wrong with it even so."""
    from autograder.intake.ipython_input import transformed

    code = transformed(cell.source)
    ran = Cell(cell.index, code.python, cell.solution, runnable=code.runnable, written=cell.source)
    where = f"{name}, cell {cell.index}"
    return ran, syntax_problem(code.python, where) or syntax_problem(code.runnable, where)


def skip_note(cell: Cell, why: str) -> str:
    return f"cell {cell.index} ({cell.first_line[:60]!r}) was skipped: {why}"


def notebook_cells(text: str, name: str) -> list[Cell] | tuple[str]:
    """The code cells of a notebook; or (message,) when it is not a usable notebook."""
    try:
        raw = json.loads(text)
    except json.JSONDecodeError as err:
        return (f"{name} is not a valid notebook: invalid JSON at line {err.lineno}, column {err.colno} "
                f"({err.msg})",)
    if not isinstance(raw, dict) or "cells" not in raw:
        return (f"{name} is JSON but not a Jupyter notebook (no 'cells')",)
    if plain_v4(raw):
        notebook_cells_ = raw["cells"]
    else:
        import nbformat  # only for other versions and odd files: importing it costs 1.3 core-s

        try:
            notebook_cells_ = nbformat.reads(text, as_version=4).cells
        except Exception as err:  # nbformat raises several types for one thing: not a notebook
            return (f"{name} is not a valid nbformat notebook: {str(err).splitlines()[0][:200]}",)
    cells = []
    for number, cell in enumerate(notebook_cells_, start=1):
        if cell.get("cell_type") != "code" or is_nbgrader_test_cell(cell) or is_kit_cell(cell):
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
    without importing nbformat (its schema validator imports a grammar library: 1.3 core-s per
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


# nbgrader's release puts this line, at the left margin, where a solution was. In a module-level
# cell (hand_computation's constants) it would stop the whole file from importing, and cost
# the parts that are answered; a stub inside a function still raises, as it should.
NBGRADER_STUB = "raise NotImplementedError()"
NBGRADER_STUB_ANSWER = "pass  # nbgrader's stub: not answered yet"
KIT_CELL_ROLES = ("numbers", "practice")      # metadata.attnkit.role of the cells is_kit_cell names


def is_nbgrader_test_cell(cell) -> bool:
    """nbgrader's autograded test cells (grade: true, solution: false) are the grader's, not the student's."""
    meta = (cell.get("metadata") or {}).get("nbgrader") or {}
    return cell.get("cell_type") == "code" and bool(meta.get("grade")) and not meta.get("solution")


def is_kit_cell(cell) -> bool:
    """A cell the kit put into an nbgrader notebook to run beside the student's work (drawing their
    numbers, practice: autograder/nbgrader/variant_cells.py): the grader recomputes the numbers itself."""
    meta = (cell.get("metadata") or {}).get("attnkit")
    return isinstance(meta, dict) and meta.get("role") in KIT_CELL_ROLES


# What compile() said of a text under a name: a class run reads a student's graded files again
# as it records them (the similarity signal, integrity/class_code.py), and compiling is most of
# reading a file (0.8 ms for 15 KB). The students in flight are enough: remembering a whole
# class's texts grew the grader with the class (issue 23.3).
_COMPILED = TextMemo(1024)


def syntax_problem(source: str, name: str) -> str | None:
    return _COMPILED.get(source, lambda: _compile_problem(source, name), name)


def _compile_problem(source: str, name: str) -> str | None:
    try:
        compile(source, name, "exec", dont_inherit=True)
    except SyntaxError as err:
        where = f"line {err.lineno}" if err.lineno else "an unknown line"
        text = f": {err.text.strip()}" if err.text and err.text.strip() else ""
        return f"{name} has a syntax error at {where} ({err.msg}){text}"
    except (ValueError, RecursionError, MemoryError) as err:
        return f"{name} cannot be compiled: {type(err).__name__}"
    return None
