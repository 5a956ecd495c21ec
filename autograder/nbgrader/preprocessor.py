"""The kit inside ``nbgrader autograde``: the grade is decided in nbgrader's process, not in the kernel.

nbgrader autogrades a notebook in two passes (``nbgrader.converters.autograde``): *sanitize*
(the submitted file: clear outputs, restore locked cells) and *autograde* (``Execute`` runs the
notebook in a kernel, ``SaveAutoGrades`` reads each test cell's outputs as its score). The kernel
runs the student's code with the student's last word on what any later cell prints. So the
generated ``nbgrader_config.py`` adds two preprocessors and puts ``ExecuteWhereNeeded``
(autograder/nbgrader/execute.py) in Execute's place, which starts no kernel for a notebook
whose only autograded code cells are the kit's (``configure``):

* ``SnapshotSubmissions``, first of the sanitize pass: the first time it runs - before any
  kernel of this autograde run has started - it reads the code of every notebook nbgrader is
  about to grade (``autograder.intake.load``, as ``attnkit check`` reads a file), loads the course
  file, starts the kit's sandbox and sets ``ATTNKIT_AUTOGRADE`` so that the test cells do
  nothing in the kernels that follow (their outputs are replaced anyway).
* ``GradeInSandbox``, right after ``ExecuteWhereNeeded``: takes the grade of the snapshot of this
  notebook's code, made in the one warm sandbox kept for the whole run
  (``autograder.grading.submission.grade_exercise``, in a worker thread that grades the snapshot in
  nbgrader's order, ahead of nbgrader), and writes each kit test cell's outputs: the report (a stdout stream) and the score as a float
  ``execute_result``, nbgrader's partial credit. Whatever the kernel printed there is gone.

The snapshot, the course and the sandbox are the run the preprocessors share (autograde_run.py).

Where a kernel still runs (an instructor's own test cells, ``c.ExecuteWhereNeeded.always``), it
can install input transformers, display hooks, patch ``subprocess``, ``json``
or ``float``, or rewrite its own file: none of it reaches the grade, which is what
``attnkit check`` gives the submitted file.
"""

from __future__ import annotations

import logging

from nbgrader.preprocessors import NbGraderPreprocessor
from traitlets import Instance

from autograder.nbgrader.autograde_run import AutogradeRun, shared_run, submitted_path

log = logging.getLogger(__name__)

RUN_HELP = "The run this preprocessor shares (None: its nbgrader command's, made by the first to ask)."


class SnapshotSubmissions(NbGraderPreprocessor):
    """Sanitize pass, first: snapshot every submission's code and start the warm sandbox, once."""

    run = Instance(AutogradeRun, allow_none=True, help=RUN_HELP)

    def preprocess(self, nb, resources):
        shared_run(self).remember(submitted_path(self, resources))
        return nb, resources


class GradeInSandbox(NbGraderPreprocessor):
    """Autograde pass, right after ExecuteWhereNeeded: the kit's report and score into its test cells."""

    run = Instance(AutogradeRun, allow_none=True, help=RUN_HELP)

    def preprocess(self, nb, resources):
        from autograder.nbgrader.cells import notebook_reports
        from autograder.nbgrader.execute import kit_test_cells

        # not configured with SnapshotSubmissions: the snapshot is made now, late but safe
        run = shared_run(self)
        stem = resources["nbgrader"]["notebook"]
        course = run.course
        cells = kit_test_cells(course, stem)
        targets = [c for c in nb.cells if c.cell_type == "code" and _grade_id(c) in cells]
        if not targets:
            return nb, resources
        path = submitted_path(self, resources)
        try:
            result = run.grade(path)
            by_id = {c.check_id: c for c in result.checks}
        except Exception as err:  # the kit failed, not the student: say so in the cell, score 0, go on
            log.error("attnkit could not grade %s: %s: %s", path, type(err).__name__, err)
            by_id, failure = None, f"The grader could not grade this notebook: {type(err).__name__}: {err}"
        if by_id is None:
            for cell in targets:
                _write(cell, failure, 0.0)
            return nb, resources
        results = [[by_id[cid] for cid in cells[_grade_id(cell)] if cid in by_id] for cell in targets]
        # a cause told in a cell above is referred to below, not told again
        for cell, checks, report in zip(targets, results, notebook_reports(results, course)):
            points = float(cell.metadata["nbgrader"].get("points", 0))
            _write(cell, report, max(0.0, min(sum(r.score for r in checks), points)))
        return nb, resources


def _grade_id(cell) -> str | None:
    meta = cell.metadata.get("nbgrader", {})
    return meta.get("grade_id") if meta.get("grade") and not meta.get("solution") else None


def _write(cell, report: str, score: float) -> None:
    import nbformat

    from autograder.handout.notebook_tests import report_html

    count = cell.get("execution_count")
    # HTML beside the text a student's run of the cell prints: nbgrader's feedback page shows a
    # stream unwrapped, running off the edge; the HTML wraps at words at the page's width
    cell.outputs = [nbformat.v4.new_output("display_data", data={"text/plain": report,
                                                                 "text/html": report_html(report)}),
                    nbformat.v4.new_output("execute_result", data={"text/plain": repr(float(score))},
                                           execution_count=count)]


def configure(c) -> None:
    """Put the kit into nbgrader's autograde passes (called from the course's nbgrader_config.py):
    ``SnapshotSubmissions`` first of the sanitize pass; in the autograde pass, ``Execute`` replaced
    by ``ExecuteWhereNeeded`` (no kernel for a notebook whose grade the kit decides) and
    ``GradeInSandbox`` right after it; and in the feedback pages, the notebooks' maths as MathML
    (``MathsWithoutNetwork``: no MathJax to fetch). nbgrader's other preprocessors stay as this
    nbgrader version defines them."""
    from nbgrader.converters import Autograde, GenerateFeedback
    from nbgrader.preprocessors import Execute

    from autograder.nbgrader.execute import ExecuteWhereNeeded
    from autograder.nbgrader.feedback_maths import MathsWithoutNetwork

    traits = Autograde.class_traits()
    sanitize = list(traits["sanitize_preprocessors"].default())
    autograde = list(traits["autograde_preprocessors"].default())
    if Execute in autograde:
        at = autograde.index(Execute)
        autograde[at:at + 1] = [ExecuteWhereNeeded, GradeInSandbox]
    else:
        autograde[:0] = [ExecuteWhereNeeded, GradeInSandbox]
    c.Autograde.sanitize_preprocessors = [SnapshotSubmissions, *sanitize]
    c.Autograde.autograde_preprocessors = autograde
    c.GenerateFeedback.preprocessors = [*GenerateFeedback.class_traits()["preprocessors"].default(),
                                        MathsWithoutNetwork]
