"""What the kit's preprocessors share in one ``nbgrader autograde`` command: the snapshot of every
submission's code, the course, and the warm sandbox that grades the snapshot.

nbgrader makes the preprocessors anew for every notebook, but one converter for the whole command:
the run is kept on it (``shared_run``), and a preprocessor given one (its ``run``) uses that.
"""

from __future__ import annotations

import atexit
import glob
import logging
import os
from concurrent.futures import Future, ThreadPoolExecutor
from dataclasses import dataclass, field
from pathlib import Path

from autograder.nbgrader.cells import MARKER_ENV   # set in nbgrader's process, inherited by its kernels

log = logging.getLogger(__name__)
_ON_THE_CONVERTER = "_attnkit_run"


@dataclass
class AutogradeRun:
    """What one ``nbgrader autograde`` command shares between notebooks: nbgrader makes new
    preprocessor objects for every notebook, so the warm sandbox lives here. One worker thread
    grades the snapshot in nbgrader's order, ahead of nbgrader's kernels: while a notebook runs
    in its kernel, the kit grades it (and the next ones) in the sandbox. Only that thread
    touches the sandbox."""

    course: object = None
    sandbox: object = None
    hide: tuple[Path, ...] = ()
    snapshot: dict[Path, object] = field(default_factory=dict)   # submitted notebook -> SourceFile | LoadError
    accounts: object = None      # budget.Accounts: what reading each student's bytes may still cost
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

        from autograder.intake.budget import Accounts

        course_file = find_course_file()
        self.course = load_course_for_cell(course_file)
        self.accounts = Accounts(self.course.limits.intake)
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
        from autograder.intake.budget import Account, charging
        from autograder.nbgrader.cells import load_notebook

        path = _key(path)
        if path not in self.snapshot:
            account = self.accounts.of(nbgrader_student(path)) if self.accounts is not None else Account()
            with charging(account):      # read in a bounded child, charged to its student
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
                           sources={path.stem: loaded}, account=self.accounts.of(student))
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


def shared_run(preprocessor) -> AutogradeRun:
    """The run of the nbgrader command `preprocessor` works in, started (its snapshot made) if this
    is the first preprocessor to ask. A preprocessor outside a converter has a run of its own."""
    if preprocessor.run is None:
        converter = _converter(preprocessor)
        run = getattr(converter, _ON_THE_CONVERTER, None)
        if run is None:
            run = AutogradeRun()
            if converter is not None:
                setattr(converter, _ON_THE_CONVERTER, run)
        preprocessor.run = run
    if not preprocessor.run.started:
        preprocessor.run.start(notebooks_to_grade(preprocessor))
    return preprocessor.run
