"""`attnkit grade CLASS --out OUT --scheduler tcp://host:port`: a class graded on a Dask cluster.

The client does what a local run does around the grading: finds the students, reuses a result
whose fingerprint and signature match (signing stays here: workers never see the run's key),
writes each result and feedback page as it arrives, and ends with grades.csv. What moves to
the workers is only the grading of one submission (autograder.cluster.worker). At most
`in_flight` submissions are out at once and results are written, not held, so the client's
memory does not grow with the class.
"""

from __future__ import annotations

import json
import os
import uuid
from collections.abc import Callable, Iterator
from pathlib import Path

from autograder.classroom import (Student, feedback_path, find_students, fingerprint, grader_failure,
                                  kit_fingerprint, load_previous, result_path, result_text, run_key, unanswered)
from autograder.cluster.stored import StoredResults, digest
from autograder.cluster.transport import pack_submission
from autograder.cluster.validate import BadAnswer, WorkerRefused, parse_answer
from autograder.cluster.worker import PLUGIN_PREFIX, SandboxPlugin, grade_packed
from autograder.config import CourseConfig
from autograder.grading import limits_for
from autograder.preflight import Preflight, PreflightStatus
from autograder.reports.feedback import feedback_markdown
from autograder.reports.finish import finish_run, write_feedback_html
from autograder.results import SubmissionResult, write_atomic

OnResult = Callable[[SubmissionResult, bool], None]


class ClusterError(RuntimeError):
    """The scheduler cannot be reached or has no workers (the message says which)."""


def connect(address: str, timeout: float | None = None):
    from distributed import Client

    if timeout is None:
        timeout = float(os.environ.get("ATTNKIT_CONNECT_TIMEOUT", "30"))
    try:
        client = Client(address, timeout=timeout, set_as_default=False)
    except (OSError, TimeoutError, ValueError) as err:
        raise ClusterError(f"--scheduler {address}: cannot reach a Dask scheduler there ({err})") from None
    try:
        client.wait_for_workers(1, timeout=timeout)
    except (OSError, TimeoutError) as err:
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
                           isolation: bool = True, preflight: bool = True) -> StoredResults:
    """Grade every student on the cluster at `scheduler` (an address, or a distributed.Client)
    and write OUT as `grade_class` does. Returns the results as a Sequence read from OUT."""
    class_dir, out = Path(class_dir), Path(out)
    _prepare(out)
    key = run_key(out)
    students = find_students(class_dir, course.assignment, exclude=(out,))
    if on_start:
        on_start(len(students))
    owned = isinstance(scheduler, str)
    client = connect(scheduler) if owned else scheduler
    try:
        plugin = SandboxPlugin(limits_for(course), (str(class_dir.resolve()), str(out.resolve())), course.seed,
                               isolation, preflight)
        ensure_plugin(client, plugin)
        run = _Run(client, out, course, key, task, in_flight or default_in_flight(client), on_result, plugin.name)
        run.grade(_to_grade(run, students, regrade))
        stored = StoredResults(out, [s.name for s in students], run.digests)
        changed = set(stored.changed())      # a file rewritten by someone else: grade those again
        if changed:
            run.grade(iter([(s, fingerprint(s, course)) for s in students if s.name in changed]))
            if stored.changed():
                raise RuntimeError(f"result files in {out / 'results'} keep changing; is another run writing there?")
    finally:
        if owned:
            client.close()
    finish_run(out, stored, course, exports=exports,     # grades.csv, summary, report, as locally
               preflight=Preflight(PreflightStatus.ON_EACH_WORKER if preflight else PreflightStatus.SKIPPED))
    return stored


def _prepare(out: Path) -> None:
    for folder in (out, out / "results", out / "feedback"):
        folder.mkdir(parents=True, exist_ok=True)
        try:   # never writable by anyone else, as in a local run
            os.chmod(folder, os.stat(folder).st_mode & ~0o022)
        except OSError:
            pass


def _to_grade(run: "_Run", students: list[Student], regrade: bool) -> Iterator[tuple[Student, str]]:
    """The students to send, lazily; a result that can be reused is taken on the way."""
    for student in students:
        fp = fingerprint(student, run.course)
        previous = None if regrade else load_previous(run.out, student, fp, run.key)
        if previous is None:
            yield student, fp
            continue
        text = result_text(previous, fp, run.course, run.key)
        if not feedback_path(run.out, student.name).is_file():
            write_atomic(feedback_path(run.out, student.name), feedback_markdown(previous, run.course))
        try:
            same = result_path(run.out, student.name).read_text(encoding="utf-8") == text
        except (OSError, ValueError):
            same = False
        if not same:
            write_atomic(result_path(run.out, student.name), text)
        run.digests[student.name] = digest(text)
        if run.on_result:
            run.on_result(previous, True)


class _Run:
    def __init__(self, client, out: Path, course: CourseConfig, key: bytes, task, in_flight: int,
                 on_result: OnResult | None, plugin_name: str):
        self.client, self.out, self.course, self.key, self.task = client, out, course, key, task
        self.in_flight, self.on_result = max(1, in_flight), on_result
        self.course_json = course.model_dump_json()
        self.kit = kit_fingerprint()
        self.digests: dict[str, str] = {}
        self.stems = tuple(course.exercises)
        self.plugin_name = plugin_name

    def grade(self, todo: Iterator[tuple[Student, str]]) -> None:
        from distributed import as_completed

        waiting: dict[str, tuple[Student, str]] = {}
        done = as_completed([], with_results=False, loop=self.client.loop)
        try:
            for _ in range(self.in_flight):
                if not self._submit(todo, waiting, done):
                    break
            for future in done:
                student, fp = waiting.pop(future.key)
                self._finish(future, student, fp)
                future.release()
                self._submit(todo, waiting, done)
        except BaseException:   # Ctrl-C or a failure here: what is written stays, the rest is dropped
            if waiting:
                self.client.cancel(list(done.futures), force=True)
            raise

    def _submit(self, todo, waiting: dict, done) -> bool:
        while (item := next(todo, None)) is not None and item[0].refused:
            # A folder intake refused (a link): graded here as locally, nothing to send.
            self.record(item[0], unanswered(item[0], self.course, item[0].refused, "refused"), item[1])
        if item is None:
            return False
        student, fp = item
        packed = pack_submission(student.folder, self.stems)
        key = f"attnkit-grade-{uuid.uuid4().hex}"
        future = self.client.submit(self.task, student.name, packed, self.course_json, self.kit,
                                    self.plugin_name, key=key, pure=False)
        waiting[future.key] = item
        done.add(future)
        return True

    def _finish(self, future, student: Student, fp: str) -> None:
        try:
            result = parse_answer(future.result(), student.name, self.course)
        except WorkerRefused as err:
            raise ClusterError(f"a worker refused to grade: {err}") from None
        except BadAnswer as err:
            result, fp = grader_failure(student, self.course, RuntimeError(str(err))), ""
        except Exception as err:  # noqa: BLE001 - a lost worker: that student is not graded this run
            result, fp = grader_failure(student, self.course, err), ""
        self.record(student, result, fp)

    def record(self, student: Student, result: SubmissionResult, fp: str) -> None:
        text = result_text(result, fp, self.course, self.key)
        # The feedback page, then the result (a rerun looks for the result), as in a local run.
        write_atomic(feedback_path(self.out, student.name), feedback_markdown(result, self.course))
        write_atomic(result_path(self.out, student.name), text)
        write_feedback_html(self.out, result, self.course)
        self.digests[student.name] = digest(text)
        if self.on_result:
            self.on_result(result, False)


def answer_json(result: SubmissionResult) -> str:
    """What `grade_packed` answers for a result (for tests and custom tasks)."""
    return json.dumps({"result": result.to_dict()}, allow_nan=False)
