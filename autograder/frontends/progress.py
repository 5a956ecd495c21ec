"""A progress bar for a class run, shown only on a terminal, and the counts behind it; a plain
one for other work done student by student (the handouts)."""

from __future__ import annotations

import contextlib
import threading
from collections.abc import Callable, Iterator

from rich.console import Console
from rich.markup import escape
from rich.progress import (BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn,
                           TimeRemainingColumn)

from autograder.results import SubmissionResult
from autograder.judge.words import counted


class ClassProgress:
    """`start(total)` then `advance(result, reused)` once per student (from any worker thread)."""

    def __init__(self, console: Console):
        self._progress = _bar(console, "grading")
        self._task = None
        self._lock = threading.Lock()
        self.total = self.graded = self.kept = 0

    def __enter__(self):
        self._progress.__enter__()
        return self

    def __exit__(self, *exc):
        return self._progress.__exit__(*exc)

    def start(self, total: int) -> None:
        self.total = total
        self._task = self._progress.add_task("grading", total=total, last="")

    def advance(self, result: SubmissionResult, reused: bool) -> None:
        with self._lock:
            if reused:
                self.kept += 1
            else:
                self.graded += 1
        if self._task is not None:
            last = escape(f"{result.student} {result.score:g}/{result.max_score:g}" + (" (kept)" if reused else ""))
            self._progress.update(self._task, advance=1, last=last)

    def describe(self) -> str:
        """"graded 12, kept 30 from an earlier run" (for the line after the bar)."""
        text = f"graded {self.graded} of {counted(self.total, 'submission')}"
        if self.kept:
            text += f"; {self.kept} unchanged since an earlier run were kept (--regrade grades them again)"
        return text


@contextlib.contextmanager
def counting_bar(console: Console, label: str, total: int) -> Iterator[Callable[[str], None]]:
    """A bar of `total` steps on a terminal (nothing elsewhere); yields `advance(last)`, called once
    per step with what was just done."""
    progress = _bar(console, label)
    with progress:
        task = progress.add_task(label, total=total, last="")
        yield lambda last: progress.update(task, advance=1, last=escape(last))


def _bar(console: Console, label: str) -> Progress:
    """The bar, its count, the time taken and left, and what was done last; on a terminal only."""
    return Progress(TextColumn(label), BarColumn(), MofNCompleteColumn(), TimeElapsedColumn(), TextColumn("eta"),
                    TimeRemainingColumn(), TextColumn("{task.fields[last]}"), console=console, transient=True,
                    disable=not console.is_terminal)
