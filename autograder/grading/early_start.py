"""What a check waits for first, started before the grader imports the rest of itself: the
zygotes its exercises' stubs need and the parse helper that reads the student's files. They
import numpy (torch, matplotlib) on the other core while the grader reads its course and
imports its checks, so this module imports little itself."""

from __future__ import annotations

import threading
from typing import TYPE_CHECKING, Collection

from autograder.config.limits import Limits
from autograder.config.paths import KIT_DATA

if TYPE_CHECKING:
    from autograder.config.course import CourseConfig


def start_readers(stems: Collection[str] | None) -> None:
    """What a check of `stems` (None: every exercise of the kit) waits for first, started before
    the grader reads its course and imports the rest of itself, so that they import numpy, torch
    or matplotlib on the other core meanwhile: the parse helper that reads the student's files
    (on a thread of its own, which waits until it is ready), and the zygotes of the default
    limits (a course whose limits ask for others starts its own: start_zygotes)."""
    from autograder.sandbox.zygotes import start_early

    start_early(Limits(), zygotes_wanted(stems))      # the zygote takes longest to be ready
    from autograder.intake import bounded

    threading.Thread(target=bounded.HELPER.start, daemon=True).start()


def start_zygotes(course: CourseConfig, stems: Collection[str] | None) -> None:
    """The zygotes a check of the course's `stems` (None: all) will want, with its limits."""
    from autograder.sandbox.zygotes import start_early

    start_early(course.limits, zygotes_wanted(course.exercises if stems is None else stems))


def zygotes_wanted(stems: Collection[str] | None) -> list:
    """The zygotes the exercises' released stubs need (the kit's own files, read here: a student's
    file is read only in a child). A stub of literals only needs none (it is read, not run)."""
    from autograder.sandbox.literals import inert_of, read_here
    from autograder.sandbox.zygotes import needs_of

    folder = KIT_DATA / "exercises"
    stubs = folder.glob("*.py") if stems is None else (folder / f"{stem}.py" for stem in stems if stem.isidentifier())
    reads = [read_here((stub.read_text(encoding="utf-8"),)) for stub in stubs if stub.is_file()]
    return sorted({needs_of(read.imports) for read in reads if inert_of(read) is None})
