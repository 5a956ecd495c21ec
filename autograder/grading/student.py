"""One student of a class: what makes its result trustworthy on resume.

A result is reused only if the submission's files and the course are unchanged (a fingerprint
is stored with it) and it carries the run folder's signature (a key only the grader can read),
so a forged results file is graded again rather than believed. A student is graded by
autograder.grading.grade; the loop over a class is autograder.grading.class_run, run on this
machine by local_grading.grade_class.
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

from autograder.config.course import CourseConfig, course_json
from autograder.judge.threads import usable_cores
from autograder.results import CheckResult, ExerciseResult, SubmissionResult
from autograder.intake.students import Student

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
        from autograder.intake import lms      # a class's; not imported by `attnkit check`

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
    from autograder.reports.gradescope import to_gradescope     # a class's; not imported by `attnkit check`

    data = to_gradescope(result, show_hidden=course.show_hidden)
    plain = result.to_dict()
    data["extra_data"] |= {"fingerprint": fp, "result": plain}
    if key is not None and fp:
        data["extra_data"]["signature"] = _signature(key, fp, json.loads(json.dumps(plain)))
    # one line: json's C encoder (an indented dump takes its much slower Python one)
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


def default_jobs() -> int:
    return usable_cores()
