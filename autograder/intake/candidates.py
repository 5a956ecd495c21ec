"""Several files that could each be an exercise's (`attention (1).py` and `Attention-v2.py`, a
browser's copy beside the student's renamed version): each is graded and the better counts,
as with the two forms of one exercise, and the exercise's note says so.

Intake marks such a stem AMBIGUOUS and grades none; `grade_the_better` grades every candidate
(at most intake.candidates' limit, so a folder of twenty copies costs no more than four).
"""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path
from typing import Collection

from autograder.config.course import CourseConfig
from autograder.intake.files import Flag, candidates
from autograder.results import ExerciseResult


def ambiguous(exercise: ExerciseResult) -> bool:
    return Flag.AMBIGUOUS.value in exercise.flags


def grade_the_better(exercise: ExerciseResult, folder: Path, course: CourseConfig, sandbox,
                     only: Collection[str] | None = None, *, student: str | None = None) -> ExerciseResult:
    """`exercise` (graded as ambiguous: nothing) replaced by the best of its candidates, graded
    (against `student`'s variant, when the course has variants)."""
    from autograder.grading.submission import grade_exercise
    from autograder.intake.load import LoadError, SourceFile, source_from_bytes

    graded = []
    for found in candidates(folder, exercise.stem):
        source = source_from_bytes(found.data, found.relpath, found.suffix, exercise.stem)
        if isinstance(source, LoadError):
            source = LoadError(exercise.stem, found.relpath, source.message)
        else:
            source = SourceFile(exercise.stem, found.relpath, source, found.note)
        graded.append(grade_exercise(exercise.stem, source, course, sandbox, only=only, student=student))
    if len(graded) < 2:
        return exercise
    best = max(graded, key=lambda e: e.score)      # the first in name order on a tie
    scores = ", ".join(f"{e.graded_file} {e.score:g}/{e.max_score:g}" for e in graded)
    note = (f"several files could be {exercise.stem}'s: all were graded ({scores}); the better, "
            f"{best.graded_file}, counts; keep one and name it {exercise.stem}.py or {exercise.stem}.ipynb")
    return replace(best, note="; ".join(filter(None, (best.note, note))),
                   flags=tuple(f for f in exercise.flags if f != Flag.AMBIGUOUS.value) + (Flag.CANDIDATES.value,))
