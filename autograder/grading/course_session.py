"""One grading session: a course and its warm sandbox, reused for every grading in one process.

`attnkit check`, `attnkit check --watch` and the pytest plugin (`pytest autograder`) all grade
through a GradingSession, so they run the same rooms with the same sandbox settings, and a
second grading in the same process pays nothing for starting the sandbox again.
"""

from __future__ import annotations

from pathlib import Path
from typing import Collection

from autograder.config.course import CourseConfig
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
