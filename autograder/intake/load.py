"""Room 1: a submission folder becomes source text per stem, or a LoadError that says why not.

Nothing is executed here. Notebooks become their code cells (`Cell`: 1-based index among the
notebook's cells, source, whether it is a solution cell) and the concatenation of those cells as
the source. A cell that is not plain Python (`%%time`, `%matplotlib inline`, `!pip install`,
`np.exp?`) becomes what IPython runs (autograder/judge/notebook.py), as in Jupyter's Run All. A
scratch cell (not a solution cell) that does not compile even so is left out with a note; a
solution cell that does not compile makes the file a LoadError naming cell and line. A notebook
is read in a bounded child (autograder/intake/bounded.py): JSON, nbformat and IPython's
transformer are the student's to feed, and a notebook they cannot read within its limits is a
LoadError that says so.

All of it happens in a child of the parse helper, charged to the student (bounded.py): the
grader's `load_submission`, `source_from_bytes` and `read_source` ask a child, which lists and
reads the folder, decodes and parses here (`*_here`, a notebook or a large .py file in a child of
its own), and answers the sources as data (`plain_loaded`), with what the grader needs to know of
their code (autograder/intake/facts.py).
"""

from __future__ import annotations

import os
import stat
from dataclasses import dataclass
from pathlib import Path

from autograder.judge.notebook import (KIT_CELL_ROLES, NBGRADER_STUB, NBGRADER_STUB_ANSWER,  # noqa: F401
                                       Cell, compile_problem, is_kit_cell, is_nbgrader_test_cell,
                                       is_solution_cell, notebook_cells, plain_v4, skip_note)
from autograder.judge import notebook
from autograder.judge.reading import MAX_BYTES, text_of, too_big
from autograder.judge.syntax import TextMemo
from autograder.intake import budget, facts


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
    (never outside `folder`), in a bounded child charged to the submission being read."""
    from autograder.sandbox import helper_process
    from autograder.intake import bounded

    if stems is None:
        from autograder.checks.contract import STEMS as stems   # the contract imports numpy: not in the parser's child
    stems = tuple(stems)
    if helper_process.in_child():
        return loaded_here(Path(folder), stems)
    where, fds = bounded.folder_arg(folder)
    return loaded_answer(bounded.run("load", [where, list(stems)], fds=fds, item=False), stems)


def load_here(where, stems: list[str]) -> dict:
    """What load_submission runs in its child: the sources as data, with their facts."""
    from autograder.intake import bounded

    return plain_answer(loaded_here(Path(bounded.folder_of(where)), tuple(stems)))


def loaded_here(folder: Path, stems: tuple[str, ...]) -> dict[str, SourceFile | LoadError]:
    """load_submission, in this process (a child)."""
    from autograder.intake.files import discover

    found = discover(folder, stems)
    return {stem: _choose(found[stem]) for stem in stems}


def load_stem(folder: Path, stem: str) -> SourceFile | LoadError:
    return load_submission(folder, (stem,))[stem]


def _choose(files) -> SourceFile | LoadError:
    """One SourceFile from intake's files for a stem: the form that holds work (one that cannot be
    read, beside an untouched stub, is the LoadError naming its error); with both holding work,
    the .py, carrying the notebook as its alternative."""
    from autograder.intake.facts import has_work
    from autograder.intake.files import Flag

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
    """The source of one file (a watcher's saved file, nbgrader's submitted notebook), read and
    parsed in a bounded child: the grader opens the file and hands it over."""
    from autograder.sandbox import helper_process
    from autograder.intake import bounded

    name = path.name
    try:
        fd = os.open(path, os.O_RDONLY | getattr(os, "O_NONBLOCK", 0) | getattr(os, "O_CLOEXEC", 0))
    except OSError as err:
        return LoadError(stem, name, f"{name} cannot be read: {err.strerror or err}")
    try:
        if helper_process.in_child():
            return source_here({"fd": fd}, name, path.suffix, stem, _here=True)
        return _source_answer(bounded.run("source", [{"fd": 0}, name, path.suffix, stem], fds=(fd,), item=False),
                              stem)
    finally:
        os.close(fd)


def source_from_bytes(data: bytes, name: str, suffix: str, stem: str) -> str | LoadError:
    """The Python source of a file's bytes (a notebook's code cells), or why there is none; in a
    bounded child."""
    from autograder.sandbox import helper_process
    from autograder.intake import bounded

    if helper_process.in_child():
        return _source_here(data, name, suffix, stem)
    if len(data) > MAX_BYTES:
        return LoadError(stem, name, too_big(name, len(data)))
    import numpy as np      # the grader's side only: the parse helper imports this module without it

    array = np.frombuffer(data, dtype=np.uint8)
    return _source_answer(bounded.run("source", [array, name, suffix, stem], item=False), stem)


def source_here(data, name: str, suffix: str, stem: str, _here: bool = False) -> dict:
    """What source_from_bytes and read_source run in their child: the bytes (or a file handed
    over, {"fd": i}) as data (plain_source), with their facts."""
    from autograder.sandbox import helper_process

    if isinstance(data, dict):
        fd = data["fd"] if _here else helper_process.handed(int(data["fd"]))
        with os.fdopen(os.dup(fd), "rb") as fh:
            if not stat.S_ISREG(os.fstat(fh.fileno()).st_mode):
                return {"source": plain_loaded(LoadError(stem, name, f"{name} is not a regular file"))}
            data = fh.read(MAX_BYTES + 1)
    source = _source_here(bytes(data), name, suffix, stem)
    if isinstance(source, LoadError):
        return {"source": plain_loaded(source)}
    return {"source": {"text": str(source), **plain_source(source)}, "facts": _facts_of([source], stem)}


def _source_answer(answer, stem: str) -> str | LoadError:
    from autograder.intake import bounded

    try:
        facts.remember_all(answer.get("facts", []))
        plain = answer["source"]
        if "message" in plain:
            return loaded_from_plain(plain)
        return source_from_plain(plain)
    except (KeyError, TypeError, ValueError, AttributeError) as err:
        raise bounded.ParserUnavailable(f"the reader gave an answer that is not one ({err})") from None


def _source_here(data: bytes, name: str, suffix: str, stem: str) -> str | LoadError:
    """source_from_bytes, in this process (a child)."""
    text = text_of(data, name)
    if isinstance(text, tuple):
        return LoadError(stem, name, text[0])
    if suffix.lower() == ".ipynb":
        return _notebook_source(text, name, stem)
    problem = _python_problem(text, name, stem)
    return LoadError(stem, name, problem) if problem else text


# Compiling takes time and memory in proportion to the code's size: up to this size, a file is
# compiled in the grader (a hand-written exercise file is a few KB); past it, in a bounded child.
IN_PROCESS_BYTES = 64 * 1024


def _python_problem(text: str, name: str, stem: str | None = None) -> str | None:
    """What is wrong with a .py file's code. A crafted large file can make the compiler work for
    seconds and hundreds of MB, which in the grader would hold every lane: past IN_PROCESS_BYTES
    it is compiled in a bounded child. Remembered, so a file read again is not sent again."""
    if len(text) <= IN_PROCESS_BYTES:
        return syntax_problem(text, name)
    return _CHECKED.get(text, lambda: _python_problem_in_child(text, name, stem), name)


def _python_problem_in_child(text: str, name: str, stem: str | None) -> str | None:
    from autograder.intake import bounded

    try:
        answer = bounded.run("python", [text, name, stem], memo=bounded.digest("python", text))
    except bounded.OverLimit as err:
        return f"{name} was not read: {err} (a file of exercises takes a small part of that); nothing of it was graded"
    problem = answer.get("problem", "") if isinstance(answer, dict) else ""
    if problem is None:
        facts.remember_all(answer.get("facts", []))
        return None
    return str(problem)[:2000] if isinstance(problem, str) and problem else f"{name} could not be read"


_CHECKED = TextMemo(1024)


def python_here(text: str, name: str, stem: str | None = None) -> dict:
    """What _python_problem runs in its bounded child: {"problem": why the code cannot run, or
    None, and the facts of the code}."""
    problem = syntax_problem(text, name)
    return {"problem": problem, "facts": [] if problem is not None or stem is None else _facts_of([text], stem)}


def _notebook_source(text: str, name: str, stem: str) -> NotebookSource | LoadError:
    """A notebook's code, read in a bounded child (notebook_here)."""
    from autograder.intake import bounded

    account = budget.current()
    if account.left("notebook_bytes") <= 0:     # nothing of it could be kept: it is not read at all
        return _left_out_notebook(account, stem, name, len(text) // 1024)
    try:
        answer = bounded.run("notebook", [text, name, stem], memo=bounded.digest("notebook", text))
    except bounded.OverLimit as err:
        return LoadError(stem, name, f"{name} was not read: {err} (a notebook of exercises takes a small part "
                                     f"of that); nothing of it was graded")
    try:
        if "error" in answer:
            return LoadError(stem, name, str(answer["error"]))
        source = source_from_plain(answer)
        facts.remember_all(answer.get("facts", []))
    except (KeyError, TypeError, ValueError, AttributeError) as err:
        raise bounded.ParserUnavailable(f"the notebook reader gave an answer that is not one ({err})") from None
    if not account.take("notebook_bytes", len(source.encode("utf-8", "surrogatepass"))):
        return _left_out_notebook(account, stem, name, len(source) // 1024)
    return source


def _left_out_notebook(account, stem: str, name: str, kb: int) -> LoadError:
    why = account.over("notebook_bytes")
    account.leave_out(why, name)
    return LoadError(stem, name, f"{name} was not read: its code ({kb} KB) with the notebook code read before it "
                                 f"is {why}; nothing of it was graded")


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
    return {**plain_source(read), "facts": _facts_of([read], stem)}


_CELL_FIELDS = {"index": int, "source": str, "solution": bool, "runnable": str, "written": str}


def plain_source(source: NotebookSource | str) -> dict:
    """A notebook's source as data (its cells; its text is theirs joined); {} for a file's text."""
    if not isinstance(source, NotebookSource):
        return {}
    return {"cells": [_plain_cell(c) for c in source.cells], "skipped": list(source.skipped),
            "skipped_cells": [_plain_cell(c) for c in source.skipped_cells]}


def source_from_plain(plain: dict) -> NotebookSource | str:
    """The inverse of plain_source (with the file's "text" for a .py file); ValueError for data
    that is not one."""
    if "cells" not in plain:
        if not isinstance(plain.get("text"), str):
            raise ValueError("a source without its text")
        return plain["text"]
    cells, left_out = ([_cell_from(c) for c in plain[key]] for key in ("cells", "skipped_cells"))
    return NotebookSource.join(cells, [str(n) for n in plain["skipped"]], left_out)


_LOADED_FIELDS = {"stem": str, "note": str, "flags": list}


def plain_loaded(loaded: SourceFile | LoadError) -> dict:
    """A loaded stem as data (loaded_from_plain reads it back)."""
    if isinstance(loaded, LoadError):
        return {"stem": loaded.stem, "filename": loaded.filename, "message": loaded.message,
                "reason": loaded.reason, "flags": list(loaded.flags), "note": loaded.note}
    return {"stem": loaded.stem, "filename": loaded.filename, "text": str(loaded.source),
            **plain_source(loaded.source), "note": loaded.note, "flags": list(loaded.flags),
            "alternative": plain_loaded(loaded.alternative) if loaded.alternative is not None else None}


def loaded_from_plain(plain: dict) -> SourceFile | LoadError:
    """A SourceFile or LoadError from a child's data, every field of its type (else ValueError)."""
    if not isinstance(plain, dict) or any(type(plain.get(k)) is not t for k, t in _LOADED_FIELDS.items()):
        raise ValueError("a loaded file that is not one")
    flags = tuple(str(f) for f in plain["flags"])
    if "message" in plain:
        if not (plain["filename"] is None or isinstance(plain["filename"], str)) \
                or not isinstance(plain["message"], str) or plain.get("reason") not in ("load_error", "refused"):
            raise ValueError("a load error that is not one")
        return LoadError(plain["stem"], plain["filename"], plain["message"], plain["reason"], flags, plain["note"])
    if not isinstance(plain.get("filename"), str):
        raise ValueError("a source without its file")
    alternative = plain.get("alternative")
    alternative = loaded_from_plain(alternative) if alternative is not None else None
    if alternative is not None and not isinstance(alternative, SourceFile):
        raise ValueError("an alternative that is not a source")
    return SourceFile(plain["stem"], plain["filename"], source_from_plain(plain), plain["note"], flags, alternative)


def plain_answer(loaded: dict[str, SourceFile | LoadError]) -> dict:
    """A child's answer of loaded stems: each as data, and the facts of their code."""
    sources = [f for x in loaded.values() if isinstance(x, SourceFile) for f in (x, x.alternative) if f is not None]
    return {"loaded": {stem: plain_loaded(x) for stem, x in loaded.items()},
            "facts": [fact for f in sources for fact in _facts_of([f.source], f.stem)]}


def _facts_of(sources: list, stem: str) -> list:
    """[texts, stem, facts] as the grader asks for them: the source's text (its stem's stubs and
    work), and a notebook's cells as the sandbox runs them; found where the source was parsed
    (a notebook's, a large file's: in the child that read it alone)."""
    found = []
    for source in sources:
        found.append(facts.known([str(source)], stem))
        cells = getattr(source, "cells", ())
        if cells:
            found.append(facts.known([c.runnable or c.source for c in cells], None))
    return found


def loaded_answer(answer, stems: tuple[str, ...]) -> dict[str, SourceFile | LoadError]:
    """The loaded stems of a child's answer (plain_answer), its facts remembered."""
    from autograder.intake import bounded

    try:
        facts.remember_all(answer["facts"])
        loaded = {stem: loaded_from_plain(answer["loaded"][stem]) for stem in stems}
    except (KeyError, TypeError, ValueError, AttributeError) as err:
        raise bounded.ParserUnavailable(f"the reader gave an answer that is not one ({err})") from None
    return loaded


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
