"""The pytest face of the autograder: each check of course.yml is one test item.

`pytest autograder --submission DIR` runs the same rooms as `attnkit check`: the
submission is graded once per exercise in the sandbox, and each test reports its check's
result, with the grader's message instead of a traceback. A score table ends the run.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from autograder.config import DEFAULT_COURSE, ConfigError, load_course
from autograder.results import CheckResult, ExerciseResult

_STATE_KEY = pytest.StashKey["_Grader"]()


def pytest_addoption(parser: pytest.Parser) -> None:
    group = parser.getgroup("attnkit", "attnkit autograder")
    group.addoption("--submission", metavar="DIR", default=None,
                    help="folder with the exercise files to grade (default: exercises/; ini: attnkit_submission)")
    group.addoption("--course", metavar="FILE", default=None,
                    help="course file with points and limits (default: the kit's course.yml; ini: attnkit_course)")
    group.addoption("--student", metavar="ID", default=None,
                    help="grade against this student's variant (course.yml variants:; default: the student "
                         "a per-student handout records, else the course's own numbers)")
    parser.addini("attnkit_submission", "folder with the exercise files to grade", default="exercises")
    parser.addini("attnkit_course", "course file with points and limits", default=str(DEFAULT_COURSE))


def pytest_configure(config: pytest.Config) -> None:
    config.addinivalue_line("markers", "exercise(stem): the exercise a test grades")
    config.addinivalue_line("markers", "check(check_id): the course.yml check a test reports")
    config.stash[_STATE_KEY] = _Grader(config)


def pytest_unconfigure(config: pytest.Config) -> None:
    grader = config.stash.get(_STATE_KEY, None)
    if grader is not None:
        grader.close()


class _Grader:
    """Grades each exercise of the submission once, on first use, in the same grading session
    as `attnkit check` (autograder.grading.course_session: one course, one warm sandbox)."""

    def __init__(self, config: pytest.Config):
        self._config = config
        self._session = None
        self._course = None
        self.exercises: dict[str, ExerciseResult] = {}

    def _option(self, name: str) -> str:
        value = self._config.getoption(name.replace("attnkit_", ""), default=None)
        if value:
            return value
        return self._config.getini(name)

    @property
    def course(self):
        if self._course is None:
            from autograder.checks import check_ids

            source = self._option("attnkit_course")
            try:
                self._course = load_course(source, known_checks=check_ids())
            except ConfigError as err:
                raise pytest.UsageError(f"--course / attnkit_course ({source}): {err}") from None
        return self._course

    def submission(self) -> Path:
        folder = Path(self._option("attnkit_submission"))
        if not folder.is_dir():
            raise pytest.UsageError(f"--submission / attnkit_submission: {folder} is not a folder")
        return folder

    def exercise(self, stem: str) -> ExerciseResult:
        if stem not in self.exercises:
            from autograder.grading.course_session import GradingSession

            if self._session is None:
                from autograder.variants.identity import recorded_identity

                identity = self._config.getoption("student", default=None) or recorded_identity(self.submission())
                self._session = GradingSession(self.course, identity=identity)
            self.exercises[stem] = self._session.grade_exercise(self.submission(), stem)
        return self.exercises[stem]

    def result(self, check_id: str) -> CheckResult:
        stem = check_id.split(".", 1)[0]
        return next(c for c in self.exercise(stem).checks if c.check_id == check_id)

    def close(self) -> None:
        if self._session is not None:
            self._session.close()
            self._session = None


@pytest.fixture
def graded(request: pytest.FixtureRequest) -> _Grader:
    return request.config.stash[_STATE_KEY]


def assert_check(grader: _Grader, check_id: str) -> None:
    """Fail the test with the grader's words, not a traceback; a hidden check as `attnkit check`
    shows it (that it failed, its details only with ``show_hidden``)."""
    result = grader.result(check_id).for_student(grader.course.show_hidden)
    if result.passed:
        return
    text = f"[{result.status}] {result.title}\n{result.message}"
    if result.hint:   # a hidden check's hint names no hidden input
        text += f"\nhint: {result.hint}"
    if result.misconceptions and not result.concealed:
        text += f"\nmisconception: {', '.join(result.misconceptions)}"
    pytest.fail(text, pytrace=False)


def pytest_terminal_summary(terminalreporter, exitstatus, config: pytest.Config) -> None:
    grader = config.stash.get(_STATE_KEY, None)
    if grader is None or not grader.exercises:
        return
    tr = terminalreporter
    tr.section("attnkit score")
    total = top = 0.0
    for stem, ex in grader.exercises.items():
        tr.write_line(f"{stem:<18} {ex.score:>5g} / {ex.max_score:<5g} ({ex.graded_file or 'no file'})")
        total += ex.score
        top += ex.max_score
    tr.write_line(f"{'total':<18} {total:>5g} / {top:<5g}   seed {grader.course.seed}")
