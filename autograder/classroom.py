"""Grading a whole class: find the students, grade each once, write results as they come.

Each student's result (and feedback page) is written atomically as soon as it is graded, so
a run that is killed resumes where it stopped; a result is reused only if the submission's
files and the course are unchanged (a fingerprint is stored with it) and it carries the
run folder's signature (a key only the grader can read), so a forged results file is
graded again rather than believed. Submissions never see the class folder or OUT: both are
hidden from the sandbox's children, and every result file is checked against what the
grader holds in memory before the run ends.
"""

from __future__ import annotations

import functools
import hashlib
import hmac
import json
import os
import queue
import secrets
import threading
from dataclasses import dataclass
from pathlib import Path
from typing import Callable

from autograder.config import CourseConfig
from autograder.contract import STEMS
from autograder.grading import grade_submission, limits_for
from autograder.reports.feedback import feedback_markdown
from autograder.reports.gradescope import to_gradescope
from autograder.reports.grades_csv import grades_csv
from autograder.results import CheckResult, ExerciseResult, SubmissionResult, dumps, write_atomic
from autograder.sandbox import Sandbox

RESULT_VERSION = 2
KEY_FILE = ".attnkit-key"


@dataclass(frozen=True)
class Student:
    name: str
    folder: Path


def find_students(class_dir: Path, assignment: str, exclude: tuple[Path, ...] = ()) -> list[Student]:
    """One folder per student; nbgrader's `submitted/<student>/<assignment>/` layout is read too.
    Hidden folders and the folders in `exclude` (OUT, when it lies inside the class folder) are
    not students."""
    class_dir = Path(class_dir)
    if not class_dir.is_dir():
        raise FileNotFoundError(f"{class_dir}: no such folder")
    root = class_dir / "submitted" if (class_dir / "submitted").is_dir() else class_dir
    skip = {_real(p) for p in exclude}
    students = []
    for folder in sorted(root.iterdir(), key=lambda p: p.name):
        if folder.name.startswith(".") or not folder.is_dir() or _real(folder) in skip:
            continue
        nested = folder / assignment
        students.append(Student(folder.name, nested if nested.is_dir() else folder))
    return students


def _real(path: Path) -> str:
    try:
        return os.path.realpath(path)
    except (OSError, ValueError):
        return str(path)


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
    h.update(course.model_dump_json().encode())
    h.update(student.name.encode("utf-8", "surrogateescape"))
    for stem in STEMS:
        for suffix in (".py", ".ipynb"):
            path = student.folder / f"{stem}{suffix}"
            try:
                if path.is_file() and not path.is_symlink():
                    stat = path.stat()
                    h.update(f"{path.name}:{stat.st_size}:{stat.st_mtime_ns}".encode())
                elif path.exists() or path.is_symlink():
                    h.update(f"{path.name}:other".encode())
            except OSError:
                h.update(f"{path.name}:unreadable".encode())
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
        data = json.loads(path.read_text(encoding="utf-8"))
        extra = data["extra_data"]
        if extra.get("fingerprint") != fp:
            return None
        if key is not None and not hmac.compare_digest(str(extra.get("signature", "")),
                                                       _signature(key, fp, extra["result"])):
            return None
        result = SubmissionResult.from_dict(extra["result"])
        return result if result.student == student.name else None
    except (OSError, ValueError, KeyError, TypeError, AttributeError):
        return None


def result_text(result: SubmissionResult, fp: str, course: CourseConfig, key: bytes | None = None) -> str:
    data = to_gradescope(result, show_hidden=course.show_hidden)
    plain = result.to_dict()
    data["extra_data"] |= {"fingerprint": fp, "result": plain}
    if key is not None and fp:
        data["extra_data"]["signature"] = _signature(key, fp, json.loads(json.dumps(plain)))
    return dumps(data)


def write_result(out: Path, result: SubmissionResult, fp: str, course: CourseConfig,
                 key: bytes | None = None) -> None:
    """The feedback page, then the result (the result is what a rerun looks for: a run killed
    between the two grades the student again and writes both)."""
    write_atomic(feedback_path(out, result.student), feedback_markdown(result, course))
    write_atomic(result_path(out, result.student), result_text(result, fp, course, key))


def grader_failure(student: Student, course: CourseConfig, err: BaseException) -> SubmissionResult:
    """A student the grader itself could not grade (a bug or a broken sandbox, not the student's
    doing): every check 0 with a message that says so. Never reused by a rerun."""
    why = f"the grader could not grade this submission ({type(err).__name__}: {str(err)[:300]}); ask the instructor"
    exercises = []
    for stem, ex in course.exercises.items():
        checks = tuple(CheckResult(cid, stem, cid, "error", 0.0, cfg.points, why, hidden=cfg.hidden,
                                   reason="grader_error") for cid, cfg in ex.checks.items())
        exercises.append(ExerciseResult(stem, ex.title, checks))
    return SubmissionResult(student=student.name, exercises=tuple(exercises), seed=course.seed,
                            assignment=course.assignment)


def default_jobs() -> int:
    try:
        return max(1, len(os.sched_getaffinity(0)))
    except (AttributeError, OSError):
        return max(1, os.cpu_count() or 1)


def grade_class(class_dir: Path, out: Path, course: CourseConfig, *, jobs: int = 1, regrade: bool = False,
                on_result: Callable[[SubmissionResult, bool], None] | None = None,
                on_start: Callable[[int], None] | None = None) -> list[SubmissionResult]:
    """Grade every student (reusing unchanged results unless `regrade`) and write OUT/grades.csv."""
    class_dir, out = Path(class_dir), Path(out)
    (out / "results").mkdir(parents=True, exist_ok=True)
    (out / "feedback").mkdir(parents=True, exist_ok=True)
    for folder in (out, out / "results", out / "feedback"):
        try:   # never writable by anyone else (the sandbox's children run as other users)
            os.chmod(folder, os.stat(folder).st_mode & ~0o022)
        except OSError:
            pass
    key = run_key(out)
    students = find_students(class_dir, course.assignment, exclude=(out,))
    if on_start:
        on_start(len(students))
    results: dict[str, SubmissionResult] = {}
    texts: dict[str, str] = {}
    todo: queue.Queue = queue.Queue()
    for student in students:
        fp = fingerprint(student, course)
        previous = None if regrade else load_previous(out, student, fp, key)
        if previous is not None:
            results[student.name] = previous
            texts[student.name] = result_text(previous, fp, course, key)
            if not feedback_path(out, student.name).is_file():
                write_atomic(feedback_path(out, student.name), feedback_markdown(previous, course))
            if on_result:
                on_result(previous, True)
        else:
            todo.put((student, fp))
    lock = threading.Lock()
    failures: list[BaseException] = []
    limits = limits_for(course)
    hide = (str(class_dir.resolve()), str(out.resolve()))

    def grade_one(sandbox_box: list, student: Student) -> tuple[SubmissionResult, bool]:
        """(result, trusted): a grader failure is retried once on a fresh sandbox."""
        for attempt in (1, 2):
            try:
                if sandbox_box[0] is None:
                    sandbox_box[0] = Sandbox(limits, hide=hide)
                return grade_submission(student.folder, course, sandbox_box[0], student=student.name), True
            except Exception as err:  # noqa: BLE001 - one student never stops the class
                if sandbox_box[0] is not None:
                    sandbox_box[0].close()
                    sandbox_box[0] = None
                if attempt == 2:
                    return grader_failure(student, course, err), False
        raise AssertionError("unreachable")

    def worker():
        box: list = [None]
        try:
            while True:
                try:
                    student, fp = todo.get_nowait()
                except queue.Empty:
                    return
                result, trusted = grade_one(box, student)
                fp = fp if trusted else ""
                text = result_text(result, fp, course, key)
                write_atomic(feedback_path(out, result.student), feedback_markdown(result, course))
                write_atomic(result_path(out, result.student), text)
                with lock:
                    results[student.name] = result
                    texts[student.name] = text
                    if on_result:
                        on_result(result, False)
        except BaseException as err:  # surfaced after the other workers finish their students
            failures.append(err)
        finally:
            if box[0] is not None:
                box[0].close()

    threads = [threading.Thread(target=worker, daemon=True, name=f"attnkit-grader-{i}")
               for i in range(max(1, min(jobs, todo.qsize())))]
    for t in threads:
        t.start()
    for t in threads:
        while t.is_alive():        # a timed join keeps the main thread interruptible (Ctrl-C)
            t.join(0.2)
    if failures:
        raise failures[0]
    ordered = [results[s.name] for s in students if s.name in results]
    _verify_written(out, ordered, texts, course)
    write_atomic(out / "grades.csv", grades_csv(ordered, tuple(course.exercises)))
    return ordered


def _verify_written(out: Path, results: list[SubmissionResult], texts: dict[str, str], course: CourseConfig) -> None:
    """Every results/<student>.json and feedback/<student>.md says what the grader holds: a file
    that changed since it was written (it should not: nobody else may write here) is rewritten."""
    for result in results:
        path = result_path(out, result.student)
        try:
            same = path.read_text(encoding="utf-8") == texts[result.student]
        except (OSError, ValueError):
            same = False
        if not same:
            write_atomic(path, texts[result.student])
        page = feedback_markdown(result, course)
        fpath = feedback_path(out, result.student)
        try:
            same = fpath.read_text(encoding="utf-8") == page
        except (OSError, ValueError):
            same = False
        if not same:
            write_atomic(fpath, page)
