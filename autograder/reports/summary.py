"""The one-screen class summary at the end of `attnkit grade`."""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable
from pathlib import Path

from rich.console import Console
from rich.table import Table

from autograder.config import CourseConfig
from autograder.results import SubmissionResult


def print_summary(results: list[SubmissionResult], course: CourseConfig, console: Console, out: Path,
                  named: Callable[[str], str] | None = None) -> None:
    """`results` is read once (a class run's are read back from OUT, one file at a time). `named`
    names a student as the roster does (their id beside it)."""
    stems = tuple(course.exercises)
    tops = {stem: course.max_points(stem) for stem in stems}
    sums, full = Counter(), Counter()          # per stem, and "total" for the whole submission
    failures, misconceptions, per_student = Counter(), Counter(), Counter()
    troubled = set()
    n = 0
    for r in results:
        n += 1
        for stem in stems:
            score = r.exercise(stem).score
            sums[stem] += score
            full[stem] += score == tops[stem]
        sums["total"] += r.score
        full["total"] += r.score == r.max_score
        failures.update(c.check_id for c in r.checks if c.status in ("failed", "error"))
        shown = [m for c in r.checks for m in c.misconceptions]
        misconceptions.update(shown)
        per_student.update(set(shown))
        troubled.update((r.student, stem, kind, why) for stem, kind, why in trouble(r))
    table = Table(title=f"{course.assignment}: {n} submissions", title_justify="left")
    table.add_column("exercise")
    table.add_column("mean", justify="right")
    table.add_column("max", justify="right")
    table.add_column("full marks", justify="right")
    for stem in stems:
        table.add_row(stem, f"{sums[stem] / n if n else 0.0:.2f}", f"{tops[stem]:g}", f"{full[stem]}/{n}")
    table.add_section()
    table.add_row("[bold]total[/]", f"{sums['total'] / n if n else 0:.2f}", f"{sum(tops.values()):g}",
                  f"{full['total']}/{n}")
    console.print(table)

    if failures:
        console.print("\n[bold]most frequent failures[/]")
        for check_id, count in failures.most_common(5):
            console.print(f"  {count:4d}  {check_id}")
    if misconceptions:
        console.print("\n[bold]misconceptions to re-teach[/] (students showing each)")
        for mis, count in per_student.most_common(8):
            console.print(f"  {count:4d}  {mis}")
    troubled = sorted(troubled)
    if troubled:
        kinds = Counter(kind for _, _, kind, _ in troubled)
        counts = ", ".join(f"{n} {kind}" for kind, n in sorted(kinds.items()))
        console.print(f"\n[bold]code that crashed, hung, could not be read or was refused[/] ({counts})")
        for student, stem, kind, why in troubled[:20]:
            name = named(student) if named else student
            who = f"{name} ({student})" if name != student else student
            console.print(f"  {who} / {stem}: {kind}: {why}", markup=False, soft_wrap=True, highlight=False)
        if len(troubled) > 20:
            console.print(f"  ... and {len(troubled) - 20} more (see {out / 'results'})", markup=False)
    console.print(f"\nwrote {out / 'report.html'}, {out / 'summary.json'}, {out / 'grades.csv'}, "
                  f"{out / 'results'}/<student>.json and {out / 'feedback'}/<student>.md|.html",
                  highlight=False, soft_wrap=True, markup=False, style="dim")


# What the summary calls each reason a submission's code gave no answer (CheckResult.reason).
TROUBLE = {"timeout": "timed out", "crashed": "crashed", "load_error": "unreadable file",
           "not_run": "could not be run", "raised": "raised", "grader_error": "not graded (grader error)",
           "refused": "refused", "nothing_gradable": "nothing gradable"}
# The worse reason wins when one exercise has several.
_ORDER = ("grader_error", "refused", "nothing_gradable", "load_error", "not_run", "timeout", "crashed", "raised")
ALL_EXERCISES = "(all)"


def trouble(result: SubmissionResult) -> list[tuple[str, str, str]]:
    """(exercise, kind, message) of each exercise in trouble; one row "(all)" for a submission
    with nothing gradable (the same message on every exercise)."""
    rows = [(e.stem, *_why(e)) for e in result.exercises if _why(e)]
    if rows and all(row[1] == TROUBLE["nothing_gradable"] for row in rows) and len({row[1:] for row in rows}) == 1:
        return [(ALL_EXERCISES, *rows[0][1:])]
    return rows


def _why(exercise) -> tuple[str, str] | tuple[()]:
    """(kind, first line of the message) of the exercise's worst trouble, or () when its code ran:
    a wrong answer, a missing function or an untouched stub is not trouble."""
    # Files handed in but none gradable is trouble though nothing counts as submitted.
    troubled = [c for c in exercise.checks if c.reason in TROUBLE
                and (c.status in ("error", "failed") or c.reason == "nothing_gradable")]
    if not troubled:
        return ()
    # "raised" alone is ordinary (an exception in one function); it is listed only when nothing passed.
    worst = min(troubled, key=lambda c: _ORDER.index(c.reason))
    if worst.reason == "raised" and any(c.passed for c in exercise.checks):
        return ()
    return TROUBLE[worst.reason], (worst.message.splitlines() or [""])[0][:160]
