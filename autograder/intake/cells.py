"""A notebook run cell by cell: a cell that raises is skipped, and the note names it.

nbgrader runs a notebook's cells in order and goes on past a cell that raises; a student's
scratch cell (a NameError while trying things out, an `assert` of their own, `import seaborn`)
must not cost the exercise. The sandbox executes the cells one by one in one namespace
(`session(stem, [cell, ...])`), skips a cell that raises, and reports it; every location it
gives names the cell and its line. A solution cell that raises is skipped too (what it defined
before the error stays, as in the notebook), and the note says it was the solution cell.
"""

from __future__ import annotations

from contextlib import ExitStack

from autograder.intake.load import SourceFile
from autograder.judge import notebook
from autograder.judge.notebook import raised_note


def open_session(stack: ExitStack, sandbox, stem: str, loaded: SourceFile, provided: dict):
    """(session, the file as run, notes on skipped cells, name -> the skipped cell that defines
    it); the session is closed with `stack`."""
    notes = list(getattr(loaded.source, "skipped", ()))    # cells the loader left out (no compile)
    session = stack.enter_context(sandbox.session(stem, session_source(loaded), loaded.filename, provided=provided))
    notes += [skipped_note(cell) for cell in session.import_outcome.skipped]
    return session, loaded, notes, skipped_definitions(loaded, session.import_outcome.skipped)


def session_source(loaded: SourceFile):
    """What a child executes: the notebook's cells (run one by one), or the file's text."""
    return [c.as_dict() for c in loaded.cells] if loaded.cells else loaded.source


def skipped_definitions(loaded: SourceFile, skipped) -> dict[str, int]:
    """name -> the skipped cell (its number) that would have defined it: the loader's cells that
    do not compile, and the cells that raised before their definitions ran (check.py finds them alike)."""
    return notebook.skipped_definitions(list(loaded.cells), list(getattr(loaded.source, "skipped_cells", ())),
                                              [s.index for s in skipped])


def skipped_note(cell) -> str:
    """"cell 4 ('x = undefined_name') raised NameError: ... and was skipped" (check.py says it alike)."""
    error = cell.error
    return raised_note(cell.index, cell.first_line, cell.solution, error.type if error is not None else None,
                       error.text if error is not None else "", error.line if error is not None else None)
