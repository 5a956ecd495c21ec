"""The one-screen class summary at the end of `attnkit grade`."""

from __future__ import annotations

from collections import Counter
from pathlib import Path

from rich.console import Console
from rich.table import Table

from autograder.config import CourseConfig
from autograder.results import SubmissionResult


def print_summary(results: list[SubmissionResult], course: CourseConfig, console: Console, out: Path) -> None:
    n = len(results)
    table = Table(title=f"{course.assignment}: {n} submissions", title_justify="left")
    table.add_column("exercise")
    table.add_column("mean", justify="right")
    table.add_column("max", justify="right")
    table.add_column("full marks", justify="right")
    for stem in course.exercises:
        scores = [r.exercise(stem).score for r in results]
        top = course.max_points(stem)
        mean = sum(scores) / n if n else 0.0
        table.add_row(stem, f"{mean:.2f}", f"{top:g}", f"{sum(s == top for s in scores)}/{n}")
    totals = [r.score for r in results]
    table.add_section()
    table.add_row("[bold]total[/]", f"{sum(totals) / n if n else 0:.2f}",
                  f"{sum(course.max_points(s) for s in course.exercises):g}",
                  f"{sum(r.score == r.max_score for r in results)}/{n}")
    console.print(table)

    failures = Counter(c.check_id for r in results for c in r.checks if c.status in ("failed", "error"))
    if failures:
        console.print("\n[bold]most frequent failures[/]")
        for check_id, count in failures.most_common(5):
            console.print(f"  {count:4d}  {check_id}")
    misconceptions = Counter(m for r in results for c in r.checks for m in c.misconceptions)
    if misconceptions:
        console.print("\n[bold]misconceptions to re-teach[/] (students showing each)")
        per_student = Counter(m for r in results for m in {m for c in r.checks for m in c.misconceptions})
        for mis, count in per_student.most_common(8):
            console.print(f"  {count:4d}  {mis}")
    troubled = sorted({(r.student, stem, kind, why) for r in results for stem, kind, why in trouble(r)})
    if troubled:
        kinds = Counter(kind for _, _, kind, _ in troubled)
        counts = ", ".join(f"{n} {kind}" for kind, n in sorted(kinds.items()))
        console.print(f"\n[bold]code that crashed, hung, could not be read or was refused[/] ({counts})")
        for student, stem, kind, why in troubled[:20]:
            console.print(f"  {student} / {stem}: {kind}: {why}", markup=False, soft_wrap=True, highlight=False)
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
