"""A class's results read back from OUT/results one at a time, so a run of thousands of
students does not hold them all while it grades: a Sequence for the end-of-run reports
(finish_run, the summary, the gradebook), checked against the digests the client kept of what
it wrote."""

from __future__ import annotations

import hashlib
import json
from collections.abc import Iterator, Sequence
from pathlib import Path

from autograder.grading.student import result_path
from autograder.results import SubmissionResult


def digest(text: str) -> str:
    return hashlib.sha256(text.encode("utf-8", "surrogateescape")).hexdigest()


class ResultChanged(RuntimeError):
    """A result file no longer says what the grader wrote (nobody else may write OUT)."""


class StoredResults(Sequence):
    """Results of `names` (in that order) as written in OUT; `digests` holds what was written."""

    def __init__(self, out: Path, names: list[str], digests: dict[str, str],
                 held: dict[str, SubmissionResult] | None = None):
        # held: results whose file could not be written (a full disk): still in grades.csv
        self.out, self.names, self.digests, self.held = Path(out), list(names), digests, held or {}

    def __len__(self) -> int:
        return len(self.names)

    def __getitem__(self, index):
        if isinstance(index, slice):
            return [self[i] for i in range(*index.indices(len(self)))]
        return self.load(self.names[index])

    def in_order(self) -> Iterator[tuple[SubmissionResult, str]]:
        """Each result once, by student name (grades_csv.ordered's order), with the digest of the
        text it was read from: what finish_run stamps a feedback page with, instead of writing the
        result out again to hash it."""
        for name in sorted(self.names):
            yield self.load(name), self.digests[name]

    def load(self, name: str) -> SubmissionResult:
        if name in self.held:
            return self.held[name]
        text = self.text(name)
        if text is None:
            raise ResultChanged(f"{result_path(self.out, name)} changed after it was written; grade again")
        return SubmissionResult.from_dict(json.loads(text)["extra_data"]["result"])

    def text(self, name: str) -> str | None:
        """The file's text when it is what was written, else None."""
        try:
            text = result_path(self.out, name).read_text(encoding="utf-8")
        except (OSError, ValueError):
            return None
        return text if digest(text) == self.digests.get(name) else None

    def changed(self) -> list[str]:
        """Students whose result file differs from what was written."""
        return [n for n in self.names if n not in self.held and self.text(n) is None]
