"""The terminal report of `attnkit check`: a score table, then each failed check with what and where."""

from __future__ import annotations

from rich.console import Console
from rich.markup import escape
from rich.table import Table

from autograder.judge.causes import fits_headline, indented
from autograder.reports.causes import causes
from autograder.results import CheckResult, ExerciseResult, SubmissionResult

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
    shared = result.shared_note()
    if shared:            # what staging did (an archive unpacked) is said once, not per exercise
        console.print(f"[dim]{escape(shared)}[/]", soft_wrap=True)
    for ex in result.exercises:
        if ex.stem in untouched or ex.stem in absent:   # said once for all of them, below
            continue
        print_note(console, ex, without=shared)
        print_failures(console, ex, [(MARK[c.status], c) for c in ex.checks if not c.passed], show_hidden=show_hidden)
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


def print_note(console: Console, ex: ExerciseResult, without: str = "") -> None:
    """What intake did about the exercise's files (another form graded, a cell skipped...), but
    `without` (the note every exercise shares, said once already)."""
    note = ex.note_without(without)
    if note:
        console.print(f"[dim]{ex.stem}: {escape(note)}[/]", soft_wrap=True)


def print_failures(console: Console, ex: ExerciseResult, marked: list[tuple[str, CheckResult]], *,
                   show_hidden: bool, list_unanswered: bool = False) -> None:
    """The checks of `ex` to report, each after its rich-markup mark ("wrong", "broke"): what and where,
    then the hint. A file that could not be found, loaded or run is said once, not once per check
    (`list_unanswered`: then the marked checks are named after it, without details).
    `attnkit check` and `attnkit check --watch` both print through here."""
    if not marked:
        return
    ex = ex.for_student(show_hidden)
    marked = [(mark, c.for_student(show_hidden)) for mark, c in marked]
    failed = [c for c in ex.checks if not c.passed]
    # One message, no hint: the file was not found, loaded or run, or is an untouched stub.
    if len(failed) == len(ex.checks) and len({c.message for c in failed}) == 1 and \
            all(c.status != "failed" and not c.hint for c in failed):
        console.print(f"\n[bold]{ex.stem}[/]: {escape(failed[0].message)}", highlight=False, soft_wrap=True)
        for mark, c in marked if list_unanswered else ():
            console.print(f"  {mark} {c.check_id} [dim]({c.title})[/]", highlight=False, soft_wrap=True)
        return
    console.print(f"\n[bold]{ex.stem}[/]")
    marks = {c.check_id: mark for mark, c in marked}
    for mark, c in marked:
        if c.passed:
            console.print(f"  {mark} {c.check_id} [dim]({escape(c.title)})[/]", highlight=False, soft_wrap=True)
    # Each cause once: what its checks share, then each check with what is its own.
    for told in causes(c for _, c in marked):
        cause, c = told.cause, told.first
        if not cause.others:
            console.print(f"  {marks[c.check_id]} {c.check_id} [dim]({escape(c.title)})[/]", highlight=False,
                          soft_wrap=True)
            _say(console, c.message, "      ")
        else:
            said = f": {escape(cause.message)}" if fits_headline(cause.message) else ""
            console.print(f"  {marks[c.check_id]} [bold]{cause.headline()}[/]{said}", highlight=False, soft_wrap=True)
            if cause.message and not said:
                _say(console, cause.message, "      ")
        if cause.hint:   # a hidden check's hint was made for it: what kind of input to try, no hidden value
            _say(console, cause.hint, "      ", "hint: ")
        if c.misconceptions and not c.concealed:
            console.print(f"      [dim]misconception: {', '.join(c.misconceptions)}[/]", highlight=False)
        for checks, text in told.evidence if cause.others else ():
            for other in checks:
                console.print(f"      {marks[other.check_id]} {other.check_id} [dim]({escape(other.title)})[/]",
                              highlight=False, soft_wrap=True)
            _say(console, text, "          ")


def _say(console: Console, text: str, indent: str, lead: str = "") -> None:
    """Text the page did not write (a message, a hint) as it is, under `indent`."""
    for line in indented(text, indent, lead):
        console.print(line, highlight=False, markup=False, soft_wrap=True)
