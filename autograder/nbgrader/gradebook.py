"""The kit's scores into an nbgrader gradebook, so that `nbgrader export` (and formgrader) show them.

    write_gradebook(results, "sqlite:///COURSE/gradebook.db", course)

The gradebook is organised the way ``attnkit nbgrader`` lays out the course: assignment
``course.assignment``, one notebook per exercise (its stem), one autograded grade cell per
task named ``tests_<stem>_<function>`` (autograder.nbgrader.course.task_grade_id) worth the
task's points in course.yml. What is missing is created (an assignment nbgrader has never
seen works too); what nbgrader created from the generated course is reused, and its
autograded scores for those cells are replaced by the kit's - which is the point: the kit
graded the submitted files in its sandbox, without running them in a shared kernel.

Only the kit's test cells are written. Manually graded cells (the written questions) and
manual scores a grader gave in formgrader are left alone (a manual score still wins over
the automatic one, as everywhere in nbgrader). Any database URL nbgrader accepts works
(``sqlite:///path/gradebook.db``, ``postgresql://...``).
"""

from __future__ import annotations

import warnings
from collections.abc import Iterable

from autograder.config.course import CourseConfig
from autograder.results import SubmissionResult, Why


class GradebookError(Exception):
    """The gradebook does not fit the course (e.g. a grade cell with other points)."""


def write_gradebook(results: Iterable[SubmissionResult], db_url: str, course: CourseConfig) -> dict[str, float | None]:
    """Write each result's score per task into the gradebook at ``db_url``; return
    {student: the total written, None where a grader error left tasks to grade by hand (no
    score written there, marked for manual grading in formgrader)}. Students, the assignment, its notebooks, grade cells and
    submissions are created when missing. Raises GradebookError when the gradebook already
    holds a kit grade cell with other points than course.yml gives it."""
    results = list(results)
    with warnings.catch_warnings():
        # nbgrader's add_submission trips SQLAlchemy's autoflush warnings (nbgrader itself prints them too).
        warnings.filterwarnings("ignore", message=".*not in session.*")
        return _write(results, db_url, course)


def _write(results: list[SubmissionResult], db_url: str, course: CourseConfig) -> dict[str, float | None]:
    from nbgrader.api import Gradebook, MissingEntry

    from autograder.nbgrader.course import task_points, tasks, task_grade_id

    assignment = course.assignment
    written: dict[str, float] = {}
    with Gradebook(db_url) as gb:
        cells = _ensure_structure(gb, course)
        for result in results:
            if result.assignment != assignment:
                raise GradebookError(f"{result.student}: a result of {result.assignment!r}, "
                                     f"not of the course's assignment {assignment!r}")
            gb.update_or_create_student(result.student)
            try:
                gb.find_submission(assignment, result.student)
            except MissingEntry:
                gb.add_submission(assignment, result.student)
            total: float | None = 0.0
            for exercise in result.exercises:
                if exercise.stem not in course.exercises:
                    continue
                submitted_nb = gb.find_submission_notebook(exercise.stem, assignment, result.student)
                scores = {c.check_id: c.score for c in exercise.checks}
                failed = {c.check_id for c in exercise.checks if c.reason == Why.grader_error}
                for task, ids in tasks(course, exercise.stem).items():
                    if task_points(course, ids) <= 0:
                        continue
                    grade = _find_or_add_grade(gb, cells[(exercise.stem, task)], submitted_nb, task_grade_id(task),
                                               exercise.stem, result.student)
                    if failed & set(ids):
                        # Not the student's 0: left for the instructor, as formgrader's manual grading.
                        grade.auto_score, grade.needs_manual_grade = None, grade.manual_score is None
                        total = None
                        continue
                    score = float(sum(scores.get(cid, 0.0) for cid in ids))
                    grade.auto_score = score
                    grade.needs_manual_grade = grade.manual_score is not None
                    total = None if total is None else total + score
            gb.db.commit()
            written[result.student] = total
    return written


def _ensure_structure(gb, course: CourseConfig) -> dict:
    """The assignment, its notebooks and the kit's grade cells; {(stem, task): GradeCell}."""
    from nbgrader.api import MissingEntry

    from autograder.nbgrader.course import task_points, tasks, task_grade_id

    assignment = course.assignment
    try:
        gb.find_assignment(assignment)
    except MissingEntry:
        gb.add_assignment(assignment)
    cells = {}
    for stem in course.exercises:
        try:
            gb.find_notebook(stem, assignment)
        except MissingEntry:
            gb.add_notebook(stem, assignment)
        for task, ids in tasks(course, stem).items():
            points = task_points(course, ids)
            if points <= 0:
                continue
            name = task_grade_id(task)
            try:
                cell = gb.find_grade_cell(name, stem, assignment)
            except MissingEntry:
                cell = gb.add_grade_cell(name, stem, assignment, max_score=points, cell_type="code")
            if float(cell.max_score) != points:
                raise GradebookError(
                    f"the gradebook's cell {name} of {stem} is worth {cell.max_score:g} points, course.yml gives "
                    f"{task} {points:g}: regenerate the course (attnkit nbgrader) or use the matching course file")
            cells[(stem, task)] = cell
    gb.db.commit()
    return cells


def _find_or_add_grade(gb, cell, submitted_nb, name: str, stem: str, student: str):
    """The student's Grade of a cell; created when the cell was added after the submission."""
    from nbgrader.api import Grade, MissingEntry

    try:
        return gb.find_grade(name, stem, cell.notebook.assignment.name, student)
    except MissingEntry:
        grade = Grade(cell_id=cell.id, notebook=submitted_nb)
        gb.db.add(grade)
        gb.db.flush()
        return grade
