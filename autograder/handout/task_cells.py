"""The test cell after each task of a notebook: the same cell in the handout's notebooks and in
the nbgrader release (autograder/nbgrader/course.py).

A test cell is a comment that says what it tests and to save first, and one call,
``attnkit_tests.run("<task>")`` (notebook_tests.py, beside the notebook as attnkit_tests.py): it
runs the handout's check.py on the *saved* notebook in a fresh Python, for the task's visible
checks (attnkit_tests.json: `task_table`), prints the report and returns the score, the cell's
last value. It carries nbgrader's metadata of an autograded test cell (locked, the task's points):
the judge leaves such cells out of a notebook it grades (judge/notebook.py), on both sides.
"""

from __future__ import annotations

import json
import math
import re
from pathlib import Path

from autograder.config.course import CourseConfig

TESTS_MODULE = "attnkit_tests"         # beside the notebooks: what their test cells call (notebook_tests.py)
TESTS_CODE = Path(__file__).with_name("notebook_tests.py")
NBGRADER_SCHEMA = 3
GRADER_STARTUP = 60                    # seconds a test cell allows for starting the grader and its sandbox


def safe_id(text: str) -> str:
    return re.sub(r"[^A-Za-z0-9_]+", "_", text).strip("_")


def task_grade_id(task: str) -> str:
    """The grade id of the autograded test cell of a task: ``attention.softmax`` ->
    ``tests_attention_softmax``."""
    return "tests_" + safe_id(task)


def task_of(check_id: str) -> str:
    return ".".join(check_id.split(".")[:2])


def tasks(course: CourseConfig, stem: str) -> dict[str, list[str]]:
    """The tasks of an exercise and their check ids, in the kit's order (only checks the
    course gives points to, or lists with 0 points)."""
    from autograder.checks import CHECKS

    out: dict[str, list[str]] = {}
    for check in CHECKS[stem]:
        if check.id in course.exercises[stem].checks:
            out.setdefault(task_of(check.id), []).append(check.id)
    return out


def task_points(course: CourseConfig, check_ids: list[str]) -> float:
    return float(sum(course.check(cid).points for cid in check_ids))


def cell_timeout(course: CourseConfig, n_checks: int) -> int:
    """Seconds a test cell waits for its checker: start-up, one import of the notebook's code
    and every call running into the call limit (a function is not called again after its first
    timeout, so this is generous)."""
    lim = course.limits
    return int(math.ceil(GRADER_STARTUP + 2 * lim.import_timeout + n_checks * lim.call_timeout))


def nbgrader_metadata(grade_id: str, *, solution: bool, grade: bool, locked: bool,
                      points: float | None = None) -> dict:
    meta = {"grade": grade, "grade_id": grade_id, "locked": locked, "schema_version": NBGRADER_SCHEMA,
            "solution": solution}
    if points is not None:
        meta["points"] = points
    return meta


def task_cell_source(stem: str, task: str, points: float, hidden_points: float) -> str:
    """The code of one test cell: a comment that says what it tests, and one call. The checks it
    runs are in attnkit_tests.json, visible ones only, so the released cell is the source cell
    and nbgrader sees no changed checksum."""
    lines = [f"# Tests of {task} ({points:g} points).", f"# Save {stem}.ipynb first: they check the saved file."]
    if hidden_points:
        lines.append(f"# {hidden_points:g} of the {points:g} points are for hidden checks, graded after you hand in.")
    lines += [f"import {TESTS_MODULE}", f"{TESTS_MODULE}.run({json.dumps(task)})"]
    return "\n".join(lines)


def task_table(course: CourseConfig) -> dict[str, dict]:
    """What each test cell runs (attnkit_tests.json): per graded task its exercise, visible
    checks, points and how long the cell waits for the checker."""
    table = {}
    for stem in course.exercises:
        for task, ids in tasks(course, stem).items():
            points = task_points(course, ids)
            if points > 0:
                visible = [c for c in ids if not course.check(c).hidden]
                table[task] = {"exercise": stem, "checks": visible, "points": points,
                               "timeout": cell_timeout(course, len(visible))}
    return table


def task_test_cell(course: CourseConfig, stem: str, task: str):
    """The test cell of `task` (an nbformat cell), or None: the task has no points."""
    import nbformat

    ids = tasks(course, stem)[task]
    points = task_points(course, ids)
    if points <= 0:
        return None
    hidden_points = task_points(course, [c for c in ids if course.check(c).hidden])
    cell = nbformat.v4.new_code_cell(task_cell_source(stem, task, points, hidden_points))
    cell["id"] = safe_id(f"{stem}-{task_grade_id(task)}").replace("_", "-")[:64]
    cell.metadata["nbgrader"] = nbgrader_metadata(task_grade_id(task), solution=False, grade=True, locked=True,
                                                  points=points)
    cell.metadata["editable"] = False
    cell.metadata["deletable"] = False
    return cell


def with_test_cells(cells: list, course: CourseConfig, stem: str, tasks_in) -> tuple[list, set[str]]:
    """`cells` with each task's test cell after the cell that holds its work and the demo cells
    that follow it (`tasks_in(cell)`: the task ids a cell holds); and the tasks placed."""
    graded = tasks(course, stem)
    out, placed, pending = [], set(), []
    for cell in cells:
        is_demo = cell.cell_type == "code" and cell.source.lstrip().startswith('if __name__ == "__main__"')
        if pending and not is_demo:
            out += [c for c in (task_test_cell(course, stem, t) for t in pending) if c is not None]
            placed.update(pending)
            pending = []
        out.append(cell)
        if cell.cell_type == "code":
            pending += [t for t in tasks_in(cell) if t in graded and t not in pending and t not in placed]
    out += [c for c in (task_test_cell(course, stem, t) for t in pending) if c is not None]
    return out, placed | set(pending)


_TODO = re.compile(r"TODO\((\w+\.\w+)\)")


def stub_tasks(cell) -> list[str]:
    """The tasks a stub notebook's cell holds: its `TODO(<task>)` markers, in order."""
    return list(dict.fromkeys(_TODO.findall(cell.source)))


def handout_notebook(text: str, course: CourseConfig, stem: str) -> bytes:
    """A stub notebook of the handout (its ipynb text) with a test cell after each graded task."""
    import nbformat

    nb = nbformat.reads(text, as_version=4)
    nb.cells, _ = with_test_cells(nb.cells, course, stem, stub_tasks)
    nbformat.validate(nb)
    written = nbformat.writes(nb, version=4)
    return (written if written.endswith("\n") else written + "\n").encode("utf-8")


def tests_files(course: CourseConfig) -> dict[str, bytes]:
    """attnkit_tests.py and attnkit_tests.json: what the test cells call, beside the notebooks."""
    return {f"{TESTS_MODULE}.py": TESTS_CODE.read_bytes(),
            f"{TESTS_MODULE}.json": (json.dumps(task_table(course), indent=1) + "\n").encode("utf-8")}
