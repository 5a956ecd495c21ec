"""One grading session: a course and its warm sandbox, reused for every grading in one process.

`attnkit check`, `attnkit check --watch` and the pytest plugin (`pytest autograder`) all grade
through a GradingSession, so they run the same rooms with the same sandbox settings, and a
second grading in the same process pays nothing for starting the sandbox again.
"""

from __future__ import annotations

import threading
from pathlib import Path
from typing import Collection

from autograder.config.course import CourseConfig
from autograder.config.limits import Limits
from autograder.config.paths import KIT_DATA
from autograder.results import ExerciseResult, SubmissionResult


def start_readers(stems: Collection[str] | None) -> None:
    """What a check of `stems` (None: every exercise of the kit) waits for first, started before
    the grader reads its course and imports the rest of itself, so that they import numpy, torch
    or matplotlib on the other core meanwhile: the parse helper that reads the student's files
    (on a thread of its own, which waits until it is ready), and the zygotes of the default
    limits (a course whose limits ask for others starts its own: start_zygotes)."""
    from autograder.intake import bounded
    from autograder.sandbox.zygotes import start_early

    threading.Thread(target=bounded.HELPER.start, daemon=True).start()
    start_early(Limits(), zygotes_wanted(stems))


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


class GradingSession:
    def __init__(self, course: CourseConfig, *, only: Collection[str] | None = None,
                 identity: str | None = None):
        self.course = course
        self.only = only          # check ids to run (`attnkit check --exercise attention.softmax`); None: all
        # Whose variant is graded (course.yml `variants:`): a handout's recorded student, or None for
        # the course's own numbers (autograder/variants/identity.py).
        self.identity = identity
        self._sandbox = None

    def start(self) -> "GradingSession":
        """Start the sandbox now: its warm start then overlaps whatever the caller does next."""
        if self._sandbox is None:
            from autograder.grading.grade import grading_sandbox

            self._sandbox = grading_sandbox(self.course.limits)
        return self

    @property
    def sandbox(self):
        return self.start()._sandbox

    def grade(self, folder: Path, *, stems: tuple[str, ...] | None = None, student: str | None = None,
              sources=None) -> SubmissionResult:
        """`folder` through the one grade function (grading/grade.py), with this session's subset
        of checks and whose variant it grades."""
        from autograder.grading.grade import grade

        return grade(Path(folder), self.course, self.sandbox, name=student, stems=stems, only=self.only,
                     identity=self.identity, sources=sources)

    def grade_exercise(self, folder: Path, stem: str, loaded=None) -> ExerciseResult:
        """One exercise of `folder` (`loaded`: the file to grade instead of intake's choice)."""
        result = self.grade(folder, stems=(stem,), sources={stem: loaded} if loaded is not None else None)
        return result.exercises[0]

    def close(self) -> None:
        if self._sandbox is not None:
            self._sandbox.close()
            self._sandbox = None

    def __enter__(self) -> "GradingSession":
        return self

    def __exit__(self, *exc) -> None:
        self.close()
