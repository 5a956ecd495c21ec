"""The code each student of a class was graded on, fingerprinted for the similarity signal
(integrity/similarity.py). In a class run, the child that reads a submission for grading
fingerprints it too (`read_prints_here`, the Accounts' reader) and the fingerprints wait in the
student's account until the run records the student (ClassCode.add): nothing is read twice. A
file that child did not fingerprint (a result reused from an earlier run, a candidate grading
chose among several) is read again here, and so is a listed pair's, for its excerpt.

The file is the one the stored result names (`ExerciseResult.graded_file`): the kept form when
both a .py and a notebook held work, the better candidate when several names could be the
exercise's. It is read the way grading read it: the folder opened without following links
(intake.students.open_confined), uploads and archives staged (intake/staging.py), the kit's loader
(autograder/intake/load.py) turning a notebook into its code cells. Nothing is executed, and the
grader's process parses none of it: a student's files are read and fingerprinted in a bounded
child charged to that student (intake/bounded.py; its operations: integrity/prints_helper.py),
which answers the fingerprints as .npy arrays.
"""

from __future__ import annotations

import concurrent.futures
import os
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass, field, replace
from pathlib import Path

from autograder.sandbox import helper_process
from autograder.intake import bounded, budget, staging
from autograder.intake.scratch import scratch_folder
from autograder.integrity.made import Made, made_from, made_here
from autograder.judge.threads import usable_cores
from autograder.intake.load import LoadError, SourceFile, loaded_here, source_from_bytes
from autograder.results import SubmissionResult
from autograder.intake.students import Student, open_confined

HELPER = helper_process.Helper("autograder.integrity.prints_helper")


@dataclass
class Reading:
    """What was read: the code, and the students whose files could not be read again."""
    unread: list[str] = field(default_factory=list)


def graded_code(students: Iterable[Student], result_of: Callable[[str], SubmissionResult | None],
                exercises: Iterable[str], reading: Reading | None = None, stubs: dict[str, str] | None = None,
                accounts: budget.Accounts | None = None) -> Iterator[Made]:
    """Each student's graded code for each of `exercises` that the result names a file for,
    fingerprinted against `stubs` (default: the kit's), read in a bounded child charged to the
    student's account (`accounts`; default: a fresh one each)."""
    exercises = tuple(exercises)
    stubs = kit_stubs(exercises) if stubs is None else stubs
    reading = reading if reading is not None else Reading()
    for student in students:
        if student.refused:
            continue
        try:
            result = result_of(student.name)
            if result is None:
                continue
            wanted = {e.stem: e.graded_file for e in result.exercises if e.graded_file and e.stem in exercises}
            if wanted:
                account = accounts.of(student.name) if accounts is not None else budget.Account()
                yield from (made for made, _ in _read(student, wanted, stubs, account))
        except Exception:  # noqa: BLE001 - a folder changed or gone since grading: left out, said
            reading.unread.append(student.name)


def _read(student: Student, wanted: dict[str, str], stubs: dict[str, str], account: budget.Account,
          details: bool = False) -> list:
    """[(Made, details or None)] of `student`'s files `wanted` (stem -> graded file)."""
    fd = open_confined(student.folder)
    try:
        folder = Path(f"/proc/self/fd/{fd}") if Path(f"/proc/self/fd/{fd}").is_dir() else student.folder
        where, fds = bounded.folder_arg(folder)
        with scratch_folder() as tmp, budget.charging(account):
            answer = bounded.run("prints", [where, [list(u) for u in student.uploads], tmp, student.name, wanted,
                                            {stem: stubs.get(stem, "") for stem in wanted}, details],
                                 fds=fds, item=False, helper=HELPER)
        try:
            return [made_from(plain) for plain in answer]
        except (TypeError, ValueError, AttributeError) as err:
            raise bounded.ParserUnavailable(f"the reader gave an answer that is not one ({err})") from None
    finally:
        os.close(fd)


def prints_here(where, uploads: list, tmp: str, student: str, wanted: dict[str, str], stubs: dict[str, str],
                details: bool) -> list[dict]:
    """What `_read` runs in its child: the files staged and read as grading read them, and each
    wanted one fingerprinted (made.made_here)."""
    folder, _notes, _uploaded = staging.stage(Path(bounded.folder_of(where)), [tuple(u) for u in uploads], tmp,
                                               tuple(wanted))
    loaded = loaded_here(folder, tuple(wanted))
    found = []
    for stem, filename in wanted.items():
        source = _source(loaded[stem], filename, folder, stem)
        if source is not None:
            found.append(made_here(student, stem, filename, str(source), stubs[stem], details))
    return found


def read_prints_here(where, uploads: list, tmp: str, stems: list[str], stubs: dict[str, str]) -> dict:
    """Grading's reading (staging.read_here) with each loaded file of `stubs`' exercises
    fingerprinted in the same child (`more`, made.made_here's; the student named by the
    grader): a class run's similarity pass then reads nothing again."""
    answer, _folder, loaded = staging.loaded_here(where, uploads, tmp, stems)
    answer["more"] = _fingerprinted({stem: found for stem in stubs if isinstance(found := loaded.get(stem), SourceFile)},
                                    stubs)
    return answer


# The CPU time grading's reading child spends on fingerprints at most (an honest submission's take
# a few ms): past it, or on any error, the rest are left to the similarity pass's own child, so
# code that is costly to fingerprint never costs a grade.
FINGERPRINT_CPU_SECONDS = 2.0


class _TooLong(BaseException):      # not an error of one file: the time for all is spent
    pass


def _fingerprinted(loaded: dict[str, SourceFile], stubs: dict[str, str]) -> list[dict]:
    """similarity.made_here of each loaded file, within FINGERPRINT_CPU_SECONDS of this process's
    CPU time; those it could not make are left out."""
    import signal

    def too_long(*_):
        raise _TooLong()

    made: list[dict] = []
    before = signal.signal(signal.SIGVTALRM, too_long)
    signal.setitimer(signal.ITIMER_VIRTUAL, FINGERPRINT_CPU_SECONDS)
    try:
        for stem, found in loaded.items():
            try:
                made.append(made_here("", stem, found.filename, str(found.source), stubs[stem], False))
            except Exception:  # noqa: BLE001 - left to the similarity pass's own child
                continue
    except _TooLong:
        pass
    finally:
        signal.setitimer(signal.ITIMER_VIRTUAL, 0)
        signal.signal(signal.SIGVTALRM, before)
    return made


def _made_in_grading(student: Student, wanted: dict[str, str], made: tuple) -> list[Made] | None:
    """The fingerprints of `wanted` (stem -> graded file) that grading's reading made (`made`, its
    answer's data), or None when one is missing (the graded file is another form or candidate)."""
    found = {}
    for plain in made:
        try:
            one, _ = made_from(plain)
        except (TypeError, ValueError, AttributeError):
            return None
        found[one.exercise, one.file] = replace(one, student=student.name)
    kept = [found.get((stem, file)) for stem, file in wanted.items()]
    return None if None in kept else kept


def _source(loaded: SourceFile | LoadError, filename: str, folder: Path, stem: str) -> str | None:
    """The source of `filename`: the loaded file, its other form, or one of several candidates."""
    from autograder.intake.files import candidates   # the function (autograder.intake.candidates is a module)

    if isinstance(loaded, SourceFile):
        for form in (loaded, loaded.alternative):
            if form is not None and form.filename == filename:
                return form.source
    for found in candidates(folder, stem):
        if found.relpath == filename:
            source = source_from_bytes(found.data, found.relpath, found.suffix, stem)
            return None if isinstance(source, LoadError) else source
    return None


PAIRS_LISTED = 100      # the most alike pairs kept in summary.json and report.html
COPIES_READ_KEPT = 64   # texts read again for excerpts, remembered for the copies of them


def kit_stubs(exercises: Iterable[str]) -> dict[str, str]:
    """The code the kit's stubs give (exercises/<stem>.py, what `attnkit build` writes)."""
    from autograder.config import KIT_DATA

    stubs = {}
    for stem in exercises:
        try:
            stubs[stem] = (KIT_DATA / "exercises" / f"{stem}.py").read_text(encoding="utf-8")
        except OSError:
            continue
    return stubs


class ClassCode:
    """The class's graded code, fingerprinted as each student is recorded (`add`, by a class run
    while its lanes grade the next ones) instead of all read again at the end (the end
    runs on one core). `compare` reads only the students `add` did not see: results reused from an
    earlier run, and any whose files could not be read then."""

    def __init__(self, exercises: Iterable[str], stubs: dict[str, str] | None = None,
                 accounts: budget.Accounts | None = None):
        from autograder.checks.contract import RETURNS
        from autograder.integrity import similarity

        self.stubs = kit_stubs(exercises) if stubs is None else stubs
        self.accounts = accounts
        self.compared = similarity.compared_exercises(self.stubs, RETURNS) if self.stubs else []
        if accounts is not None and self.compared:     # grading's reading child fingerprints them too
            accounts.reader = staging.Reader(HELPER, "read_prints", ({e: self.stubs[e] for e in self.compared},))
        # The class's files are not held: a listed pair's are read again for its excerpts. Held, even
        # compressed, a large class's files were a large part of the grader's peak memory.
        self.prints = similarity.ClassPrints({e: self.stubs[e] for e in self.compared}, reread=self._reread,
                                             details=self._details)
        self.seen: set[str] = set()      # students added (their code read, or nothing to read)
        self.read: set[str] = set()      # students whose code was read
        self.folders: dict[str, Student] = {}
        self._copies_read: dict[tuple[str, bytes], tuple] = {}    # (exercise, digest) -> details, as graded

    def add(self, student: Student, result: SubmissionResult) -> None:
        """`student`'s graded code, as `result` names it (again, if added before)."""
        self.folders[student.name] = student
        self.prints.drop(student.name)
        self.seen.discard(student.name)
        self.read.discard(student.name)
        reading = Reading()
        code = self._made_in_grading(student, result)
        if code is None:
            code = list(graded_code([student], lambda name: result, self.compared, reading, self.stubs,
                                    self.accounts))
        if reading.unread:       # left for the end, which says so if it cannot read them either
            return
        try:
            self.prints.add(code)
        except BaseException:
            self.prints.drop(student.name)     # all of a student or nothing: the end reads them again
            raise
        self.seen.add(student.name)
        self.read.update(c.student for c in code)

    def _made_in_grading(self, student: Student, result: SubmissionResult) -> list[Made] | None:
        """The student's fingerprints as grading's reading made them (taken from their account), or
        None: they are read again."""
        if self.accounts is None:
            return None
        account = self.accounts.of(student.name)
        made, account.made = account.made, ()
        wanted = {e.stem: e.graded_file for e in result.exercises if e.graded_file and e.stem in self.compared}
        return _made_in_grading(student, wanted, made)

    def compare(self, students: list[Student], result_of: Callable[[str], SubmissionResult | None]) -> dict:
        """The similarity section of summary.json: the most alike pairs (`pairs`, ranked) and what
        was compared (`compared`)."""
        from autograder.integrity import similarity

        if not self.stubs:     # without the stubs, the code they give would count as the students'
            return {"pairs": [], "compared": {"error": "no stubs in the kit's exercises/ folder (attnkit build writes them)"}}
        reading = Reading()
        self._copies_read = {}      # this pass's: a file gone since an earlier pass shows no excerpt
        unseen = [s for s in students if s.name not in self.seen]
        self.folders.update((s.name, s) for s in unseen)
        code = (self.read.add(c.student) or c
                for c in graded_code(unseen, result_of, self.compared, reading, self.stubs, self.accounts))
        stubs = {e: self.stubs[e] for e in self.compared}
        pairs, found = similarity.similar_pairs(code, stubs, limit=PAIRS_LISTED, made=self.prints)
        graded = {s.name for s in students}
        lines: dict = {}      # excerpt lines shared by the listed pairs
        return {"pairs": [p.to_dict(lines) for p in pairs],
                "compared": {"exercises": self.compared, "submissions": len(self.read & graded),
                             "pairs_found": found, "pairs_listed": len(pairs),
                             "unread": reading.unread, "similar": similarity.SIMILAR,
                             "min_shared_fingerprints": similarity.MIN_SHARED}}

    def _reread(self, p) -> str | None:
        """A listed side's file, read again as grading read it (None: it cannot be)."""
        found = self._details([p])[0]
        return found[0] if found is not None else None

    def _details(self, sides: list) -> list:
        """Each listed side's (source, its tokens' lines, fingerprint), read again as grading read it
        and fingerprinted in bounded children (None: it cannot be read). One child per student for
        all of theirs, the students side by side on the machine's cores; a text several handed in
        is read once, and shared only where the text read again is the one they were graded on."""
        unread = [p for p in sides if (p.exercise, p.digest) not in self._copies_read]
        first = {}
        for p in unread:
            first.setdefault((p.exercise, p.digest), p)
        found = self._read_again(list(first.values()))
        again = [p for p in unread if (p.student, p.exercise) not in found
                 and (p.exercise, p.digest) not in self._copies_read]
        found.update(self._read_again(again))
        return [found[(p.student, p.exercise)][1] if (p.student, p.exercise) in found
                else self._copies_read.get((p.exercise, p.digest)) for p in sides]

    def _read_again(self, sides: list) -> dict:
        """{(student, exercise): (digest read, details)} of `sides` that could be read, one child per
        student; a text read as it was graded is remembered for the copies of it."""
        by_student: dict[str, dict[str, str]] = {}
        for p in sides:
            if p.student in self.folders:
                by_student.setdefault(p.student, {})[p.exercise] = p.file
        if not by_student:
            return {}
        graded = {(p.student, p.exercise): p.digest for p in sides}
        found = {}
        with concurrent.futures.ThreadPoolExecutor(min(len(by_student), usable_cores())) as pool:
            for student, answer in zip(by_student, pool.map(self._read_student, by_student, by_student.values())):
                for made, details in answer:
                    found[(student, made.exercise)] = (made.digest, details)
                    if details is not None and graded.get((student, made.exercise)) == made.digest:
                        self._copies_read[(made.exercise, made.digest)] = details
        while len(self._copies_read) > COPIES_READ_KEPT:
            self._copies_read.pop(next(iter(self._copies_read)))
        return found

    def _read_student(self, name: str, wanted: dict[str, str]) -> list:
        account = self.accounts.of(name) if self.accounts is not None else budget.Account()
        try:
            return _read(self.folders[name], wanted, self.stubs, account, details=True)
        except Exception:  # noqa: BLE001 - gone or changed since: the pair is listed without its excerpt
            return []


def compare_class(students: list[Student], result_of: Callable[[str], SubmissionResult | None],
                  exercises: Iterable[str], stubs: dict[str, str] | None = None,
                  accounts: budget.Accounts | None = None) -> dict:
    """The similarity section of summary.json, every student's code read now."""
    return ClassCode(exercises, stubs, accounts).compare(students, result_of)
