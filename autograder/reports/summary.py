"""The one-screen class summary at the end of `attnkit grade`: the class summary's numbers (the
same computation as summary.json and report.html: autograder.reports.class_summary), printed."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

from rich.console import Console
from rich.table import Table

from autograder.config.course import CourseConfig
from autograder.reports.class_summary import class_summary
from autograder.reports.status import STATUSES, scores_over
from autograder.results import SubmissionResult
from autograder.judge.words import counted


def print_summary(results: list[SubmissionResult], course: CourseConfig, console: Console, out: Path,
                  named: Callable[[str], str] | None = None, summary: dict | None = None) -> None:
    """`results` is read once (a class run's are read back from OUT, one file at a time), unless
    `summary` (what the run wrote in summary.json, the overrides and the roster in) is given.
    `named` names a student as the roster does (their id beside it)."""
    s = summary if summary is not None else class_summary(results, course)
    statuses = dict(s["statuses"])
    graded = s["submitted"]
    table = Table(title=f"{course.assignment}: {counted(sum(statuses.values()), 'student')}, {graded} graded "
                        f"({scores_over(s)})", title_justify="left")
    for column, justify in (("exercise", "left"), ("handed in", "right"), ("mean", "right"), ("max", "right"),
                            ("full marks", "right")):
        table.add_column(column, justify=justify)
    for e in s["exercises"]:
        table.add_row(e["stem"], str(e["submitted"]), "-" if e["mean"] is None else f"{e['mean']:.2f}",
                      f"{e['max_score']:g}", f"{e['full_marks']}/{e['submitted']}")
    table.add_section()
    late = s.get("late")
    if late:      # the class's grade as every page says a student's: raw, the late penalty, final
        raw = late["raw_scores"]["mean"]
        table.add_row("score before late penalties", str(graded), "-" if raw is None else f"{raw:.2f}",
                      f"{s['max_score']:g}", f"{late['raw_scores']['full_marks']}/{graded}")
        penalty = late["penalty_mean"]
        table.add_row(f"late penalty ({late['penalised']} penalised)", str(graded),
                      "-" if penalty is None else f"-{penalty:.2f}", "", "")
    mean = s["scores"]["mean"]
    table.add_row("[bold]total[/]", str(graded), "-" if mean is None else f"{mean:.2f}", f"{s['max_score']:g}",
                  f"{s['scores']['full_marks']}/{graded}")
    console.print(table)
    console.print(" · ".join(f"{statuses[word]} {word}" for word in STATUSES if statuses.get(word)) or
                  "no students", markup=False, highlight=False)

    failures = sorted(((c["failed"] + c["error"], c["check_id"]) for c in s["checks"] if c["failed"] + c["error"]),
                      key=lambda fc: (-fc[0], fc[1]))
    if failures:
        console.print("\n[bold]most frequent failures[/]")
        for count, check_id in failures[:5]:
            console.print(f"  {count:4d}  {check_id}")
    if s["misconceptions"]:
        console.print("\n[bold]misconceptions to re-teach[/] (students showing each)")
        for m in s["misconceptions"][:8]:
            console.print(f"  {m['count']:4d}  {m['id']}")
    troubled = sorted((t["student"], t["exercise"], t["kind"], t["message"]) for t in s["trouble"])
    if troubled:
        kinds: dict[str, int] = {}
        for _, _, kind, _ in troubled:
            kinds[kind] = kinds.get(kind, 0) + 1
        counts = ", ".join(f"{n} {kind}" for kind, n in sorted(kinds.items()))
        console.print(f"\n[bold]code that crashed, hung, could not be read or was refused[/] ({counts})")
        for student, stem, kind, why in troubled[:20]:
            name = named(student) if named else student
            who = f"{name} ({student})" if name != student else student
            console.print(f"  {who} / {stem}: {kind}: {why}", markup=False, soft_wrap=True, highlight=False)
        if len(troubled) > 20:
            console.print(f"  ... and {len(troubled) - 20} more (see {out / 'report.html'})", markup=False)
    console.print(f"\nwrote {out / 'report.html'}, {out / 'summary.json'}, {out / 'grades.csv'}, "
                  f"{out / 'results'}/<student>.json and {out / 'feedback'}/<student>.md|.html",
                  highlight=False, soft_wrap=True, markup=False, style="dim")


