"""One class loop: prepare OUT, reuse, preflight, grade, sign, write, verify, finish, written once.

Where the submissions are graded is a `Grading` (the local lanes of
autograder.grading.local_grading, or the Dask cluster's in
autograder.cluster.client): it starts its workers, runs the preflight, sends one student and
turns what comes back into a SubmissionResult. Everything around that is here, so a run on this
machine and a run on a cluster resume, report and verify the same way (tests/test_distributed.py
holds the two equal).

Each result (and feedback page) is written atomically as soon as it is graded, so a run that is
killed resumes where it stopped; only a digest of what was written is kept, and the end-of-run
reports read the results back from OUT (autograder.grading.stored_results.StoredResults), so memory does not grow
with the class.
"""

from __future__ import annotations

import concurrent.futures as cf
import os
import threading
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Protocol

from autograder.intake import bounded, budget, lms
from autograder.intake.identify import ClassList, identify, refuse_unknown
from autograder.intake.gradebook_column import Target
from autograder.intake.roster import Person
from autograder.grading.kept import kept_result
from autograder.reports.feedback_zip import FORMATS as ZIPS, entry_name, write_feedback_zip
from autograder.reports.overrides import Overrides
from autograder.grading.student import (Student, feedback_path, fingerprint, from_the_grader, grader_failure,
                                        load_previous, result_path, result_text, run_key, unanswered)
from autograder.grading.stored_results import StoredResults, digest
from autograder.config.course import CourseConfig
from autograder.grading.preflight import Preflight, PreflightStatus
from autograder.integrity.hand_answers import flag_classmates
from autograder.reports.feedback import feedback_markdown, grade_of
from autograder.reports.finish import finish_run, write_feedback_html
from autograder.results import SubmissionResult, write_atomic

if TYPE_CHECKING:      # copydetect, its dependency, is the optional `integrity` extra
    from autograder.integrity.class_code import ClassCode

OnResult = Callable[[SubmissionResult, bool], None]


class Grading(Protocol):
    """Where one run's submissions are graded."""

    in_flight: int                       # submissions out at once
    accounts: budget.Accounts            # what reading each student's bytes may still cost, for the run

    def start(self, hide: tuple[str, ...], to_grade: int) -> Preflight | cf.Future:
        """Start the workers (the jail checked) for `to_grade` students and run the preflight (or
        start it: a Future of it, whose students' results ClassRun holds until it has passed);
        raise if they cannot grade."""

    def submit(self, student: Student) -> cf.Future:
        """Grade one student somewhere; the future's value goes to `receive`."""

    def receive(self, future: cf.Future, student: Student) -> tuple[SubmissionResult, bool]:
        """(result, trusted): an untrusted result (a grader failure) is not reused by the next run."""

    def close(self) -> None: ...


@dataclass
class ClassRun:
    class_dir: Path
    out: Path
    course: CourseConfig
    regrade: bool = False
    exports: tuple[str, ...] = ()
    layout: lms.Layout | str = lms.Layout.AUTO
    roster: list[Person] | None = None
    target: Target | None = None         # the LMS's column the exports write into
    overrides: Overrides | None = None   # the instructor's changes, merged at the end
    only: str | None = None              # `--student ID`: grade this one again, keep the others as OUT has them
    lateness: dict | None = None         # student id -> late_policy.Lateness (course.yml `late:`)
    on_result: OnResult | None = None
    on_start: Callable[[int], None] | None = None
    on_preflight: Callable[[Preflight], None] | None = None
    digests: dict[str, str] = field(default_factory=dict)
    unwritten: dict[str, SubmissionResult] = field(default_factory=dict)   # its file could not be written
    failures: list[BaseException] = field(default_factory=list)
    recorded: int = 0
    _preflight: cf.Future | None = None    # graded beside the first students (LocalGrading)
    _held: list = field(default_factory=list)    # their results, recorded once it has passed

    def run(self, grading: Grading) -> StoredResults:
        self.class_dir, self.out = Path(self.class_dir), Path(self.out)
        # Who each submission is, once, before anything is written (autograder/intake/identify.py).
        found = lms.read_class(self.class_dir, self.course.assignment, exclude=(self.out,), layout=self.layout)
        if self.roster is None and found.people is not None:     # the download names its students
            self.roster = list(found.people)
        self.class_list = identify(found.students, self.roster, not_read=found.not_read())
        refuse_unknown(self.class_list, self.course.variants.enabled, self.roster is not None)
        students = self.class_list.students
        _prepare(self.out)
        self.key = run_key(self.out)
        self._lock = threading.Lock()
        if self.only is not None:     # the others as OUT holds them (a student OUT has no result for is left out)
            students = [s for s in students if s.name == self.only or kept_result(self.out, s, self.key)]
        # Whose keys a hand answer is compared with (variants on): the class and the roster.
        self.classmates = (*(s.name for s in students), *(p.key for p in self.roster or ()))
        if self.on_start:
            self.on_start(len(students))
        todo = [item for item in self._reuse(students)]
        self.code, self.why_not_compared = class_code(self.course, grading.accounts)
        checked = Preflight(PreflightStatus.NOT_NEEDED)
        similar = None
        try:
            started = grading.start((str(self.class_dir.resolve()), str(self.out.resolve())), len(todo)) \
                if todo else checked
            if isinstance(started, cf.Future):     # graded beside the first students: theirs held
                self._preflight, self._held = started, []
            else:
                checked = started
                if self.on_preflight:
                    self.on_preflight(checked)
            self._grade(grading, iter(todo))
            self._settle_preflight(wait=True)
            checked = getattr(self, "_settled", None) or checked     # settled while grading, or now
            stored = StoredResults(self.out, [s.name for s in students], self.digests, self.unwritten)
            changed = set(stored.changed())      # a file rewritten by someone else: grade those again
            if changed:
                self._grade(grading, iter([(s, fingerprint(s, self.course)) for s in students if s.name in changed]))
                if stored.changed():
                    raise RuntimeError(f"result files in {self.out / 'results'} keep changing; is another run "
                                       f"writing there?")
            similar = class_similarity(students, stored, self.code, self.why_not_compared)
            self.code = None       # the fingerprints, held all run: freed before the reports are made
        finally:
            grading.close()
            # Always written, also when grading stopped: every student graded so far is in it.
            done = StoredResults(self.out, [s.name for s in students if s.name in self.digests], self.digests,
                                 self.unwritten)
            finish_run(self.out, done, self.course, exports=tuple(e for e in self.exports if e not in ZIPS),
                       enrolment=self.class_list.enrolment,
                       preflight=checked, similarity=similar, target=self.target, overrides=self.overrides,
                       regraded=self.only, lateness=self.lateness)
            for fmt in (e for e in self.exports if e in ZIPS):      # each student's page, for the LMS
                write_feedback_zip(self.out, fmt, {s.name: name for s in students if s.name in self.digests
                                                   and not s.claim_of and (name := entry_name(fmt, s))})
            bounded.stop()     # the helpers: nothing of the run is left running
        if self.failures:      # a file that could not be written: said after grades.csv holds every grade
            raise self.failures[0]
        return stored

    def _reuse(self, students: list[Student]) -> Iterator[tuple[Student, str]]:
        """The students to grade; a result that can be reused is taken on the way."""
        for student in students:
            fp = fingerprint(student, self.course)
            if self.only is not None and student.name != self.only:
                kept = kept_result(self.out, student, self.key)       # even from another kit or course
                if kept is None:
                    continue
                fp, previous = kept
            else:
                previous = None if self.regrade or student.name == self.only else \
                    load_previous(self.out, student, fp, self.key)
            if previous is None:
                yield student, fp
                continue
            text = result_text(previous, fp, self.course, self.key)
            _write_if_changed(feedback_path(self.out, student.name),
                              feedback_markdown(previous, self.course, self._shown(student.name),
                                                self._grade_of(previous)))
            try:
                same = result_path(self.out, student.name).read_text(encoding="utf-8") == text
            except (OSError, ValueError):
                same = False
            if not same:
                write_atomic(result_path(self.out, student.name), text)
            self.digests[student.name] = digest(text)
            if self.on_result:
                self.on_result(previous, True)

    def _grade(self, grading: Grading, todo: Iterator[tuple[Student, str]]) -> None:
        waiting: dict[cf.Future, tuple[Student, str]] = {}
        try:
            while True:
                while len(waiting) < max(1, grading.in_flight) and (item := next(todo, None)) is not None:
                    student, fp = item
                    if student.refused:     # a folder intake refused (a link): nothing to send
                        self.record(student, unanswered(student, self.course, student.refused, "refused"), fp)
                        continue
                    waiting[grading.submit(student)] = item
                if not waiting:
                    return
                finished, _ = cf.wait(list(waiting), timeout=0.2, return_when=cf.FIRST_COMPLETED)
                for future in finished:      # a timed wait keeps the main thread interruptible (Ctrl-C)
                    student, fp = waiting.pop(future)
                    result, trusted = grading.receive(future, student)
                    if self._preflight is not None:
                        self._held.append((student, result, fp if trusted else ""))
                    else:
                        self.record(student, result, fp if trusted else "")
                self._settle_preflight(wait=False)
        except BaseException:   # Ctrl-C or a failure here: what is written stays, the rest is dropped
            for future in waiting:
                future.cancel()
            raise

    def _settle_preflight(self, wait: bool) -> Preflight | None:
        """A preflight graded beside the first students, once done (or waited for): passed, the
        results held meanwhile are recorded; failed, it raises PreflightFailed and none is."""
        running = self._preflight
        if running is None or not (wait or running.done()):
            return None
        self._preflight = None
        held, self._held = self._held, []
        checked = self._settled = running.result()
        if self.on_preflight:
            self.on_preflight(checked)
        for student, result, fp in held:
            self.record(student, result, fp)
        return checked

    def record(self, student: Student, result: SubmissionResult, fp: str) -> None:
        result = flag_classmates(result, self.course, student.claim_of or student.name, getattr(self, "classmates", ()))
        if from_the_grader(result):      # stored without its fingerprint: the next run grades it again
            fp = ""
        try:
            text = result_text(result, fp, self.course, self.key)
        except Exception as err:  # noqa: BLE001 - a result that cannot be serialised is a grader error
            result = grader_failure(student, self.course, err)
            text = result_text(result, "", self.course, self.key)
        written = digest(text)
        with self._lock:
            self.digests[student.name] = written
        try:    # the feedback page, then the result (a rerun looks for the result)
            shown, grade = self._shown(student.name), self._grade_of(result)
            write_atomic(feedback_path(self.out, student.name), feedback_markdown(result, self.course, shown, grade))
            write_atomic(result_path(self.out, student.name), text)
            write_feedback_html(self.out, result, self.course, written, shown, grade)   # stamped as the end will
        except OSError as err:    # a full disk: the grade stays in grades.csv, the run goes on
            self.unwritten[student.name] = result
            self.failures.append(err)
        if self.on_result:
            self.on_result(result, False)
        self._read_code(student, result)
        self.recorded += 1

    def _grade_of(self, result: SubmissionResult):
        """The student's grade as the feedback says it: the late penalty, the gradebook's points."""
        return grade_of(result, self.course, (self.lateness or {}).get(result.student),
                        self.target.points if self.target is not None else None)

    def _shown(self, student: str) -> str:
        class_list: ClassList | None = getattr(self, "class_list", None)
        return class_list.shown(student) if class_list is not None else student

    def _read_code(self, student: Student, result: SubmissionResult) -> None:
        """The student's graded code, fingerprinted now, while the lanes' children run; whatever
        fails here is read again at the end."""
        code = getattr(self, "code", None)     # None before a run, or when the code is not compared
        if code is not None and not student.refused:
            try:
                code.add(student, result)
            except Exception:  # noqa: BLE001 - a signal, never a grade: the end tries again
                pass


def class_code(course: CourseConfig, accounts: budget.Accounts | None = None) -> tuple[ClassCode | None, str]:
    """The class's code, fingerprinted as it is graded (integrity/class_code.py, charged to each
    student's account of `accounts`), and ""; or None and why not, when the `integrity` extra
    (copydetect) is missing or the stubs cannot be read."""
    try:
        from autograder.integrity.class_code import ClassCode
    except ImportError as err:      # copydetect is the `integrity` extra
        return None, f"not compared: {err} (pip install 'attnkit[integrity]')"
    try:
        return ClassCode(tuple(course.exercises), accounts=accounts), ""
    except Exception as err:  # noqa: BLE001 - the grades never wait on the similarity signal
        return None, f"{type(err).__name__}: {str(err)[:300]}"


def class_similarity(students: list[Student], stored: StoredResults, code: ClassCode | None,
                     why_not: str = "") -> dict | None:
    """The code similarity across the class, from the code fingerprinted while it was graded and
    the graded files the stored results name (an instructor's signal: it changes no grade, and a
    failure of it never stops the run). `code` None: not compared, `why_not` says why."""
    if code is None:
        return {"pairs": [], "compared": {"error": why_not}}

    def result_of(name: str) -> SubmissionResult | None:
        return stored.load(name) if name in stored.digests or name in stored.held else None

    try:
        return code.compare(students, result_of)
    except Exception as err:  # noqa: BLE001 - the grades are written whatever happens here
        return {"pairs": [], "compared": {"error": f"{type(err).__name__}: {str(err)[:300]}"}}


def _write_if_changed(path: Path, text: str) -> None:
    try:
        if path.read_text(encoding="utf-8") == text:
            return
    except (OSError, ValueError):
        pass
    write_atomic(path, text)


def _prepare(out: Path) -> None:
    for folder in (out, out / "results", out / "feedback"):
        folder.mkdir(parents=True, exist_ok=True)
        try:   # never writable by anyone else (the sandbox's children run as other users)
            os.chmod(folder, os.stat(folder).st_mode & ~0o022)
        except OSError:
            pass
