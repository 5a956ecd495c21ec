"""Grading a whole class: find the students, grade each once, write results as they come.

Each student's result is written atomically as soon as it is graded, so a run that is
killed resumes where it stopped; a result is reused only if the submission's files and the
course are unchanged (a fingerprint is stored with it).
"""

from __future__ import annotations

import hashlib
import json
import queue
import threading
from dataclasses import dataclass
from pathlib import Path
from typing import Callable

from autograder.config import CourseConfig
from autograder.contract import STEMS
from autograder.grading import grade_submission, limits_for
from autograder.reports.gradescope import to_gradescope
from autograder.reports.grades_csv import grades_csv
from autograder.results import SubmissionResult, dumps, write_atomic
from autograder.sandbox import Sandbox

RESULT_VERSION = 1


@dataclass(frozen=True)
class Student:
    name: str
    folder: Path


def find_students(class_dir: Path, assignment: str) -> list[Student]:
    """One folder per student; nbgrader's `submitted/<student>/<assignment>/` layout is read too."""
    class_dir = Path(class_dir)
    if not class_dir.is_dir():
        raise FileNotFoundError(f"{class_dir}: no such folder")
    root = class_dir / "submitted" if (class_dir / "submitted").is_dir() else class_dir
    students = []
    for folder in sorted(p for p in root.iterdir() if p.is_dir() and not p.name.startswith(".")):
        nested = folder / assignment
        students.append(Student(folder.name, nested if nested.is_dir() else folder))
    return students


def fingerprint(student: Student, course: CourseConfig) -> str:
    h = hashlib.sha256(f"v{RESULT_VERSION}".encode())
    h.update(course.model_dump_json().encode())
    for stem in STEMS:
        for suffix in (".py", ".ipynb"):
            path = student.folder / f"{stem}{suffix}"
            if path.is_file() and not path.is_symlink():
                stat = path.stat()
                h.update(f"{path.name}:{stat.st_size}:{stat.st_mtime_ns}".encode())
    return h.hexdigest()


def result_path(out: Path, student: str) -> Path:
    return out / "results" / f"{student}.json"


def load_previous(out: Path, student: Student, fp: str) -> SubmissionResult | None:
    path = result_path(out, student.name)
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
        if data.get("extra_data", {}).get("fingerprint") != fp:
            return None
        return SubmissionResult.from_dict(data["extra_data"]["result"])
    except (OSError, ValueError, KeyError, TypeError):
        return None


def write_result(out: Path, result: SubmissionResult, fp: str, course: CourseConfig) -> None:
    data = to_gradescope(result, show_hidden=course.show_hidden)
    data["extra_data"] |= {"fingerprint": fp, "result": result.to_dict()}
    write_atomic(result_path(out, result.student), dumps(data))


def grade_class(class_dir: Path, out: Path, course: CourseConfig, *, jobs: int = 1, regrade: bool = False,
                on_result: Callable[[SubmissionResult, bool], None] | None = None,
                on_start: Callable[[int], None] | None = None) -> list[SubmissionResult]:
    """Grade every student (reusing unchanged results unless `regrade`) and write OUT/grades.csv."""
    out = Path(out)
    (out / "results").mkdir(parents=True, exist_ok=True)
    students = find_students(class_dir, course.assignment)
    if on_start:
        on_start(len(students))
    results: dict[str, SubmissionResult] = {}
    todo: queue.Queue = queue.Queue()
    for student in students:
        fp = fingerprint(student, course)
        previous = None if regrade else load_previous(out, student, fp)
        if previous is not None:
            results[student.name] = previous
            if on_result:
                on_result(previous, True)
        else:
            todo.put((student, fp))
    lock = threading.Lock()
    failures: list[BaseException] = []

    def worker():
        try:
            with Sandbox(limits_for(course)) as sandbox:
                while True:
                    try:
                        student, fp = todo.get_nowait()
                    except queue.Empty:
                        return
                    result = grade_submission(student.folder, course, sandbox, student=student.name)
                    write_result(out, result, fp, course)
                    with lock:
                        results[student.name] = result
                        if on_result:
                            on_result(result, False)
        except BaseException as err:  # surfaced after the other workers finish their students
            failures.append(err)

    threads = [threading.Thread(target=worker, daemon=True) for _ in range(max(1, min(jobs, todo.qsize())))]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    if failures:
        raise failures[0]
    ordered = [results[s.name] for s in students if s.name in results]
    write_atomic(out / "grades.csv", grades_csv(ordered, tuple(course.exercises)))
    return ordered
