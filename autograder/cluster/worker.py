"""What runs on a Dask worker: a warm sandbox per worker thread, and the task that grades one
packed submission with it.

The plugin (registered by the client, set up in each worker process, torn down when the
worker closes) keeps the sandboxes warm between tasks, as `attnkit grade` keeps one per job
locally. A task receives plain values (the student's name, the submission as packed bytes, the
course as JSON, the client's kit fingerprint), unpacks the files into a private folder
(cluster.transport: linear in the bytes, within one student's totals), loads and grades them
exactly as a local run does, and answers JSON text: the client validates it, signs it and writes
it. Nothing a submission made ever crosses as a Python object.
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import os
import queue
import shutil
import tempfile
import threading
from dataclasses import asdict
from pathlib import Path
from typing import Iterator

from distributed.diagnostics.plugin import WorkerPlugin

from autograder.grading.grade import grade, grading_sandbox
from autograder.grading.student import Student, kit_fingerprint
from autograder.cluster.transport import unpack_submission
from autograder.config.course import CourseConfig, course_from_data
from autograder.grading.preflight import PreflightFailed, run_preflight
from autograder.results import SubmissionResult
from autograder.sandbox import Limits, Sandbox, SandboxError, close_templates

PLUGIN_PREFIX = "attnkit-sandbox-"


class KitMismatch(RuntimeError):
    """The worker runs other grading code than the client: its grades would differ."""


class SandboxPlugin(WorkerPlugin):
    """One warm Sandbox per worker thread (made when first needed, the first at setup),
    closed at teardown. Submissions are unpacked under a private folder hidden from them."""

    def __init__(self, limits: Limits, hide: tuple[str, ...] = (), seed: int | None = None,
                 isolation: bool = True, preflight: bool = True):
        self.limits_fields = asdict(limits)   # plain data: the plugin travels to the workers
        self.extra_hide = tuple(str(p) for p in hide)   # the class and OUT, if a worker sees them
        self.seed = seed                      # the course's: the reference answers to compute ahead
        self.isolation = isolation            # refuse to grade where the sandbox's jail does not hold
        self.refusal = ""                     # why this worker cannot grade (the jail does not hold)
        self.preflight = preflight            # grade the kit's solutions first, once per course
        self.preflight_failures: dict[str, str] = {}   # course JSON -> why its solutions lost points here
        self.preflight_passed: set[str] = set()
        # The name says what the sandboxes are made with: a run with the same limits and folders
        # finds them registered and warm; other settings get a plugin (and sandboxes) of their own.
        token = json.dumps([self.limits_fields, self.extra_hide, seed, isolation, preflight], sort_keys=True)
        self.name = PLUGIN_PREFIX + hashlib.sha256(token.encode()).hexdigest()[:16]
        self._idle: queue.LifoQueue | None = None
        self._all: list[Sandbox] = []
        self._lock = threading.Lock()
        self.root = ""
        self.hide: tuple[str, ...] = ()

    def __getstate__(self):
        return {"limits_fields": self.limits_fields, "extra_hide": self.extra_hide, "seed": self.seed,
                "isolation": self.isolation, "preflight": self.preflight}

    def __setstate__(self, state):
        self.__init__(Limits(**state["limits_fields"]), tuple(state["extra_hide"]), state["seed"],
                      state["isolation"], state.get("preflight", True))

    def setup(self, worker) -> None:
        self.root = tempfile.mkdtemp(prefix="attnkit-worker-")
        os.chmod(self.root, 0o700)
        local = getattr(worker, "local_directory", None)
        # Hidden from submissions: every submission unpacked here, the worker's own folder, and
        # the class and OUT where a shared file system shows them to the worker too.
        self.hide = tuple(p for p in (self.root, local, *self.extra_hide) if p and os.path.isdir(p))
        self._idle = queue.LifoQueue()
        try:
            # Warm before the first task arrives; the jail is checked here, once per worker.
            self._idle.put(self._new(require_isolation=self.isolation))
        except SandboxError as err:
            self.refusal = str(err)

    def teardown(self, worker) -> None:
        with self._lock:
            boxes, self._all = self._all, []
        for box in boxes:
            box.close()
        close_templates()
        if self.root:
            shutil.rmtree(self.root, ignore_errors=True)

    def preflight_failure(self, course_json: str, course: CourseConfig) -> str:
        """Why this worker must not grade this course ("" if it may): the kit's solutions, graded
        once per course in one of its sandboxes, lost points (autograder.grading.preflight)."""
        if not self.preflight:
            return ""
        with self._lock:
            if course_json in self.preflight_passed:
                return ""
            if course_json in self.preflight_failures:
                return self.preflight_failures[course_json]
        try:
            with self.sandbox() as box:
                run_preflight(course, box)
        except PreflightFailed as err:
            with self._lock:
                self.preflight_failures[course_json] = str(err)
            return str(err)
        with self._lock:
            self.preflight_passed.add(course_json)
        return ""

    def _new(self, require_isolation: bool = False) -> Sandbox:
        box = grading_sandbox(Limits(**self.limits_fields), hide=self.hide, require_isolation=require_isolation,
                              many=True)
        with self._lock:
            self._all.append(box)
        return box

    @contextlib.contextmanager
    def sandbox(self) -> Iterator[Sandbox]:
        """A warm sandbox for this thread's task; one that failed is closed, not reused."""
        if self._idle is None:
            raise RuntimeError("the attnkit sandbox plugin was not set up on this worker")
        try:
            box = self._idle.get_nowait()
        except queue.Empty:
            box = self._new()
        try:
            yield box
        except BaseException:
            self._discard(box)
            raise
        self._idle.put(box)

    def _discard(self, box: Sandbox) -> None:
        box.close()
        with self._lock:
            if box in self._all:
                self._all.remove(box)

    @contextlib.contextmanager
    def private_folder(self) -> Iterator[Path]:
        folder = tempfile.mkdtemp(prefix="sub-", dir=self.root)
        try:
            yield Path(folder)
        finally:
            shutil.rmtree(folder, ignore_errors=True)


def _plugin(name: str) -> SandboxPlugin:
    from distributed import get_worker

    plugin = get_worker().plugins.get(name)
    if not isinstance(plugin, SandboxPlugin):
        raise RuntimeError("the attnkit sandbox plugin is not registered on this worker")
    return plugin


def grade_packed(student: str, packed: bytes, course_json: str, kit: str, plugin_name: str) -> str:
    """The task: JSON text, {"result": SubmissionResult.to_dict()} or {"error": "why"}.
    A grader failure is retried once on a fresh sandbox, as locally."""
    try:
        if kit != kit_fingerprint():
            raise KitMismatch("this worker has another version of attnkit than the client "
                              "(install the same kit on every worker)")
        plugin = _plugin(plugin_name)
        if plugin.refusal:
            return json.dumps({"refused": f"{plugin.refusal} (--no-isolation grades anyway)"})
        course = course_from_data(json.loads(course_json))
        failure = plugin.preflight_failure(course_json, course)
        if failure:
            return json.dumps({"refused": failure})
        with plugin.private_folder() as folder:
            unpack_submission(packed, folder, tuple(course.exercises))
            for attempt in (1, 2):
                try:
                    with plugin.sandbox() as box:
                        result = grade(Student(student, folder), course, box)
                    break
                except Exception:  # noqa: BLE001 - a broken sandbox: once more on a fresh one
                    if attempt == 2:
                        raise
        return answer_json(result)
    except Exception as err:  # noqa: BLE001 - the client turns this into a grader failure
        return json.dumps({"error": f"{type(err).__name__}: {str(err)[:500]}"})


def answer_json(result: SubmissionResult) -> str:
    """The task's answer for a graded result (what the client's `parse_answer` reads)."""
    return json.dumps({"result": result.to_dict()}, allow_nan=False)
