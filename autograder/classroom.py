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
from dataclasses import replace
from pathlib import Path
from typing import Callable

from autograder.config import CourseConfig
from autograder.grading import grade_submission, limits_for
from autograder.reports.feedback import feedback_markdown
from autograder.reports.gradescope import to_gradescope
from autograder.reports.finish import finish_run, write_feedback_html
from autograder.results import CheckResult, ExerciseResult, SubmissionResult, dumps, write_atomic
from autograder import lms
from autograder.class_roster import Person, enrol
from autograder.roster import Student, _listing, find_students, open_confined  # noqa: F401 (public here too)
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
    h.update(course.model_dump_json().encode())
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
        return result if result.student == student.name else None
    except Exception:  # noqa: BLE001 - any damaged file (deep, huge, odd types) is graded again
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


def grade_student(student: Student, course: CourseConfig, sandbox: Sandbox) -> SubmissionResult:
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
            result = grade_submission(graded, course, sandbox, student=student.name)
            result = keep_the_better_form(result, graded, course, sandbox)
        return lms.nothing_gradable(lms.with_notes(result, notes), lms.uploaded_names(folder, student))
    finally:
        os.close(fd)


def keep_the_better_form(result: SubmissionResult, folder: Path, course: CourseConfig,
                         sandbox: Sandbox) -> SubmissionResult:
    """What intake decided, applied to the result: its flags on each exercise, a refused file's
    reason, and where .py and .ipynb both hold work, the other form graded too and the better
    kept (or the form course.yml names in `both_forms`), said in the exercise's note; where
    several names could be an exercise's, each graded and the better kept (autograder.candidates)."""
    from autograder.candidates import ambiguous, grade_the_better
    from autograder.grading import grade_exercise
    from autograder.load import LoadError, load_submission

    sources = load_submission(folder, tuple(e.stem for e in result.exercises))
    exercises = []
    for first in result.exercises:
        source = sources[first.stem]
        ex = replace(first, flags=tuple(source.flags))
        if isinstance(source, LoadError) and ambiguous(ex):
            ex = grade_the_better(ex, folder, course, sandbox)
        if isinstance(source, LoadError) and source.reason == "refused":
            ex = replace(ex, checks=tuple(replace(c, reason="refused") if c.reason == "load_error" else c
                                          for c in ex.checks))
        alternative = getattr(source, "alternative", None)
        if alternative is not None and course.both_forms == "py":
            ex = replace(ex, note=f"{ex.note}; the course grades the .py file")
        elif alternative is not None and course.both_forms == "best" and ex.score >= ex.max_score:
            ex = replace(ex, note=f"{ex.note}; {ex.graded_file} has full marks, so {alternative.filename} was not graded")
        elif alternative is not None:
            second = replace(grade_exercise(first.stem, alternative, course, sandbox), flags=ex.flags)
            if course.both_forms == "ipynb":
                ex = replace(second, note=f"{ex.note}; the course grades the notebook")
            else:
                keep = second if second.score > ex.score else ex
                ex = replace(keep, note=(
                    f"{ex.note}: both were graded, {ex.graded_file} {ex.score:g}/{ex.max_score:g} and "
                    f"{second.graded_file} {second.score:g}/{second.max_score:g}; the better, {keep.graded_file}, "
                    f"counts"))
        exercises.append(ex)
    return replace(result, exercises=tuple(exercises))


def _class_sandbox(sandbox: Sandbox) -> Sandbox:
    """Many submissions: some file will want torch and matplotlib together, so every torch
    zygote has both (one torch start per worker, not one per kind)."""
    sandbox.torch_with_matplotlib = True
    return sandbox


def default_jobs() -> int:
    try:
        return max(1, len(os.sched_getaffinity(0)))
    except (AttributeError, OSError):
        return max(1, os.cpu_count() or 1)


def grade_class(class_dir: Path, out: Path, course: CourseConfig, *, jobs: int = 1, regrade: bool = False,
                on_result: Callable[[SubmissionResult, bool], None] | None = None,
                on_start: Callable[[int], None] | None = None, exports: tuple[str, ...] = (),
                isolation: bool = True, layout: lms.Layout | str = lms.Layout.AUTO,
                roster: list[Person] | None = None) -> list[SubmissionResult]:
    """Grade every student (reusing unchanged results unless `regrade`), then write grades.csv, the
    class report and `exports` (reports.finish.finish_run). `layout`: how the class folder is
    laid out (autograder.lms; recognised by its names by default); `roster` (class_roster.read_roster)
    names each student in grades.csv and the exports. With `isolation` (the default), a
    machine where the sandbox's jail does not hold raises SandboxError before any student runs."""
    class_dir, out = Path(class_dir), Path(out)
    (out / "results").mkdir(parents=True, exist_ok=True)
    (out / "feedback").mkdir(parents=True, exist_ok=True)
    for folder in (out, out / "results", out / "feedback"):
        try:   # never writable by anyone else (the sandbox's children run as other users)
            os.chmod(folder, os.stat(folder).st_mode & ~0o022)
        except OSError:
            pass
    key = run_key(out)
    students = lms.read_class(class_dir, course.assignment, exclude=(out,), layout=layout).students
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
                    sandbox_box[0] = _class_sandbox(Sandbox(limits, hide=hide))
                return grade_student(student, course, sandbox_box[0]), True
            except Exception as err:  # noqa: BLE001 - one student never stops the class
                if sandbox_box[0] is not None:
                    try:
                        sandbox_box[0].close()
                    except Exception:  # noqa: BLE001 - a sandbox that cannot close is dropped
                        pass
                    sandbox_box[0] = None
                if attempt == 2:
                    return grader_failure(student, course, err), False
        raise AssertionError("unreachable")

    # The jail is checked once, here, before any student's code runs (the first worker keeps it).
    first = _class_sandbox(Sandbox(limits, hide=hide, require_isolation=True)) \
        if isolation and not todo.empty() else None

    def worker(box_: list):
        try:
            while True:
                try:
                    student, fp = todo.get_nowait()
                except queue.Empty:
                    return
                try:
                    _record(box_, student, fp)
                except Exception as err:  # noqa: BLE001 - writing one student failed: say so, go on
                    failures.append(err)
        except BaseException as err:  # surfaced after the other workers finish their students
            failures.append(err)
        finally:
            if box_[0] is not None:
                try:
                    box_[0].close()
                except Exception:  # noqa: BLE001
                    pass

    def _record(sandbox_box: list, student: Student, fp: str) -> None:
        result, trusted = grade_one(sandbox_box, student)
        try:
            text = result_text(result, fp if trusted else "", course, key)
        except Exception as err:  # noqa: BLE001 - a result that cannot be serialised is a grader error
            result = grader_failure(student, course, err)
            text = result_text(result, "", course, key)
        with lock:      # held first: a file that cannot be written still leaves the grade in grades.csv
            results[student.name] = result
            texts[student.name] = text
        write_atomic(feedback_path(out, result.student), feedback_markdown(result, course))
        write_atomic(result_path(out, result.student), text)
        write_feedback_html(out, result, course)     # here, while other workers wait on their sandboxes
        if on_result:
            with lock:
                on_result(result, False)

    threads = [threading.Thread(target=worker, args=([first if i == 0 else None],), daemon=True,
                                name=f"attnkit-grader-{i}") for i in range(max(1, min(jobs, todo.qsize())))]
    for t in threads:
        t.start()
    for t in threads:
        while t.is_alive():        # a timed join keeps the main thread interruptible (Ctrl-C)
            t.join(0.2)
    ordered = [results[s.name] for s in students if s.name in results]
    try:
        _verify_written(out, ordered, texts, course)
    except Exception as err:  # noqa: BLE001 - reported after grades.csv is written
        failures.append(err)
    # Always written, also when a worker failed: every graded student is in it.
    finish_run(out, ordered, course, exports=exports, enrolment=enrol(students, roster))
    if failures:
        raise failures[0]
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
