"""`attnkit check --watch`: grade once, then re-grade each exercise whose file is saved.

The grading session (course, warm sandbox) stays up between saves, so a re-grade costs the
exercise's own checks. Saves are noticed with watchfiles (inotify on Linux), not by polling.
After each re-grade it prints what changed since the last run of that exercise: the score,
the checks that were fixed or broke, and what is still wrong (hidden checks as in
`attnkit check`: whether they pass, their details only with ``show_hidden``).
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from enum import Enum
from pathlib import Path

from rich.console import Console

from autograder.load import LoadError, SourceFile, load_stem
from autograder.results import CheckResult, ExerciseResult
from autograder.session import GradingSession

SUFFIXES = (".py", ".ipynb")
DEBOUNCE_MS = 50      # an editor's save is a burst of events (temp file, rename): one re-grade per burst


class Change(Enum):
    FIXED = "fixed"          # failed before, passes now
    BROKE = "broke"          # passed before, fails now
    STILL_FAILING = "still failing"
    NEW = "new"              # the check was not graded before


@dataclass(frozen=True)
class CheckChange:
    check: CheckResult
    change: Change


def compare(before: ExerciseResult | None, after: ExerciseResult) -> list[CheckChange]:
    """What changed for each check that is not a plain "passed before and now"."""
    old = {c.check_id: c for c in before.checks} if before else {}
    out = []
    for check in after.checks:
        prev = old.get(check.check_id)
        if prev is None:
            out.append(CheckChange(check, Change.NEW))
        elif prev.passed and not check.passed:
            out.append(CheckChange(check, Change.BROKE))
        elif not prev.passed and check.passed:
            out.append(CheckChange(check, Change.FIXED))
        elif not check.passed:
            out.append(CheckChange(check, Change.STILL_FAILING))
    return out


def saved_stems(paths: Iterable[str | Path], folder: Path, stems: Iterable[str]) -> list[str]:
    """The exercises whose file (``<stem>.py`` / ``<stem>.ipynb`` directly in `folder`) was saved."""
    wanted, folder = set(stems), Path(folder).resolve()
    found = []
    for raw in paths:
        path = Path(raw)
        if path.suffix in SUFFIXES and path.stem in wanted and path.parent.resolve() == folder \
                and path.stem not in found:
            found.append(path.stem)
    return found


def print_changes(console: Console, before: ExerciseResult | None, after: ExerciseResult, seconds: float,
                  show_hidden: bool, details: bool = True) -> None:
    """`details`: each failing check's message and hint (off when the file itself could not be
    loaded: one message says why, not one per check)."""
    was = f"{before.score:g}/{before.max_score:g} -> " if before else ""
    delta = after.score - before.score if before else 0.0
    sign = f" ({delta:+g})" if before and delta else ""
    console.print(f"\n[bold]{after.graded_file or after.stem}[/] {was}[bold]{after.score:g}/{after.max_score:g}[/]"
                  f"{sign}  [dim]graded in {seconds:.2f} s[/]", highlight=False)
    for item in compare(before, after):
        c = item.check
        if item.change is Change.NEW and c.passed:
            continue
        colour = {Change.FIXED: "green", Change.BROKE: "red"}.get(item.change, "yellow")
        console.print(f"  [{colour}]{item.change.value}[/] {c.check_id} [dim]({c.title})[/]", highlight=False)
        if c.passed or not details:
            continue
        if c.hidden and not show_hidden:
            console.print("      a hidden check; its details are shown after grading", highlight=False)
            if c.hint:   # made for a hidden check: what kind of input to try, no hidden value
                console.print(f"      hint: {c.hint}", highlight=False, markup=False, soft_wrap=True)
            continue
        if c.message:
            console.print(f"      {c.message}", highlight=False, markup=False, soft_wrap=True)
        if c.hint:
            console.print(f"      hint: {c.hint}", highlight=False, markup=False, soft_wrap=True)


class Watcher:
    """Keeps the last result and source of each exercise; re-grades one exercise on demand."""

    def __init__(self, session: GradingSession, folder: Path, stems: tuple[str, ...], console: Console):
        self.session, self.folder, self.stems, self.console = session, Path(folder), stems, console
        self.results: dict[str, ExerciseResult] = {}
        self._sources: dict[str, str] = {}

    def first(self, results: Iterable[ExerciseResult]) -> None:
        for ex in results:
            self.results[ex.stem] = ex
            loaded = load_stem(self.folder, ex.stem)
            self._sources[ex.stem] = loaded.source if isinstance(loaded, SourceFile) else ""

    def regrade(self, stem: str) -> ExerciseResult | None:
        """Grade `stem` again; None when its code did not change since the last run."""
        started = time.monotonic()
        loaded = load_stem(self.folder, stem)
        source = loaded.source if isinstance(loaded, SourceFile) else f"\0{loaded.message}"
        if source == self._sources.get(stem):
            self.console.print(f"[dim]{stem}: saved, no change in the code[/]")
            return None
        from autograder.grading import grade_exercise

        result = grade_exercise(stem, loaded, self.session.course, self.session.sandbox, folder=self.folder)
        broken = isinstance(loaded, LoadError)
        print_changes(self.console, self.results.get(stem), result, time.monotonic() - started,
                      self.session.course.show_hidden, details=not broken)
        if broken:
            self.console.print(f"  {loaded.message}", highlight=False, markup=False, soft_wrap=True)
        self.results[stem], self._sources[stem] = result, source
        return result

    def total(self) -> str:
        score = sum(ex.score for ex in self.results.values())
        best = sum(ex.max_score for ex in self.results.values())
        return f"total {score:g}/{best:g}"


def watch(watcher: Watcher, *, stop: threading.Event | None = None,
          on_graded: Callable[[str, ExerciseResult | None], None] | None = None) -> None:
    """Re-grade on every save until Ctrl-C (or `stop` is set)."""
    import watchfiles

    watcher.console.print(f"\n[dim]watching {watcher.folder} for saves of "
                          f"{', '.join(s + '.py/.ipynb' for s in watcher.stems)}; Ctrl-C stops[/]")
    for batch in watchfiles.watch(watcher.folder, debounce=DEBOUNCE_MS, step=DEBOUNCE_MS, stop_event=stop,
                                  raise_interrupt=False, recursive=False, rust_timeout=500,
                                  yield_on_timeout=stop is not None):
        for stem in saved_stems((path for _, path in batch), watcher.folder, watcher.stems):
            result = watcher.regrade(stem)
            if result is not None:
                watcher.console.print(f"[dim]{watcher.total()}[/]", highlight=False)
            if on_graded is not None:
                on_graded(stem, result)
