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

Where a kernel still runs (an instructor's own test cells, ``c.ExecuteWhereNeeded.always``), it
can install input transformers, display hooks, patch ``subprocess``, ``json``
or ``float``, or rewrite its own file: none of it reaches the grade, which is what
``attnkit check`` gives the submitted file.
"""

from __future__ import annotations

import atexit
import glob
import logging
import os
from concurrent.futures import Future, ThreadPoolExecutor
from dataclasses import dataclass, field
from pathlib import Path

from nbgrader.preprocessors import NbGraderPreprocessor

from autograder.nbgrader.cells import MARKER_ENV   # set in nbgrader's process, inherited by its kernels

log = logging.getLogger(__name__)


@dataclass
class _Run:
    """What one ``nbgrader autograde`` process shares between notebooks: nbgrader makes new
    preprocessor objects for every notebook, so the warm sandbox lives here. One worker thread
    grades the snapshot in nbgrader's order, ahead of nbgrader's kernels: while a notebook runs
    in its kernel, the kit grades it (and the next ones) in the sandbox. Only that thread
    touches the sandbox."""

    course: object = None
    sandbox: object = None
    hide: tuple[Path, ...] = ()
    snapshot: dict[Path, object] = field(default_factory=dict)   # submitted notebook -> SourceFile | LoadError
    started: bool = False
    _pool: ThreadPoolExecutor | None = None
    _futures: dict[Path, Future] = field(default_factory=dict)

    def start(self, notebooks: list[Path]) -> None:
        """Everything the grade depends on, read before any kernel of this run exists."""
        if self.started:
            return
        self.started = True
        os.environ[MARKER_ENV] = "1"
        from autograder.nbgrader.cells import course_root, find_course_file, load_course_for_cell

        course_file = find_course_file()
        self.course = load_course_for_cell(course_file)
        self.hide = course_root(course_file)
        self._start_sandbox()
        paths = [_key(path) for path in notebooks]
        for path in paths:
            self.remember(path)
        # The grading code itself, imported now: later a kernel may write to the file system.
        import autograder.diagnosis.explain  # noqa: F401
        import autograder.grading.submission  # noqa: F401
        self._pool = ThreadPoolExecutor(max_workers=1, thread_name_prefix="attnkit-grader")
        atexit.register(self.close)
        for path in paths:
            if path.stem in self.course.exercises:
                self._submit(path)

    def _start_sandbox(self) -> None:
        from autograder.nbgrader.cells import start_sandbox

        self.sandbox = start_sandbox(self.course, self.hide)

    def remember(self, path: Path) -> object:
        from autograder.nbgrader.cells import load_notebook

        path = _key(path)
        if path not in self.snapshot:
            self.snapshot[path] = load_notebook(path)
        return self.snapshot[path]

    def _submit(self, path: Path) -> Future:
        if path not in self._futures:
            self._futures[path] = self._pool.submit(self._grade_now, path)
        return self._futures[path]

    def grade(self, path: Path):
        """The ExerciseResult of a submitted notebook's snapshot (waits for the worker)."""
        self.remember(path)
        return self._submit(_key(path)).result()

    def _grade_now(self, path: Path):
        """In the worker thread. One retry on a fresh sandbox when the sandbox itself failed
        (never the submission's fault)."""
        from autograder.grading.grade import grade
        from autograder.sandbox import SandboxError

        loaded = self.snapshot[path]
        student = nbgrader_student(path)     # whose variant (course.yml variants:): nbgrader's own id

        def graded():
            result = grade(path.parent, self.course, self.sandbox, stems=(path.stem,), identity=student,
                           sources={path.stem: loaded})
            return result.exercises[0]
        try:
            return graded()
        except SandboxError as err:
            log.warning("attnkit: the sandbox failed (%s); starting a new one", err)
            self.sandbox.close()
            self._start_sandbox()
            return graded()

    def close(self) -> None:
        if self._pool is not None:
            self._pool.shutdown(wait=True, cancel_futures=True)
            self._pool = None
        if self.sandbox is not None:
            self.sandbox.close()
            self.sandbox = None


def _key(path) -> Path:
    return Path(os.path.abspath(path))


RUN = _Run()


def _converter(preprocessor):
    """The nbgrader converter running this preprocessor (preprocessor -> exporter -> converter)."""
    exporter = getattr(preprocessor, "parent", None)
    return getattr(exporter, "parent", None)


def submitted_path(preprocessor, resources) -> Path:
    """The submitted notebook nbgrader is working on (resources name student, assignment, notebook)."""
    info = resources["nbgrader"]
    coursedir = getattr(_converter(preprocessor), "coursedir", None)
    if coursedir is not None:
        folder = coursedir.format_path(coursedir.submitted_directory, info["student"], info["assignment"])
    else:
        folder = os.path.join("submitted", info["student"], info["assignment"])
    return Path(os.path.abspath(os.path.join(folder, f"{info['notebook']}.ipynb")))


def nbgrader_student(path: Path) -> str:
    """The student nbgrader submitted this notebook for: its path is nbgrader's own
    submitted/<student>/<assignment>/<notebook>.ipynb (submitted_path, CourseDirectory)."""
    return Path(path).parent.parent.name


def notebooks_to_grade(preprocessor) -> list[Path]:
    """Every submitted notebook this autograde run will process (nbgrader lists them before it
    converts the first one)."""
    converter = _converter(preprocessor)
    found = getattr(converter, "assignments", None)
    if isinstance(found, dict):
        return [Path(p) for paths in found.values() for p in paths]
    return [Path(p) for p in glob.glob(os.path.join("submitted", "*", "*", "*.ipynb"))]


class SnapshotSubmissions(NbGraderPreprocessor):
    """Sanitize pass, first: snapshot every submission's code and start the warm sandbox, once."""

    def preprocess(self, nb, resources):
        if not RUN.started:
            RUN.start(notebooks_to_grade(self))
        RUN.remember(submitted_path(self, resources))
        return nb, resources


class GradeInSandbox(NbGraderPreprocessor):
    """Autograde pass, right after ExecuteWhereNeeded: the kit's report and score into its test cells."""

    def preprocess(self, nb, resources):
        from autograder.nbgrader.cells import notebook_reports
        from autograder.nbgrader.execute import kit_test_cells

        if not RUN.started:      # not configured with SnapshotSubmissions: snapshot now, late but safe
            RUN.start(notebooks_to_grade(self))
        stem = resources["nbgrader"]["notebook"]
        course = RUN.course
        cells = kit_test_cells(course, stem)
        targets = [c for c in nb.cells if c.cell_type == "code" and _grade_id(c) in cells]
        if not targets:
            return nb, resources
        path = submitted_path(self, resources)
        try:
            result = RUN.grade(path)
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

    from autograder.nbgrader.notebook_tests import report_html

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
