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

from autograder.intake import SOURCE_SUFFIXES
from autograder.intake.load import LoadError, SourceFile, load_stem, read_source
from autograder.reports.table import print_failures, print_note
from autograder.results import CheckResult, ExerciseResult
from autograder.grading.course_session import GradingSession

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
        if path.suffix in SOURCE_SUFFIXES and path.stem in wanted and path.parent.resolve() == folder \
                and path.stem not in found:
            found.append(path.stem)
    return found


def print_changes(console: Console, before: ExerciseResult | None, after: ExerciseResult, seconds: float,
                  show_hidden: bool) -> None:
    """The score's change, then each check that changed or still fails, as `attnkit check` prints it."""
    was = f"{before.score:g}/{before.max_score:g} -> " if before else ""
    delta = after.score - before.score if before else 0.0
    sign = f" ({delta:+g})" if before and delta else ""
    console.print(f"\n[bold]{after.graded_file or after.stem}[/] {was}[bold]{after.score:g}/{after.max_score:g}[/]"
                  f"{sign}  [dim]graded in {seconds:.2f} s[/]", highlight=False)
    print_note(console, after)
    colour = {Change.FIXED: "green", Change.BROKE: "red"}
    marked = [(f"[{colour.get(item.change, 'yellow')}]{item.change.value}[/]", item.check)
              for item in compare(before, after) if not (item.change is Change.NEW and item.check.passed)]
    print_failures(console, after, marked, show_hidden=show_hidden, list_unanswered=True)


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

    def regrade(self, stem: str, saved: str | Path | None = None) -> ExerciseResult | None:
        """Grade `stem` again; None when its code did not change since the last run. `saved`: the file
        whose save asked for it; when that file cannot be read (a syntax error), its error is the
        result, not a grade of the exercise's other form."""
        started = time.monotonic()
        loaded = load_stem(self.folder, stem)
        if saved is not None and Path(saved).suffix != Path(getattr(loaded, "filename", None) or saved).suffix:
            own = read_source(self.folder / Path(saved).name, stem)
            if isinstance(own, LoadError):
                loaded = own
        source = loaded.source if isinstance(loaded, SourceFile) else f"\0{loaded.message}"
        if source == self._sources.get(stem):
            self.console.print(f"[dim]{stem}: saved, no change in the code[/]")
            return None
        # The file just saved is graded when it cannot be read (its error is what the student needs),
        # else intake's choice; with the session's subset of checks (`--exercise`).
        own = loaded if saved is not None and isinstance(loaded, LoadError) else None
        result = self.session.grade_exercise(self.folder, stem, own)
        print_changes(self.console, self.results.get(stem), result, time.monotonic() - started,
                      self.session.course.show_hidden)
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
        paths = [path for _, path in batch]
        for stem in saved_stems(paths, watcher.folder, watcher.stems):
            result = watcher.regrade(stem, saved=_last_saved(paths, stem))
            if result is not None:
                watcher.console.print(f"[dim]{watcher.total()}[/]", highlight=False)
            if on_graded is not None:
                on_graded(stem, result)


def _last_saved(paths: list[str], stem: str) -> str | None:
    """The form of `stem` saved last in a burst of events (an editor may touch both)."""
    forms = [p for p in paths if Path(p).stem == stem and Path(p).suffix in SOURCE_SUFFIXES]
    return forms[-1] if forms else None
