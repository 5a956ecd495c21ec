"""Room 1: a submission folder becomes source text per stem, or a LoadError that says why not.

Nothing is executed here. Notebooks become their code cells (`Cell`: 1-based index among the
notebook's cells, source, whether it is a solution cell) and the concatenation of those cells as
the source. A cell that is not plain Python (`%%time`, `%matplotlib inline`, `!pip install`,
`np.exp?`) becomes what IPython runs (autograder/handout/notebook.py), as in Jupyter's Run All. A
scratch cell (not a solution cell) that does not compile even so is left out with a note; a
solution cell that does not compile makes the file a LoadError naming cell and line. A notebook
is read in a bounded child (autograder/intake/bounded.py): JSON, nbformat and IPython's
transformer are the student's to feed, and a notebook they cannot read within its limits is a
LoadError that says so.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from autograder.judge.notebook import (KIT_CELL_ROLES, NBGRADER_STUB, NBGRADER_STUB_ANSWER,  # noqa: F401
                                               Cell, compile_problem, is_kit_cell, is_nbgrader_test_cell,
                                               is_solution_cell, notebook_cells, plain_v4, skip_note)
from autograder.judge import notebook
from autograder.judge.reading import MAX_BYTES, text_of, too_big
from autograder.judge.syntax import TextMemo


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
    note: str = ""       # why this file was chosen over another (the other one an untouched stub)

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
    """One SourceFile from intake's files for a stem: the form that holds work (one that cannot be
    read, beside an untouched stub, is the LoadError naming its error); with both holding work,
    the .py, carrying the notebook as its alternative."""
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
    if len(loaded) == 1 or not any(isinstance(s, SourceFile) for s in loaded):
        return loaded[0]
    from autograder.judge.forms import Form, choose

    forms = [Form(s.filename, s.message if isinstance(s, LoadError) else None,
                  isinstance(s, SourceFile) and has_work(s.source, stem)) for s in loaded]
    chosen = choose(forms)
    keep = loaded[forms.index(chosen.graded)]
    other = loaded[forms.index(chosen.alternative)] if chosen.alternative is not None else None
    return _noted(keep, chosen.note, chosen.flag, alternative=other)


def _noted(source: SourceFile | LoadError, note: str, flag: str = "",
           alternative: SourceFile | None = None) -> SourceFile | LoadError:
    from dataclasses import replace

    noted = replace(source, note="; ".join(filter(None, (source.note, note))),
                    flags=source.flags + ((flag,) if flag else ()))
    return replace(noted, alternative=alternative) if isinstance(noted, SourceFile) else noted


def read_source(path: Path, stem: str) -> str | LoadError:
    name = path.name
    try:
        size = path.stat().st_size
        if size > MAX_BYTES:
            return LoadError(stem, name, too_big(name, size))
        data = path.read_bytes()
    except OSError as err:
        return LoadError(stem, name, f"{name} cannot be read: {err.strerror or err}")
    return source_from_bytes(data, name, path.suffix, stem)


def source_from_bytes(data: bytes, name: str, suffix: str, stem: str) -> str | LoadError:
    """The Python source of a file's bytes (a notebook's code cells), or why there is none."""
    text = text_of(data, name)
    if isinstance(text, tuple):
        return LoadError(stem, name, text[0])
    if suffix.lower() == ".ipynb":
        return _notebook_source(text, name, stem)
    problem = _python_problem(text, name)
    return LoadError(stem, name, problem) if problem else text


# Compiling takes time and memory in proportion to the code's size: up to this size, a file is
# compiled in the grader (a hand-written exercise file is a few KB); past it, in a bounded child.
IN_PROCESS_BYTES = 64 * 1024


def _python_problem(text: str, name: str) -> str | None:
    """What is wrong with a .py file's code. A crafted large file can make the compiler work for
    seconds and hundreds of MB, which in the grader would hold every lane: past IN_PROCESS_BYTES
    it is compiled in a bounded child. Remembered, so a file read again is not sent again."""
    if len(text) <= IN_PROCESS_BYTES:
        return syntax_problem(text, name)
    return _CHECKED.get(text, lambda: _python_problem_in_child(text, name), name)


def _python_problem_in_child(text: str, name: str) -> str | None:
    from autograder.intake import bounded

    try:
        answer = bounded.run("python", [text, name], memo=bounded.digest(text, name))
    except bounded.OverLimit as err:
        return f"{name} was not read: {err} (a file of exercises takes a small part of that); nothing of it was graded"
    problem = answer.get("problem", "") if isinstance(answer, dict) else ""
    if problem is None:
        return None
    return str(problem)[:2000] if isinstance(problem, str) and problem else f"{name} could not be read"


_CHECKED = TextMemo(1024)


def python_here(text: str, name: str) -> dict:
    """What _python_problem runs in its bounded child: {"problem": why the code cannot run, or None}."""
    return {"problem": syntax_problem(text, name)}


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
    """The cells that compile, joined; a scratch cell that does not is left out with a note
    (notebook.compiled_cells: the handout's check.py reads notebooks with it too)."""
    kept, skipped, left_out = notebook.compiled_cells(cells, name, syntax_problem)
    if kept is None:
        return LoadError(stem, name, skipped)
    return NotebookSource.join(kept, skipped, left_out)


# What compile() said of a text under a name: a class run reads a student's graded files again
# as it records them (the similarity signal, integrity/class_code.py), and compiling is most of
# reading a file. The students in flight are enough: remembering a whole class's texts grew the
# grader with the class.
_COMPILED = TextMemo(1024)


def syntax_problem(source: str, name: str) -> str | None:
    return _COMPILED.get(source, lambda: _compile_problem(source, name), name)


_compile_problem = compile_problem
