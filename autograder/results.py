"""Results as data: one CheckResult per check, added up in one place (SubmissionResult)."""

from __future__ import annotations

import json
import os
import secrets
from dataclasses import dataclass, fields, is_dataclass, replace
from enum import Enum
from pathlib import Path
from typing import Iterable, Iterator, Literal

from autograder.judge import points

# passed: full points. failed: the answer is wrong. error: the code raised, hung or crashed.
# not_implemented: the stub is untouched. missing: no file for this exercise.
Status = Literal["passed", "failed", "error", "not_implemented", "missing"]

# What a student sees of a hidden check while course.yml has `show_hidden: false`, said the same
# way by every output (terminal, feedback pages, Gradescope, pytest, nbgrader cells) and the docs.
HIDDEN_CHECK_NOTE = "A hidden check: its title is shown, its message is not."

# CheckResult.matches_key_of for a hand answer that is the key of the course's own (published) numbers.
PUBLISHED_NUMBERS = "(the course's published numbers)"


class Why(str, Enum):
    """CheckResult.reason: why a check's code gave no usable answer. A str, so results stay JSON
    as before; a value that is not one of these is refused where a result is made or read."""
    none = ""                         # it answered (passed, or a wrong answer)
    timeout = "timeout"               # the sandbox's statuses for a call ...
    crashed = "crashed"
    raised = "raised"
    not_run = "not_run"               # ... the file could not be run (its import failed)
    bad_return = "bad_return"
    missing = "missing"               # no such function, or no file
    not_implemented = "not_implemented"   # a stub: raises NotImplementedError or does nothing
    refused = "refused"               # a link out of the folder, or a provided call above the bounds
    load_error = "load_error"         # the file could not be read
    grader_error = "grader_error"     # the grader failed (not the student's fault)
    nothing_gradable = "nothing_gradable"   # files were handed in, none gradable

    __hash__ = str.__hash__           # looked up by its value in tables keyed by strings

    def __str__(self) -> str:
        return self.value

    __format__ = str.__format__


_CALL_FAILURES = frozenset({Why.timeout, Why.crashed, Why.raised, Why.bad_return})


@dataclass(frozen=True)
class CheckResult:
    """One check's result: its status, score, message and hint."""
    check_id: str
    exercise: str
    title: str
    status: Status
    score: float
    max_score: float
    message: str = ""
    hint: str = ""
    misconceptions: tuple[str, ...] = ()
    hidden: bool = False
    # Why the code gave no answer, when it did not (typed: a string given here must be a Why).
    reason: Why = Why.none
    # Small data for a picture on the feedback page (autograder.reports.pictures): the student's
    # and the expected attention weights, or scaling curves. None for most checks.
    visual: dict | None = None
    # True in a student's view of a hidden check (for_student): its message is HIDDEN_CHECK_NOTE.
    concealed: bool = False
    # With variants (autograder/variants): a failed hand answer as the student typed it, for the
    # class's integrity pass; and whose key it is instead of the student's own, when it is another's
    # ("" none; a student's id, shown to the instructor only; PUBLISHED_NUMBERS).
    answer: list | None = None
    matches_key_of: str = ""

    def __post_init__(self):
        object.__setattr__(self, "reason", Why(self.reason or ""))

    def for_student(self, show_hidden: bool) -> CheckResult:
        """What a student may see of this check, decided here for every output. A hidden check
        (unless the course shows hidden details) is `concealed`: its misconception ids are not
        shown (they stay, so that it is still told with the visible checks of the same mistake);
        when its message may tell something of its inputs, the message becomes HIDDEN_CHECK_NOTE
        and its picture goes. Its title, status, points and hint stay (grading made that hint for
        it: it names no hidden input)."""
        if not self.hidden or show_hidden:
            return self
        if self.ran_on_its_inputs:
            return replace(self, message=HIDDEN_CHECK_NOTE, visual=None, concealed=True)
        return replace(self, concealed=True)

    @property
    def passed(self) -> bool:
        return self.status == "passed"

    @property
    def ran_on_its_inputs(self) -> bool:
        """Whether its message may tell something of the check's inputs: a wrong answer, or an
        error of the call itself (not a missing file, a stub or an import that failed for all)."""
        return self.status == "failed" or (self.status == "error" and self.reason in _CALL_FAILURES)


@dataclass(frozen=True)
class ExerciseResult:
    """One exercise's result: its checks' results, the file graded and what intake did."""
    stem: str
    title: str
    checks: tuple[CheckResult, ...]
    graded_file: str | None = None  # which file was graded ("attention.ipynb"), None when missing
    note: str = ""                  # e.g. "Attention.py was graded as attention.py"
    flags: tuple[str, ...] = ()     # autograder.intake.files.Flag values: what intake did (for the class report)

    def for_student(self, show_hidden: bool) -> ExerciseResult:
        return replace(self, checks=tuple(c.for_student(show_hidden) for c in self.checks))

    def note_without(self, shared: str) -> str:
        """The note but `shared` (the note every exercise carries, said once for the submission)."""
        return self.note[len(shared):].lstrip("; ") if shared and self.note.startswith(shared) else self.note

    @property
    def handed_in(self) -> bool:
        """Whether the student handed this exercise in: a check with a status other than "missing"."""
        return not self.checks or any(c.status != "missing" for c in self.checks)

    @property
    def score(self) -> float:
        return points.added(c.score for c in self.checks)

    @property
    def max_score(self) -> float:
        return sum(c.max_score for c in self.checks)


@dataclass(frozen=True)
class SubmissionResult:
    """One submission's result: every exercise's, with the seed its inputs came from."""
    student: str
    exercises: tuple[ExerciseResult, ...]
    seed: int
    assignment: str = "self_attention"
    duration_s: float = 0.0

    @property
    def score(self) -> float:
        return sum(e.score for e in self.exercises)

    @property
    def max_score(self) -> float:
        return sum(e.max_score for e in self.exercises)

    def shared_note(self) -> str:
        """The leading part of the notes every exercise with a note carries ("; "-separated), when
        there are several: what intake did to the whole submission (a folder nested deeper, an
        archive unpacked), which every page says once, not once per exercise (an exercise not
        handed in has no note)."""
        parts = [ex.note.split("; ") for ex in self.exercises if ex.note]
        if len(parts) < 2:
            return ""
        common = []
        for segments in zip(*parts):
            if any(s != segments[0] for s in segments):
                break
            common.append(segments[0])
        return "; ".join(common)

    def exercise(self, stem: str) -> ExerciseResult:
        return next(e for e in self.exercises if e.stem == stem)

    @property
    def checks(self) -> list[CheckResult]:
        return [c for e in self.exercises for c in e.checks]

    def for_student(self, show_hidden: bool) -> SubmissionResult:
        """The result as a student may see it (CheckResult.for_student): what every renderer shows."""
        return replace(self, exercises=tuple(e.for_student(show_hidden) for e in self.exercises))

    def to_dict(self) -> dict:
        return _plain(self) | {"score": self.score, "max_score": self.max_score}

    @classmethod
    def from_dict(cls, data: dict) -> "SubmissionResult":
        exercises = tuple(
            ExerciseResult(
                stem=e["stem"], title=e["title"], graded_file=e.get("graded_file"), note=e.get("note", ""),
                flags=tuple(e.get("flags", ())),
                checks=tuple(CheckResult(**(c | {"misconceptions": tuple(c.get("misconceptions", ()))}))
                             for c in e["checks"]),
            )
            for e in data["exercises"]
        )
        return cls(student=data["student"], exercises=exercises, seed=data["seed"],
                   assignment=data.get("assignment", "self_attention"), duration_s=data.get("duration_s", 0.0))


def _plain(value):
    """dataclasses.asdict, without its deep copy of every value: below their dataclasses, results
    hold only JSON's immutable values, lists, tuples and dicts (a picture's curves are thousands of
    numbers, which asdict would copy one by one for every result)."""
    if value is None or isinstance(value, (str, int, float)):
        return value
    if is_dataclass(value):
        return {f.name: _plain(getattr(value, f.name)) for f in fields(value)}
    if isinstance(value, (list, tuple)):
        return type(value)(_plain(v) for v in value)
    if isinstance(value, dict):
        return {_plain(k): _plain(v) for k, v in value.items()}
    raise TypeError(f"a result holds a {type(value).__name__}, not plain data")


def write_atomic(path: Path, text: str | Iterable[str]) -> None:
    """Write a file so that a reader (or a crash) sees the old content or the new, never half.
    `text`: the content, or its pieces in order (a large report is written as it is made, never
    held whole). The file's mode follows the umask, as a Unix tool's output does (mkstemp's 0600
    would not): a course that wants OUT private sets its umask or OUT's mode."""
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = _create_beside(path)
    try:
        with os.fdopen(fd, "w", encoding="utf-8") as fh:
            if isinstance(text, str):
                fh.write(text)
            else:
                for piece in text:
                    fh.write(piece)
            fh.flush()
            os.fsync(fh.fileno())
        os.replace(tmp, path)
    except BaseException:
        tmp.unlink(missing_ok=True)
        raise


def _create_beside(path: Path) -> tuple[int, Path]:
    """A new temporary file beside `path`, created 0666 so the kernel applies the umask; its
    name unguessable and O_EXCL | O_NOFOLLOW, so nothing placed there beforehand is written."""
    flags = os.O_WRONLY | os.O_CREAT | os.O_EXCL | getattr(os, "O_NOFOLLOW", 0) | getattr(os, "O_CLOEXEC", 0)
    for _ in range(100):
        tmp = path.with_name(f".{path.name}.{secrets.token_hex(8)}.tmp")
        try:
            return os.open(tmp, flags, 0o666), tmp
        except FileExistsError:
            continue
    raise FileExistsError(f"{path.parent}: no free temporary name for {path.name}")


def dumps(data) -> str:
    """JSON read a line at a time: each key of the top-level object on a line of its own, each
    item of a list there too, the rest compact. Each piece is written by json's C encoder; an
    indented dump takes its pure-Python one, much slower on a summary whose similar pairs
    carry their code."""
    return "".join(dump_lines(data))


def dump_lines(data) -> Iterator[str]:
    """`dumps`, a line at a time (a class's summary is written as made, not held whole)."""
    if not isinstance(data, dict) or not data:
        yield json.dumps(data, allow_nan=False, default=_as_json) + "\n"
        return
    yield "{\n"
    for k, (key, value) in enumerate(data.items()):
        yield f"  {json.dumps(str(key))}: "
        if isinstance(value, list) and value:
            yield "[\n"
            for i, item in enumerate(value):
                yield f"    {json.dumps(item, allow_nan=False, default=_as_json)}{',' if i < len(value) - 1 else ''}\n"
            yield "  ]"
        else:
            yield json.dumps(value, allow_nan=False, default=_as_json)
        yield ",\n" if k < len(data) - 1 else "\n}\n"


def _as_json(value):
    """json's `default`: an object held in a compact form (the summary's rows) says how it is
    written, with its `to_dict`."""
    to_dict = getattr(value, "to_dict", None)
    if to_dict is None:
        raise TypeError(f"Object of type {type(value).__name__} is not JSON serializable")
    return to_dict()
