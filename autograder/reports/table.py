"""The terminal report of `attnkit check`: a score table, then each failed check with what and where."""

from __future__ import annotations

from rich.console import Console
from rich.markup import escape
from rich.table import Table

from autograder.results import SubmissionResult

MARK = {"passed": "[green]ok[/]", "failed": "[red]wrong[/]", "error": "[red]error[/]",
        "not_implemented": "[yellow]todo[/]", "missing": "[yellow]missing[/]"}


def _pts(x: float) -> str:
    return f"{x:g}"


def print_report(result: SubmissionResult, console: Console, *, show_hidden: bool = False) -> None:
    table = Table(title=escape(f"{result.assignment}: {result.student}"), title_justify="left")
    table.add_column("exercise")
    table.add_column("file")
    table.add_column("checks passed", justify="right")
    table.add_column("score", justify="right")
    for ex in result.exercises:
        passed = sum(c.passed for c in ex.checks)
        table.add_row(ex.stem, escape(ex.graded_file or "-"), f"{passed}/{len(ex.checks)}",
                      f"{_pts(ex.score)}/{_pts(ex.max_score)}")
    table.add_section()
    table.add_row("[bold]total[/]", "", f"{sum(c.passed for c in result.checks)}/{len(result.checks)}",
                  f"[bold]{_pts(result.score)}/{_pts(result.max_score)}[/]")
    console.print(table)
    untouched = _all_checks(result, "not_implemented")
    absent = _all_checks(result, "missing")
    for ex in result.exercises:
        if ex.stem in untouched or ex.stem in absent:   # said once for all of them, below
            continue
        if ex.note:
            console.print(f"[dim]{ex.stem}: {escape(ex.note)}[/]", soft_wrap=True)
        failed = [c for c in ex.checks if not c.passed]
        if not failed:
            continue
        console.print(f"\n[bold]{ex.stem}[/]")
        for c in failed:
            head = f"  {MARK[c.status]} {c.check_id} [dim]({c.title})[/]"
            console.print(head, highlight=False, soft_wrap=True)
            if c.hidden and not show_hidden:
                console.print("      a hidden check; its details are shown after grading", highlight=False)
                if c.hint:   # made for a hidden check: what kind of input to try, no hidden value
                    console.print(f"      hint: {c.hint}", highlight=False, markup=False, soft_wrap=True)
                continue
            console.print(f"      {c.message}", highlight=False, markup=False, soft_wrap=True)
            if c.hint:
                console.print(f"      hint: {c.hint}", highlight=False, markup=False, soft_wrap=True)
            if c.misconceptions:
                console.print(f"      [dim]misconception: {', '.join(c.misconceptions)}[/]", highlight=False)
    if untouched:
        console.print(f"\n[yellow]not started yet[/] (untouched stubs, 0 points): {', '.join(untouched)}; "
                      f"fill in each TODO(<task id>)", highlight=False, soft_wrap=True)
    if absent:
        console.print(f"\n[yellow]no file[/]: {', '.join(absent)} (name each <exercise>.py or <exercise>.ipynb)",
                      highlight=False, soft_wrap=True)
    console.print(f"\n[dim]seed {result.seed}; checks run with the same seed give the same inputs[/]")


def _all_checks(result: SubmissionResult, status: str) -> list[str]:
    """The exercises every one of whose checks has `status` (an untouched stub, no file)."""
    return [ex.stem for ex in result.exercises if ex.checks and all(c.status == status for c in ex.checks)]
