"""One grading session: a course and its warm sandbox, reused for every grading in one process.

`attnkit check`, `attnkit check --watch` and the pytest plugin (`pytest autograder`) all grade
through a GradingSession, so they run the same rooms with the same sandbox settings, and a
second grading in the same process pays nothing for starting the sandbox again.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Collection

from autograder.config import CourseConfig
from autograder.results import ExerciseResult, SubmissionResult


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
            from autograder.sandbox import Sandbox

            self._sandbox = Sandbox(self.course.limits)
            # A student waits: spread the work over the cores, when there is more than one.
            self._sandbox.interactive = len(os.sched_getaffinity(0)) > 1
        return self

    @property
    def sandbox(self):
        return self.start()._sandbox

    def grade(self, folder: Path, *, stems: tuple[str, ...] | None = None,
              student: str | None = None) -> SubmissionResult:
        from autograder.grading.submission import grade_submission

        return grade_submission(Path(folder), self.course, self.sandbox, student=student, stems=stems,
                                only=self.only, identity=self.identity)

    def grade_exercise(self, folder: Path, stem: str) -> ExerciseResult:
        from autograder.grading.submission import grade_exercise
        from autograder.intake.load import load_stem

        return grade_exercise(stem, load_stem(Path(folder), stem), self.course, self.sandbox, folder=Path(folder),
                              only=self.only, student=self.identity)

    def close(self) -> None:
        if self._sandbox is not None:
            self._sandbox.close()
            self._sandbox = None

    def leave(self) -> None:
        """`close` for a process that exits next: the sandbox winds down without it (Sandbox.leave)."""
        if self._sandbox is not None:
            self._sandbox.leave()
            self._sandbox = None

    def __enter__(self) -> "GradingSession":
        return self

    def __exit__(self, *exc) -> None:
        self.close()
