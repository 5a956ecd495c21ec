"""The local way a class run grades (class_run.ClassRun's `Grading`): lanes of threads on this
machine's cores, each student on a warm sandbox; the preflight graded beside the first students.
A cluster run grades through autograder.cluster.client instead.
"""

from __future__ import annotations

import concurrent.futures as cf
import threading
from collections.abc import Callable
from pathlib import Path

from autograder.config.course import CourseConfig
from autograder.grading.class_run import ClassRun
from autograder.grading.grade import grading_sandbox
from autograder.grading.preflight import Preflight, PreflightStatus, grade_preflight, preflight_known, solution_sources
from autograder.grading.grade import grade
from autograder.grading.student import Student, default_jobs, grader_failure
from autograder.intake import budget, lms
from autograder.intake.roster import Person
from autograder.results import SubmissionResult
from autograder.sandbox import Sandbox, close_templates


SPARE_LANE_FROM = 150    # students to grade from which an automatic run adds a lane (LocalGrading says why)


def lanes_for(jobs: int | None, to_grade: int) -> int:
    """How many students are graded at once: `jobs`; for None one per core, and one more for a
    class of SPARE_LANE_FROM or more to grade."""
    if jobs is not None:
        return max(1, jobs)
    return default_jobs() + (1 if to_grade >= SPARE_LANE_FROM else 0)


class LocalGrading:
    """`jobs` lanes grading at once on this machine, each on a warm sandbox.

    A lane holds one of `jobs` cores while it grades. Sandboxes are not tied to threads: a lane
    takes a free one for each student.

    `jobs=None`: one lane per core, and one more for a class of SPARE_LANE_FROM students or more
    to grade: it fills the moments a lane waits for the interpreter or a child for its lane
    (docs/architecture.md, "Lanes and cores", has the measurements). `--jobs N` sets the lanes."""

    def __init__(self, course: CourseConfig, jobs: int | None = 1, *, isolation: bool = True,
                 preflight: bool = True):
        self.course, self.isolation, self.preflight = course, isolation, preflight
        # What reading each student's bytes may still cost, for the run (grading, then the
        # similarity pass: ClassRun reads these)
        self.accounts = budget.Accounts(course.limits.intake)
        self.requested = jobs
        self._lanes(lanes_for(jobs, 0))
        self._free: list[Sandbox] = []       # warm sandboxes no lane holds; the last one freed first
        self._all: list[Sandbox] = []
        self._lock = threading.Lock()
        self._pool: cf.ThreadPoolExecutor | None = None
        self.hide: tuple[str, ...] = ()

    def _lanes(self, jobs: int) -> None:
        self.jobs = jobs
        # One student queued behind each one being graded: a lane that finishes starts the next at
        # once, not after the main thread has written the last one's files: both cores stay busy.
        self.in_flight = 2 * jobs
        self.cores = threading.Semaphore(jobs)

    def start(self, hide: tuple[str, ...], to_grade: int) -> Preflight | cf.Future:
        self.hide = hide
        self._lanes(lanes_for(self.requested, to_grade))
        self._pool = cf.ThreadPoolExecutor(self.in_flight, thread_name_prefix="attnkit-grader")
        # The jail is checked once, here, before any student's code runs (the first sandbox is kept).
        try:
            first = self._new(require_isolation=self.isolation)
        except Exception:  # noqa: BLE001 - every student's result will say why it could not be graded
            if self.isolation:
                raise
            return Preflight(PreflightStatus.NO_SANDBOX)
        self._warm_lanes(first, to_grade)
        known = preflight_known(self.course, first, enabled=self.preflight)
        if known is not None:
            self._free.append(first)
            return known
        return self._pool.submit(self._preflight, first)

    def _preflight(self, first: Sandbox) -> Preflight:
        """The solutions graded on the first sandbox, on a core of its own, while the lanes grade
        the first students on the others (ClassRun holds their results until it passes): the first
        run after the kit changed does not grade it with the other core idle."""
        self.cores.acquire()
        try:
            checked = grade_preflight(self.course, first)
            with self._lock:
                self._free.append(first)    # before the core is given back: the lane waiting for it takes this
            return checked
        finally:
            self.cores.release()

    def _warm_lanes(self, first: Sandbox, to_grade: int) -> None:
        """Every lane's sandbox starts its zygotes now, without waiting, the first's beside the
        others': otherwise the preflight would wait for the first's with the other core idle, and
        each lane's first student for its own. None more than students to grade."""
        sources = solution_sources(self.course)
        first.prepare(sources)
        for _ in range(min(self.jobs, to_grade) - 1):
            box = self._new()
            box.prepare(sources)
            with self._lock:
                self._free.append(box)

    def _new(self, require_isolation: bool = False) -> Sandbox:
        box = grading_sandbox(self.course.limits, hide=self.hide, require_isolation=require_isolation, many=True)
        with self._lock:
            self._all.append(box)
        return box

    def submit(self, student: Student) -> cf.Future:
        return self._pool.submit(self._grade, student)

    def _grade(self, student: Student) -> tuple[SubmissionResult, bool]:
        """A grader failure is retried once on a fresh sandbox."""
        self.cores.acquire()
        try:
            for attempt in (1, 2):
                with self._lock:
                    box = self._free.pop() if self._free else None
                try:
                    box = box or self._new()
                    graded = grade(student, self.course, box, account=self.accounts.of(student.name)), True
                except Exception as err:  # noqa: BLE001 - one student never stops the class
                    self._discard(box)
                    if attempt == 2:
                        return grader_failure(student, self.course, err), False
                    continue
                with self._lock:
                    self._free.append(box)
                return graded
        finally:
            self.cores.release()
        raise AssertionError("unreachable")

    def receive(self, future: cf.Future, student: Student) -> tuple[SubmissionResult, bool]:
        try:
            return future.result()
        except Exception as err:  # noqa: BLE001 - the pool itself failed for this student
            return grader_failure(student, self.course, err), False

    def _discard(self, box: Sandbox | None) -> None:
        if box is None:
            return
        try:
            box.close()
        except Exception:  # noqa: BLE001 - a sandbox that cannot close is dropped
            pass
        with self._lock:
            if box in self._all:
                self._all.remove(box)

    def close(self) -> None:
        if self._pool is not None:
            self._pool.shutdown(wait=True, cancel_futures=True)
        with self._lock:
            boxes, self._all = self._all, []
        for box in boxes:
            self._discard(box)
        close_templates()      # the imports their zygotes were forked from: nothing of the run stays


def grade_class(class_dir: Path, out: Path, course: CourseConfig, *, jobs: int | None = 1, regrade: bool = False,
                on_result: Callable[[SubmissionResult, bool], None] | None = None,
                on_start: Callable[[int], None] | None = None, exports: tuple[str, ...] = (),
                isolation: bool = True, preflight: bool = True,
                on_preflight: Callable[[Preflight], None] | None = None,
                layout: lms.Layout | str = lms.Layout.AUTO, roster: list[Person] | None = None, target=None,
                overrides=None, only: str | None = None, lateness: dict | None = None):
    """Grade every student on this machine, `jobs` at once (None: one per core:
    local_grading.LocalGrading) (autograder.grading.class_run: the loop a cluster run
    shares), reusing unchanged results unless `regrade`; then write grades.csv, the
    class report and `exports`. `layout`: how the class folder is laid out (autograder.intake.lms;
    recognised by its names by default); `roster` (class_roster.read_roster) names each student
    in grades.csv and the exports, `target` (intake.gradebook_column) the LMS's column they write
    into, `overrides` (reports.overrides) merged at the end; `only` grades that student again
    and keeps the others' results as OUT holds them. With `isolation` (the default), a machine where the sandbox's
    jail does not hold raises SandboxError before any student runs; with `preflight` (the
    default), a sandbox in which the kit's solutions lose points raises PreflightFailed before
    any student runs (autograder.grading.preflight). Returns the results, read back from OUT."""
    run = ClassRun(class_dir, out, course, regrade=regrade, exports=exports, layout=layout, roster=roster,
                   target=target, overrides=overrides, only=only, lateness=lateness, on_result=on_result, on_start=on_start, on_preflight=on_preflight)
    return run.run(LocalGrading(course, jobs, isolation=isolation, preflight=preflight))
