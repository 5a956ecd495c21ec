"""A notebook run cell by cell: a scratch cell that raises is skipped, and messages name cells.

nbgrader runs a notebook's cells in order and goes on past a cell that raises; a student's
scratch cell (a NameError while trying things out, an `assert` of their own, `import seaborn`)
must not cost the exercise. When the sandbox runs cells itself (`session(..., cells=[...])`), it
is handed the cells and reports what it skipped. Otherwise the notebook is imported as one
source; when that import fails in a cell that is not a solution cell, the cell is left out with
a note and the rest is imported again. A solution cell that raises fails the exercise, as in
nbgrader. Every location "(attention.ipynb, line 37)" becomes "(attention.ipynb, cell 4, line 3)".
"""

from __future__ import annotations

import inspect
import re
from contextlib import ExitStack
from dataclasses import replace

from autograder.load import Cell, NotebookSource, SourceFile, skip_note

LOCATION = re.compile(r" \((?P<file>[^(),]+), (?:cell (?P<cell>\d+), )?line (?P<line>\d+)(?P<rest>(?:, in [^()]+)?)\)")


def open_session(stack: ExitStack, sandbox, stem: str, loaded: SourceFile, provided: dict[str, str]):
    """(session, the file as run, notes on skipped cells); the session is closed with `stack`."""
    notes = list(getattr(loaded.source, "skipped", ()))
    if loaded.cells and _runs_cells(sandbox):
        session = stack.enter_context(sandbox.session(stem, loaded.source, loaded.filename, provided=provided,
                                                      cells=[c.as_dict() for c in loaded.cells]))
        notes += [_skipped_text(s) for s in getattr(session, "skipped_cells", ())]
        return session, loaded, notes
    while True:
        attempt = ExitStack()
        session = attempt.enter_context(sandbox.session(stem, loaded.source, loaded.filename, provided=provided))
        failing = _failing_scratch_cell(session, loaded)
        if failing is None:
            stack.push(attempt.pop_all())
            return session, loaded, notes
        attempt.close()
        notes.append(skip_note(failing, located(session.import_outcome.message, loaded.source)))
        kept = [c for c in loaded.cells if c is not failing]
        loaded = replace(loaded, source=NotebookSource.join(kept, loaded.source.skipped))


def _runs_cells(sandbox) -> bool:
    try:
        return "cells" in inspect.signature(sandbox.session).parameters
    except (TypeError, ValueError):
        return False


def _skipped_text(item) -> str:
    if isinstance(item, dict):
        return (f"cell {item.get('index')} ({str(item.get('first_line', ''))[:60]!r}) was skipped: "
                f"{item.get('error', '')}")
    return str(item)


def _failing_scratch_cell(session, loaded: SourceFile) -> Cell | None:
    """The scratch cell the import failed in, if it failed in one."""
    outcome = session.import_outcome
    if outcome.status == "ok" or not loaded.cells:
        return None
    typed = getattr(outcome, "error", None)
    line = getattr(typed, "line", None)
    if line is None:
        found = LOCATION.search(outcome.message or "")
        line = int(found["line"]) if found and not found["cell"] else None
    where = loaded.source.locate(line) if line else None
    if where is None:
        return None
    cell = next(c for c in loaded.cells if c.index == where[0])
    return None if cell.solution else cell


def located(message: str, source) -> str:
    """`message` with a line of a notebook's joined source said as its cell and line."""
    if not isinstance(source, NotebookSource) or not message:
        return message

    def cell_and_line(found: re.Match) -> str:
        if found["cell"]:
            return found[0]
        where = source.locate(int(found["line"]))
        if where is None:
            return found[0]
        return f" ({found['file']}, cell {where[0]}, line {where[1]}{found['rest']})"

    return LOCATION.sub(cell_and_line, message)
