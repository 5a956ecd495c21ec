"""One student of a class: grading it, and what makes its result trustworthy on resume.

A result is reused only if the submission's files and the course are unchanged (a fingerprint
is stored with it) and it carries the run folder's signature (a key only the grader can read),
so a forged results file is graded again rather than believed. The loop over a class (local
pool or Dask cluster) is autograder.grading.class_run; `grade_class` here runs it on this machine.
"""

from __future__ import annotations

import functools
import hashlib
import hmac
import json
import os
import secrets
import threading
from pathlib import Path
from typing import Callable

from autograder.config import CourseConfig, course_json
from autograder.grading.submission import OF_STUDENT, grade_submission
from autograder.grading.preflight import Preflight
from autograder.reports.gradescope import to_gradescope
from autograder.results import CheckResult, ExerciseResult, SubmissionResult
from autograder.intake import lms
from autograder.intake.roster import Person
from autograder.intake.students import Student, open_confined
from autograder.sandbox import Sandbox

RESULT_VERSION = 2
KEY_FILE = ".attnkit-key"
MAX_RESULT_BYTES = 16 * 1024 * 1024   # a result is a few KB; with the data of its pictures maybe 200 KB


@functools.lru_cache(maxsize=1)
def kit_fingerprint() -> str:
    """A hash of the code that decides a grade (checks, reference, mutants, grading): a kit
    that changed regrades everyone instead of reusing results it would no longer give."""
    import autograder
    import reference

    h = hashlib.sha256()
    roots = [Path(reference.__file__).parent, Path(autograder.__file__).parent]
    for path in sorted(p for root in roots for p in root.rglob("*.py")):
        h.update(path.name.encode())
        h.update(path.read_bytes())
    return h.hexdigest()


def fingerprint(student: Student, course: CourseConfig) -> str:
    h = hashlib.sha256(f"v{RESULT_VERSION}".encode())
    h.update(kit_fingerprint().encode())
    h.update(course_json(course).encode())
    h.update(student.name.encode("utf-8", "surrogateescape"))
    h.update(student.refused.encode())
    if not student.refused:
        for line in lms.listing(student):
            h.update(line.encode("utf-8", "surrogateescape"))
    return h.hexdigest()


def result_path(out: Path, student: str) -> Path:
    return out / "results" / f"{student}.json"


def feedback_path(out: Path, student: str) -> Path:
    return out / "feedback" / f"{student}.md"


def run_key(out: Path) -> bytes:
    """The run folder's signing key (created once, readable by the grader only)."""
    path = Path(out) / KEY_FILE
    try:
        key = path.read_bytes()
        if len(key) >= 32:
            return key
    except OSError:
        pass
    key = secrets.token_hex(32).encode()
    fd, tmp = None, path.with_name(f"{KEY_FILE}.{os.getpid()}.{threading.get_ident()}.tmp")
    try:
        fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
        os.write(fd, key)
        os.fsync(fd)
    finally:
        if fd is not None:
            os.close(fd)
    os.replace(tmp, path)
    return key


def _signature(key: bytes, fp: str, result: dict) -> str:
    text = json.dumps(result, sort_keys=True, allow_nan=False)
    return hmac.new(key, f"{fp}\n{text}".encode("utf-8", "surrogateescape"), hashlib.sha256).hexdigest()


def load_previous(out: Path, student: Student, fp: str, key: bytes | None = None) -> SubmissionResult | None:
    path = result_path(out, student.name)
    try:
        if path.stat().st_size > MAX_RESULT_BYTES:
            return None
        data = json.loads(path.read_text(encoding="utf-8"))
        extra = data["extra_data"]
        if extra.get("fingerprint") != fp:
            return None
        if key is not None and not hmac.compare_digest(str(extra.get("signature", "")),
                                                       _signature(key, fp, extra["result"])):
            return None
        result = SubmissionResult.from_dict(extra["result"])
        return result if result.student == student.name and not from_the_grader(result) else None
    except Exception:  # noqa: BLE001 - any damaged file (deep, huge, odd types) is graded again
        return None


def result_text(result: SubmissionResult, fp: str, course: CourseConfig, key: bytes | None = None) -> str:
    data = to_gradescope(result, show_hidden=course.show_hidden)
    plain = result.to_dict()
    data["extra_data"] |= {"fingerprint": fp, "result": plain}
    if key is not None and fp:
        data["extra_data"]["signature"] = _signature(key, fp, json.loads(json.dumps(plain)))
    # one line: json's C encoder (an indented dump takes its Python one, 0.8 ms of a 50 KB result)
    return json.dumps(data, allow_nan=False, separators=(",", ":")) + "\n"


def from_the_grader(result: SubmissionResult) -> bool:
    """Whether some of the result's failures are the grader's (a crash, a sandbox that failed, a
    stall): such a result is recorded, never reused by a rerun, which grades the student again."""
    return any(c.reason == "grader_error" for c in result.checks)


def grader_failure(student: Student, course: CourseConfig, err: BaseException) -> SubmissionResult:
    """A student the grader itself could not grade (a bug or a broken sandbox, not the student's
    doing): every check 0 with a message that says so. Never reused by a rerun."""
    why = f"the grader could not grade this submission ({type(err).__name__}: {str(err)[:300]}); ask the instructor"
    return unanswered(student, course, why, "grader_error")


def unanswered(student: Student, course: CourseConfig, why: str, reason: str) -> SubmissionResult:
    """Every check 0, with one reason and message (a grader failure, a refused folder)."""
    exercises = []
    for stem, ex in course.exercises.items():
        checks = tuple(CheckResult(cid, stem, cid, "error", 0.0, cfg.points, why, hidden=cfg.hidden,
                                   reason=reason) for cid, cfg in ex.checks.items())
        exercises.append(ExerciseResult(stem, ex.title, checks))
    return SubmissionResult(student=student.name, exercises=tuple(exercises), seed=course.seed,
                            assignment=course.assignment)


def grade_student(student: Student, course: CourseConfig, sandbox: Sandbox, *,
                  identity: str | None = OF_STUDENT) -> SubmissionResult:
    """One student, graded on its own (also what a distributed worker calls). The folder is
    opened without following links below the class folder and handed to grading as that open
    descriptor, so nothing it is swapped for meanwhile is read. Raises on a grader failure."""
    if student.refused:
        return unanswered(student, course, student.refused, "refused")
    try:
        fd = open_confined(student.folder)
    except OSError as err:
        return unanswered(student, course, f"the submission folder {student.name} cannot be opened as a folder "
                                           f"of its own ({err.strerror or err}); nothing was graded from it",
                          "refused")
    try:
        folder = Path(f"/proc/self/fd/{fd}") if Path(f"/proc/self/fd/{fd}").is_dir() else student.folder
        with lms.staged(folder, student) as (graded, notes):     # archives unpacked, flat uploads gathered
            result = grade_submission(graded, course, sandbox, student=student.name, identity=identity)
        return lms.nothing_gradable(lms.with_notes(result, notes), lms.uploaded_names(folder, student))
    finally:
        os.close(fd)


def default_jobs() -> int:
    try:
        return max(1, len(os.sched_getaffinity(0)))
    except (AttributeError, OSError):
        return max(1, os.cpu_count() or 1)


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
    from autograder.grading.class_run import ClassRun
    from autograder.grading.local_grading import LocalGrading

    run = ClassRun(class_dir, out, course, regrade=regrade, exports=exports, layout=layout, roster=roster,
                   target=target, overrides=overrides, only=only, lateness=lateness, on_result=on_result, on_start=on_start, on_preflight=on_preflight)
    return run.run(LocalGrading(course, jobs, isolation=isolation, preflight=preflight))
