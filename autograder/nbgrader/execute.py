"""nbgrader's Execute, only for the notebooks whose grade needs a kernel.

Under ``nbgrader autograde`` the kit decides the grade of its own test cells outside the kernel
(``autograder.nbgrader.preprocessor.GradeInSandbox`` writes their outputs), so a kernel adds
nothing to the grade of a notebook whose only autograded code cells are the kit's: it costs a
Python start, the notebook's imports (torch) and its cells, per notebook. ``ExecuteWhereNeeded``
takes Execute's place in the autograde pass and starts the kernel only where nbgrader still reads
a grade from a cell's outputs:

* an autograded code cell the kit does not write (an instructor's own assert cell: nbgrader gives
  a code cell with no outputs full marks, so it must run), or a manually graded code cell (the
  grader reads its outputs in formgrader);
* a notebook of an exercise the course does not have (the kit writes none of its cells);
* ``always = True`` (``c.ExecuteWhereNeeded.always``): every notebook, as plain nbgrader does, so
  the feedback also shows the outputs of the student's own cells. The grade is the same.

It is a subclass of nbgrader's Execute: ``c.Execute.timeout`` and the other Execute settings
apply to it as they did.
"""

from __future__ import annotations

import logging

from nbgrader.preprocessors import Execute
from traitlets import Bool, Instance

from autograder.nbgrader.autograde_run import AutogradeRun, shared_run

log = logging.getLogger(__name__)


def kit_test_cells(course, stem: str) -> dict[str, list[str]]:
    """The kit's autograded test cells of an exercise's notebook: grade id -> the check ids whose
    scores make its grade (tasks worth points only; no cell is generated for the others)."""
    from autograder.nbgrader.course import task_grade_id, task_points, tasks

    if stem not in course.exercises:
        return {}
    return {task_grade_id(task): ids for task, ids in tasks(course, stem).items() if task_points(course, ids) > 0}


def cells_needing_a_kernel(nb, kit_cells) -> list[str]:
    """The grade ids of the notebook's graded code cells whose grade or review needs their
    outputs from a kernel: every graded code cell except the kit's test cells."""
    needing = []
    for cell in nb.cells:
        meta = cell.metadata.get("nbgrader", {})
        if cell.cell_type != "code" or not meta.get("grade"):
            continue
        is_kit_cell = not meta.get("solution") and meta.get("grade_id") in kit_cells
        if not is_kit_cell:
            needing.append(str(meta.get("grade_id")))
    return needing


class ExecuteWhereNeeded(Execute):
    """Autograde pass, in Execute's place: run the notebook in a kernel only where its grade needs one."""

    always = Bool(False, help="Run every notebook in a kernel, as plain nbgrader does (the feedback then "
                              "shows the outputs of the student's own cells; the grade is the same).").tag(config=True)
    run = Instance(AutogradeRun, allow_none=True,
                   help="The run this preprocessor shares (None: its nbgrader command's, made by the first to ask).")

    def preprocess(self, nb, resources):
        if self.always:
            return super().preprocess(nb, resources)
        # not configured with SnapshotSubmissions: the snapshot is made now, as GradeInSandbox would
        course = shared_run(self).course
        stem = resources["nbgrader"]["notebook"]
        if stem not in course.exercises:
            log.info("attnkit: %s is no exercise of the course: running it in a kernel", stem)
            return super().preprocess(nb, resources)
        needing = cells_needing_a_kernel(nb, kit_test_cells(course, stem))
        if needing:
            log.info("attnkit: running %s in a kernel for its cells %s", stem, ", ".join(needing))
            return super().preprocess(nb, resources)
        return nb, resources
