"""`attnkit grade CLASS --out OUT --scheduler tcp://host:port`: a class graded on a Dask cluster.

The class loop is the local run's (autograder.grading.class_run: reuse, preflight, signing -- workers
never see the run's key --, writing, verifying, the reports); this module supplies only where
the grading happens (ClusterGrading: Dask's executor, the transport and the workers' plugin).
At most `in_flight` submissions are out at once and results are written, not held, so the
client's memory does not grow with the class.
"""

from __future__ import annotations

import os

from collections.abc import Callable
from pathlib import Path

from autograder.intake import bounded, budget, lms, staging
from autograder.cluster import packing
from autograder.cluster.transport import MAGIC
from autograder.intake.roster import Person
from autograder.grading.class_run import ClassRun
from autograder.grading.student import Student, grader_failure, kit_fingerprint
from autograder.cluster.validate import BadAnswer, WorkerRefused, parse_answer
from autograder.cluster.worker import PLUGIN_PREFIX, SandboxPlugin, grade_packed
from autograder.config.course import CourseConfig, course_json
from autograder.grading.preflight import Preflight, PreflightStatus
from autograder.results import SubmissionResult

OnResult = Callable[[SubmissionResult, bool], None]


class ClusterError(RuntimeError):
    """The scheduler cannot be reached or has no workers (the message says which)."""


# dask's connection to the scheduler keeps its last messages for developers (1,000 by default):
# each task's message holds a student's packed files, so a class's client grew with every student
# graded. The connection is made with none kept.
MESSAGES_KEPT = {"distributed.admin.low-level-log-length": 0}


def connect(address: str, timeout: float | None = None):
    import dask
    from distributed import Client

    if timeout is None:
        timeout = float(os.environ.get("ATTNKIT_CONNECT_TIMEOUT", "30"))
    try:
        with dask.config.set(MESSAGES_KEPT):
            client = Client(address, timeout=timeout, set_as_default=False)
    except (OSError, TimeoutError, ValueError) as err:
        raise ClusterError(f"--scheduler {address}: cannot reach a Dask scheduler there ({err})") from None
    try:
        client.wait_for_workers(1, timeout=timeout)
    except (OSError, TimeoutError):
        client.close()
        raise ClusterError(f"--scheduler {address}: the scheduler has no workers (none joined within "
                           f"{timeout:g} s; start some with `dask worker {address}`)") from None
    return client


def _worker_plugin_names(dask_scheduler=None) -> list[str]:
    return list(dask_scheduler.worker_plugins)


def ensure_plugin(client, plugin: SandboxPlugin) -> None:
    """Registers `plugin` unless the same one is registered (its workers' sandboxes are warm),
    and unregisters attnkit plugins made with other settings (closing their sandboxes)."""
    names = client.run_on_scheduler(_worker_plugin_names)
    for name in names:
        if name.startswith(PLUGIN_PREFIX) and name != plugin.name:
            client.unregister_worker_plugin(name)
    if plugin.name not in names:
        client.register_plugin(plugin, name=plugin.name)


def default_in_flight(client) -> int:
    """Twice the workers' threads: every thread has a next submission waiting, no more."""
    workers = client.scheduler_info().get("workers", {})
    threads = sum(int(w.get("nthreads", 1)) for w in workers.values())
    return max(2, 2 * threads)


def grade_class_on_cluster(class_dir: Path, out: Path, course: CourseConfig, scheduler, *,
                           regrade: bool = False, in_flight: int | None = None,
                           on_result: OnResult | None = None, on_start: Callable[[int], None] | None = None,
                           task: Callable[..., str] = grade_packed, exports: tuple[str, ...] = (),
                           isolation: bool = True, preflight: bool = True,
                           on_preflight: Callable[[Preflight], None] | None = None,
                           layout: lms.Layout | str = lms.Layout.AUTO, roster: list[Person] | None = None,
                           target=None, overrides=None, only: str | None = None, lateness: dict | None = None):
    """Grade every student on the cluster at `scheduler` (an address, or a distributed.Client)
    through the one class loop (autograder.grading.class_run), and write OUT as a local run does.
    Returns the results as a Sequence read from OUT."""
    owned = isinstance(scheduler, str)
    client = connect(scheduler) if owned else scheduler
    run = ClassRun(class_dir, out, course, regrade=regrade, exports=exports, layout=layout, roster=roster,
                   target=target, overrides=overrides, only=only, lateness=lateness, on_result=on_result, on_start=on_start, on_preflight=on_preflight)
    return run.run(ClusterGrading(client, course, owned=owned, in_flight=in_flight, task=task, isolation=isolation,
                                  preflight=preflight))


EMPTY_SUBMISSION = MAGIC      # a folder of nothing, as cluster.transport packs it


class ClusterGrading:
    """class_run's Grading on Dask: a warm sandbox per worker thread (worker.SandboxPlugin), each
    submission sent packed (cluster.transport) and answered as JSON text, validated here before it is signed."""

    def __init__(self, client, course: CourseConfig, *, owned: bool, in_flight: int | None, task,
                 isolation: bool, preflight: bool):
        self.client, self.course, self.owned, self.task = client, course, owned, task
        self.isolation, self.preflight = isolation, preflight
        self.in_flight = max(1, in_flight or default_in_flight(client))
        self.course_json = course_json(course)
        self.kit = kit_fingerprint()
        self.stems = tuple(course.exercises)
        self.plugin_name = ""
        self.executor = None
        self._staged: dict[str, tuple[tuple[str, ...], tuple[str, ...]]] = {}
        self.accounts = budget.Accounts(course.limits.intake)

    def start(self, hide: tuple[str, ...], to_grade: int) -> Preflight:
        # Each worker checks its jail at setup and runs the preflight before its first task.
        plugin = SandboxPlugin(self.course.limits, hide, self.course.seed, self.isolation, self.preflight)
        ensure_plugin(self.client, plugin)
        self.plugin_name = plugin.name
        self.executor = self.client.get_executor(pure=False)
        return Preflight(PreflightStatus.ON_EACH_WORKER if self.preflight else PreflightStatus.SKIPPED)

    def submit(self, student: Student):
        # Packed in a bounded child charged to the student (an LMS's flat upload gathered first, so
        # a worker sees only this student's files); their archives travel as they are, and the
        # worker unpacks them (under the student's limits there, not here).
        account = self.accounts.of(student.name)
        with budget.charging(account):
            try:
                packed, notes, uploaded = packing.packed(student.folder, student, self.stems)
            except bounded.OverLimit as err:      # the student's totals spent: nothing of it is sent
                account.leave_out(str(err), "your submission")
                packed, notes, uploaded = EMPTY_SUBMISSION, (staging.not_read(err),), ()
        if notes:
            self._staged[student.name] = (notes, uploaded)
        return self.executor.submit(self.task, student.name, packed, self.course_json, self.kit, self.plugin_name)

    def receive(self, future, student: Student) -> tuple[SubmissionResult, bool]:
        try:
            result = parse_answer(future.result(), student.name, self.course)
        except WorkerRefused as err:
            raise ClusterError(f"a worker refused to grade: {err}") from None
        except BadAnswer as err:
            return grader_failure(student, self.course, RuntimeError(str(err))), False
        except Exception as err:  # noqa: BLE001 - a lost worker: that student is not graded this run
            return grader_failure(student, self.course, err), False
        if student.name in self._staged:
            notes, names = self._staged.pop(student.name)
            result = staging.nothing_gradable(staging.with_notes(result, notes), names)
        return result, True

    def close(self) -> None:
        if self.executor is not None:
            self.executor.shutdown(wait=False)
        if self.owned:
            self.client.close()
