"""A progress bar for a class run, shown only on a terminal."""

from __future__ import annotations

from rich.console import Console
from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeRemainingColumn

from autograder.results import SubmissionResult


class ClassProgress:
    def __init__(self, console: Console):
        self._progress = Progress(TextColumn("grading"), BarColumn(), MofNCompleteColumn(), TimeRemainingColumn(),
                                  TextColumn("{task.fields[last]}"), console=console, transient=True,
                                  disable=not console.is_terminal)
        self._task = None

    def __enter__(self):
        self._progress.__enter__()
        return self

    def __exit__(self, *exc):
        return self._progress.__exit__(*exc)

    def start(self, total: int) -> None:
        self._task = self._progress.add_task("grading", total=total, last="")

    def advance(self, result: SubmissionResult, reused: bool) -> None:
        if self._task is not None:
            last = f"{result.student} {result.score:g}/{result.max_score:g}" + (" (kept)" if reused else "")
            self._progress.update(self._task, advance=1, last=last)
