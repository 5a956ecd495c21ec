"""The grader's failed checks grouped by cause, for every page that tells them (terminal, Markdown
and HTML feedback, Gradescope, nbgrader's cell): the grouping is autograder/judge/causes.py's,
the one check.py ships, fed with the checks as the student may see them.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Iterable

from autograder.diagnosis.advice import GENERIC_HINT
from autograder.judge.answers import GENERIC_ERROR_HINT
from autograder.judge.causes import Cause, Failure, group_causes
from autograder.results import CheckResult

# Hints given whatever the mistake: several checks' messages are told under one of them.
ADVICE = (GENERIC_HINT, GENERIC_ERROR_HINT)


@dataclass(frozen=True)
class Told:
    """One cause of an exercise's failed checks, with the grader's results of its checks."""
    cause: Cause
    results: dict[str, CheckResult]        # by check id

    @property
    def checks(self) -> tuple[CheckResult, ...]:
        """Its checks, those whose message is their own first (CheckResult.concealed)."""
        return tuple(self.results[f.id] for f in self.cause.checks)

    @property
    def first(self) -> CheckResult:
        return self.results[self.cause.first.id]

    @property
    def others(self) -> tuple[CheckResult, ...]:
        return self.checks[1:]

    @property
    def evidence(self) -> tuple[tuple[tuple[CheckResult, ...], str], ...]:
        """Every check with what its message says beyond the cause's (Cause.evidence)."""
        return tuple((tuple(self.results[f.id] for f in failures), text) for failures, text in self.cause.evidence)


def failure(check: CheckResult) -> Failure:
    # A hidden check's message is a stand-in only where it would tell of its inputs (for_student).
    stand_in = check.concealed and check.ran_on_its_inputs
    return Failure(check.check_id, check.status, check.message, check.hint, check.misconceptions, stand_in,
                   check.title)


def causes(checks: Iterable[CheckResult]) -> list[Told]:
    """The checks that did not pass, grouped by cause, in the order each cause's first check is
    graded. Give them as the student may see them (CheckResult.for_student)."""
    failed = [c for c in checks if not c.passed]
    results = {c.check_id: c for c in failed}
    return [Told(cause, {f.id: results[f.id] for f in cause.checks})
            for cause in group_causes((failure(c) for c in failed), ADVICE)]
