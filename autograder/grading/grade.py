"""`grade`: the one function every way in calls to grade a submission.

    grading_sandbox(limits, ...) -> Sandbox        the one sandbox set-up every path grades in
    grade(folder_or_student, course, sandbox, *, identity, stems, only, sources) -> SubmissionResult

`attnkit check` and its watcher, the pytest plugin, nbgrader's preprocessor and test cells, `attnkit
grade` (each student of a class, on this machine or a Dask worker) and the Gradescope runner all
grade through it, so whatever decides a grade applies on every path:
  - reading: the folder opened without following links (a class's student folder), its archives
    unpacked into a private folder, an LMS's flat uploads gathered, every file read and parsed, in
    bounded children charged to the student's own budget (intake/staging.py, intake/budget.py);
  - intake: which file of each exercise counts, both forms, several candidate names, flags;
  - the submission's time budget (course.yml `limits.submission_timeout`);
  - the subset: `stems` (exercises) and `only` (check ids: `check --exercise attention.softmax`).
A front end parses its arguments and renders the result; it decides nothing of the grade.
"""

from __future__ import annotations

import os
from collections.abc import Collection, Mapping
from pathlib import Path

from autograder.config.course import CourseConfig
from autograder.grading.student import unanswered
from autograder.grading.submission import OF_STUDENT, grade_submission
from autograder.intake import budget, staging
from autograder.intake.files import Flag
from autograder.intake.students import Student, open_confined
from autograder.results import SubmissionResult
from autograder.sandbox import Sandbox


def grading_sandbox(limits, *, hide: Collection[str | Path] = (), require_isolation: bool = False,
                    many: bool = False) -> Sandbox:
    """The sandbox every path grades in, with the course's limits. `hide`: folders the submission's
    code must not read (the upload, the course, other students). `many`: it grades many
    submissions (a class's lane, a Dask worker): some file will want torch and matplotlib together,
    so its torch zygote has both (one torch start, not one per kind). A file may import another
    exercise only where the grader provides it (the exercises' stems are refused by name)."""
    from autograder.checks.contract import STEMS
    from autograder.intake import facts

    # What a student's file imports and binds is read in a bounded child charged to that student.
    box = Sandbox(limits, hide=tuple(str(p) for p in hide), require_isolation=require_isolation, stems=STEMS,
                  reader=facts.read)
    if many:
        box.zygotes.torch_with_matplotlib = True
    return box


def grade(submission: Student | Path | str, course: CourseConfig, sandbox: Sandbox, *,
          identity: str | None = OF_STUDENT, stems: tuple[str, ...] | None = None,
          only: Collection[str] | None = None, sources: Mapping | None = None,
          name: str | None = None, account: budget.Account | None = None) -> SubmissionResult:
    """Grade one submission: a folder (or a class's Student, with its LMS uploads). `identity`: whose
    variant is graded (default: the student's name; None: the course's own numbers). `sources`:
    for some stems, the loaded file to grade instead of intake's choice (an nbgrader snapshot of
    the notebook being autograded; the file a watcher saw saved). `name`: the result's student name
    for a folder (default: the folder's). `account`: what reading this student's bytes may still
    cost (a run keeps one per student, budget.Accounts; default: a fresh one, course.yml's
    `limits.intake`)."""
    if isinstance(submission, Student):
        student = submission        # a class's: its folder's links were judged when the class was read
        if identity is OF_STUDENT and student.claim_of:     # one of several claiming a student: their numbers
            identity = student.claim_of
    else:
        folder = Path(submission).resolve()     # one's own folder, through whatever links lead to it
        student = Student(name or folder.name, folder)
    if student.refused:
        return unanswered(student, course, student.refused, "refused")
    try:
        fd = open_confined(student.folder)
    except OSError as err:
        return unanswered(student, course, f"the submission folder {student.name} cannot be opened as a folder "
                                           f"of its own ({err.strerror or err}); nothing was graded from it",
                          "refused")
    account = account if account is not None else budget.Account(course.limits.intake)
    try:
        # The open folder, not its path: nothing it is swapped for meanwhile is read.
        folder = Path(f"/proc/self/fd/{fd}") if Path(f"/proc/self/fd/{fd}").is_dir() else student.folder
        wanted = tuple(course.exercises) if stems is None else stems
        with budget.charging(account), \
                staging.read(folder, student, tuple(s for s in wanted if s not in (sources or {})),
                             account.reader) as found:
            result = grade_submission(found.folder, course, sandbox, student=student.name, stems=stems, only=only,
                                      identity=identity, sources={**found.sources, **(sources or {})})
        account.made = found.more
        result = staging.with_notes(result, found.notes)
        result = staging.with_notes(result, tuple(filter(None, [account.summary()])), Flag.LEFT_OUT)
        return staging.nothing_gradable(result, found.uploaded)
    finally:
        os.close(fd)
