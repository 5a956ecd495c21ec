"""attnkit: check one submission, grade a class, build the exercises from the solutions."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path
from typing import TYPE_CHECKING, NoReturn

from autograder.judge.words import counted

if TYPE_CHECKING:    # imported in main(), after `check` has started its zygotes
    from rich.console import Console


def _course(args):
    from autograder.checks import check_ids
    from autograder.config import load_course

    return load_course(args.course, known_checks=check_ids())


def cmd_check(args, console: Console | None) -> int:
    """`console` is None: made when the first line is printed (rich is imported then, not before
    the grading has started). The children the check will wait for start before the grader
    imports its checks: they import on the other core meanwhile."""
    from autograder.frontends.selection import SelectionError, select, stem_of
    from autograder.grading.early_start import start_readers, start_zygotes

    start_readers(tuple(dict.fromkeys(map(stem_of, args.exercise))) if args.exercise else None)
    from autograder.config import load_course, validate_check_ids
    from autograder.grading.course_session import GradingSession

    course = load_course(args.course)
    try:
        start_zygotes(course, select(args.exercise or (), course)[0])
    except SelectionError:
        pass            # said below, once the course is known to be right
    from autograder.checks import check_ids

    validate_check_ids(course, args.course, check_ids())
    folder = Path(args.submission) if args.submission else Path("exercises")
    if not folder.is_dir():
        console = make_console()
        console.print(f"[red]{folder}: no such folder[/] (give the folder with your exercise files: "
                      f"attnkit check --submission DIR)")
        return 2
    try:
        stems, only = select(args.exercise or (), course)
    except SelectionError as err:
        make_console().print(str(err), style="red", markup=False)
        return 2
    from autograder.variants.identity import recorded_identity

    identity = args.student or recorded_identity(folder)     # whose numbers (course.yml variants:)
    with GradingSession(course, only=only, identity=identity).start() as session:
        result = session.grade(folder, stems=stems, student=args.name or folder.resolve().name)
        from autograder.reports.table import print_report

        console = make_console()
        print_report(result, console, show_hidden=course.show_hidden)
        if args.json:
            from autograder.reports.gradescope import to_gradescope
            from autograder.results import dumps, write_atomic

            write_atomic(Path(args.json), dumps(to_gradescope(result, show_hidden=course.show_hidden)))
            console.print(f"[dim]wrote {args.json}[/]")
        if args.watch:
            from autograder.frontends.watch import Watcher, watch

            watcher = Watcher(session, folder, stems or tuple(course.exercises), console)
            watcher.first(result.exercises)
            watch(watcher)
            return 0
    return 0 if result.score == result.max_score else 1


def cmd_grade(args, console: Console) -> int:
    from autograder.frontends.grade_command import cmd_grade as grade

    return grade(args, console, _course(args))


def cmd_gradescope(args, console: Console) -> int:
    _course(args)     # a course with a mistake is reported here, not on Gradescope
    from autograder.gradescope.package import PackageError, build_zip
    from autograder.gradescope.settings import GradescopeSettings

    settings = GradescopeSettings(hidden_visibility=args.hidden_visibility, leaderboard=args.leaderboard)
    written = _write_and_say(console, lambda: build_zip(Path(args.zip), Path(args.course).read_text(encoding="utf-8"),
                                                        settings), PackageError,
                             lambda names: f"wrote {args.zip} ({counted(len(names), 'file')}); trying it here as Gradescope's "
                                           f"image build will")
    if written:
        return written
    from autograder.gradescope.package import try_zip

    tried = try_zip(Path(args.zip))     # ready only once its own kit has graded the solutions
    if not tried.ready:
        console.print(f"{tried.said}; the autograder is NOT ready (docs/gradescope.md)", style="red", markup=False)
        return 1
    console.print(f"{tried.said}. Ready: upload {args.zip} as the assignment's autograder (docs/gradescope.md)",
                  markup=False, highlight=False)
    return 0


def _write_and_say(console: Console, write, refusal: type[Exception], said) -> int:
    """Run `write`; print what it wrote (`said` of its result), or, when it refuses, why (exit 2)."""
    try:
        written = write()
    except refusal as err:
        console.print(str(err), style="red", markup=False)
        return 2
    console.print(said(written), markup=False)
    return 0


def cmd_build(args, console: Console) -> int:
    from autograder.build.exercises import main as build

    return build(["--check"] * args.check + ["--force"] * args.force)


def cmd_handout(args, console: Console) -> int:
    course = _course(args)
    from autograder.handout.write import HandoutError, write_handout

    if args.roster:
        from autograder.frontends.progress import counting_bar
        from autograder.handout.per_student import handouts_per_student

        return handouts_per_student(args, course, console, counting_bar)
    return _write_and_say(console, lambda: write_handout(Path(args.out), course, force=args.force), HandoutError,
                          lambda written: f"wrote {counted(len(written), 'file')} into {args.out}: give students this folder; "
                                          f"they run `python check.py` in it (docs/handout.md)")


def cmd_nbgrader(args, console: Console) -> int:
    from autograder.nbgrader.course import cmd_nbgrader as write_nbgrader_course

    return write_nbgrader_course(args, console)


def cmd_misconceptions(args, console: Console) -> int:
    from rich.markup import escape
    from rich.table import Table

    from autograder.checks import all_misconceptions
    from autograder.frontends.selection import stem_of

    table = Table(title="misconceptions the grader recognises", title_justify="left", show_lines=True)
    table.add_column("id")
    table.add_column("exercise")
    table.add_column("hint a student gets")
    for mis in all_misconceptions():
        if args.exercise is None or stem_of(args.exercise) == mis.stem:
            table.add_row(mis.id, mis.stem, escape(mis.hint))     # a hint's `scores[mask == 0]` is not markup
    console.print(table)
    return 0


COURSE_HELP = "the course file (default: the kit's course.yml)"


def cmd_doctor(args, console: Console) -> int:
    from autograder.frontends.doctor import examine, print_diagnosis

    found = examine(_course(args), isolation=not args.no_isolation)
    print_diagnosis(found, console)
    return 0 if found.ready else 1


def parser(only: str | None = None) -> argparse.ArgumentParser:
    """The program's arguments; `only="check"`: the program's parser with only that subcommand,
    which reads a check's arguments as the whole parser does (`command_named` says when): the
    other commands' options (`variants` and `practice` imported for theirs) would slow a cold
    check before its zygotes start."""
    p = argparse.ArgumentParser(prog="attnkit", description=__doc__)
    p.add_argument("--course", type=Path, default=None, metavar="FILE", help=COURSE_HELP)
    p.add_argument("--no-fast", action="store_true",
                   help="turn every optional speed-up off: the plain path (the same as ATTNKIT_FAST=0)")
    # --course is also taken after the subcommand (`attnkit check --course c.yml`); SUPPRESS
    # leaves the value given before it in place when it is not repeated there.
    common = argparse.ArgumentParser(add_help=False)
    common.add_argument("--course", type=Path, default=argparse.SUPPRESS, metavar="FILE", help=COURSE_HELP)
    sub = p.add_subparsers(dest="command", required=True)

    def add(name: str, **kwargs) -> argparse.ArgumentParser:
        return sub.add_parser(name, parents=[common], **kwargs)

    check = add("check", help="grade one submission and print a score table")
    check.add_argument("--submission", metavar="DIR", help="folder with the exercise files (default: exercises/)")
    check.add_argument("--json", metavar="FILE", help="also write Gradescope's results.json to FILE")
    check.add_argument("--exercise", action="append", metavar="NAME",
                       help="only this exercise: its name (attention), its file (attention.py, attention.ipynb), "
                            "a task (attention.softmax) or a check (attention.softmax.rows); repeatable")
    check.add_argument("--name", help="the student's name in the report (default: the folder's name)")
    check.add_argument("--student", metavar="ID", help="grade against this student's variant (course.yml variants:; "
                       "default: the student a per-student handout records, else the course's own numbers)")
    check.add_argument("--watch", action="store_true",
                       help="keep grading: re-grade an exercise each time its file is saved (Ctrl-C stops)")
    check.set_defaults(func=cmd_check)
    if only == "check":
        return p

    grade = add("grade", help="grade a class: one folder per student")
    grade.add_argument("class_dir", metavar="CLASS_DIR")
    grade.add_argument("--out", required=True, metavar="OUT", help="where grades.csv and results/ are written")
    grade.add_argument("--jobs", "-j", type=int, default=0, metavar="N",
                       help="submissions graded at once, each in a sandbox (default: one per core, +1 from 150 students)")
    grade.add_argument("--regrade", action="store_true", help="ignore results from an earlier run and start over")
    grade.add_argument("--no-isolation", action="store_true",
                       help="grade even where the sandbox cannot isolate submissions (no user namespaces, "
                            "macOS): only for code you trust (docs/security.md)")
    grade.add_argument("--no-preflight", action="store_true",
                       help="do not grade the kit's solutions in the sandbox first (the run's summary says it "
                            "was skipped): a sandbox that cannot see part of Python would cost right answers points")
    grade.add_argument("--scheduler", metavar="ADDRESS",
                       help="grade on a Dask cluster: its scheduler's address, e.g. tcp://host:8786 (docs/cluster.md)")
    grade.add_argument("--gradebook", metavar="URL",
                       help="also write the scores into this nbgrader gradebook (e.g. sqlite:///gradebook.db)")
    grade.add_argument("--layout", choices=("auto", "folders", "canvas", "moodle", "gradescope"), default="auto",
                       help="how CLASS_DIR is laid out: one folder per student, Canvas's, Moodle's or Gradescope's download "
                            "(default: recognised by the names)")
    grade.add_argument("--roster", metavar="ROSTER.csv",
                       help="the course's roster as exported by nbgrader, Canvas, Moodle or Gradescope: names "
                            "each student in grades.csv and the exports (Canvas's gradebook export: its columns kept)")
    grade.add_argument("--assignment", metavar="NAME",
                       help="the roster's assignment column the exports write into, e.g. \"Self-Attention Lab\" "
                            "(Canvas's \"(id)\" optional); scaled to its Points Possible (default: a new column "
                            "named after course.yml's assignment)")
    grade.add_argument("--overrides", metavar="FILE",
                       help="the instructor's changes (student,check,points,reason,who), merged into grades.csv, the "
                            "exports and summary.json with their audit trail (default: OUT/overrides.csv if there)")
    grade.add_argument("--submitted-at", metavar="TIMES.csv",
                       help="when each student handed in (student,submitted_at), for course.yml's `late:` where the "
                            "download does not say (Canvas's LATE_ names say late, not when)")
    grade.add_argument("--student", metavar="ID",
                       help="grade this one student again in an existing OUT; the others' results are kept")
    grade.add_argument("--missing-as-zero", action="store_true",
                       help="roster students with no submission get 0 (default: left empty, missing to the LMS)")
    grade.add_argument("--export", action="append", metavar="FORMAT",
                       choices=("canvas", "moodle", "gradescope-csv", "canvas-feedback", "moodle-feedback"),
                       help="also write OUT/export-FORMAT.csv for a gradebook import: canvas, moodle or "
                            "gradescope-csv; or OUT/export-FORMAT.zip of each student's feedback page for the "
                            "LMS's bulk feedback upload: canvas-feedback, moodle-feedback (repeatable)")
    grade.set_defaults(func=cmd_grade)

    gs = add("gradescope", help="write a Gradescope autograder zip (setup.sh, run_autograder, the kit)")
    gs.add_argument("zip", metavar="OUT.zip")
    gs.add_argument("--hidden-visibility", choices=("after_published", "after_due_date", "hidden"),
                    default="after_published", help="when students see hidden checks (default: after_published)")
    gs.add_argument("--leaderboard", action="store_true", help="show scores on Gradescope's leaderboard")
    gs.set_defaults(func=cmd_gradescope)

    build = add("build", help="generate exercises/ (stubs and notebooks) from solutions/")
    build.add_argument("--check", action="store_true", help="write nothing; fail if exercises/ is out of date")
    build.add_argument("--force", action="store_true",
                       help="also overwrite exercise files edited since the last build (their edits are lost)")
    build.set_defaults(func=cmd_build)
    ho = add("handout", help="write what students get: the stubs, notebooks and check.py, no answer key")
    ho.add_argument("out", metavar="OUT", help="the folder to write (new, or empty)")
    ho.add_argument("--force", action="store_true", help="write into a folder that already holds files")
    ho.add_argument("--roster", metavar="ROSTER.csv", help="one handout per student, OUT/<student>/, each with "
                    "that student's numbers (course.yml variants:)")
    ho.set_defaults(func=cmd_handout)
    from autograder.variants.commands import add_commands

    add_commands(add)
    nb = add("nbgrader", help="write an nbgrader course (source notebooks, nbgrader_config.py), private to you")
    nb.add_argument("course_dir", metavar="COURSE_DIR", help="the nbgrader course folder to write")
    nb.add_argument("--force", action="store_true", help="overwrite the generated files of an existing course")
    nb.add_argument("--course-id", metavar="ID", help="nbgrader's course id (default: from the course's name)")
    nb.add_argument("--exchange", metavar="DIR", help="nbgrader's exchange folder, existing and writable by every "
                    "student, outside COURSE_DIR (default: nbgrader's, /usr/local/share/nbgrader/exchange)")
    nb.set_defaults(func=cmd_nbgrader)

    doc = add("doctor", help="start a real sandbox: say what it sees, which isolation holds, and grade the "
                             "kit's solutions in it (exit 1 if anything would cost a student points)")
    doc.add_argument("--no-isolation", action="store_true",
                     help="a sandbox without the jail is acceptable here (as `grade --no-isolation`)")
    doc.set_defaults(func=cmd_doctor)

    mis = add("misconceptions", help="list the mistakes the grader can name, with their hints")
    mis.add_argument("--exercise", metavar="NAME", help="only this exercise (its name or file name)")
    mis.set_defaults(func=cmd_misconceptions)
    return p


def command_named(argv: list[str]) -> str | None:
    """The subcommand `argv` names, found as argparse finds it past `--course FILE` (or a prefix of
    it, or `--course=FILE`); None where anything else comes first (`-h`, `--`, a mistake): then the
    whole parser reads the line and says what is wrong."""
    i = 0
    while i < len(argv):
        token = argv[i]
        if not token.startswith("-"):
            return token
        name = token.split("=", 1)[0]
        if token == "--no-fast":
            i += 1
            continue
        if len(name) < 3 or not "--course".startswith(name):
            return None
        i += 1 if "=" in token else 2
    return None


def parse(argv: list[str]) -> argparse.Namespace:
    """`argv` read by the program's parser, built with only the check's subcommand for a check. A
    check's line it refuses is read again by the whole parser, which says what is wrong in its own
    words (its usage line lists every command)."""
    if command_named(argv) == "check":
        import contextlib
        import io

        try:
            with contextlib.redirect_stderr(io.StringIO()):
                return parser(only="check").parse_args(argv)
        except SystemExit as exited:
            if not exited.code:
                raise      # --help, printed
    return parser().parse_args(argv)


def make_console() -> Console:
    """A terminal gets rich's layout at its width. A pipe, a file or a CI log gets each line whole:
    no hard wrap in mid-phrase (soft wrap), tables as wide as their content (or $COLUMNS)."""
    import os

    from rich.console import Console

    console = Console(highlight=False)
    if console.is_terminal:
        return console
    width = int(os.environ["COLUMNS"]) if os.environ.get("COLUMNS", "").isdigit() else UNWRAPPED_WIDTH
    return Console(highlight=False, soft_wrap=True, width=width)


UNWRAPPED_WIDTH = 1000     # wide enough for any table row the kit prints


def main(argv: list[str] | None = None) -> int:
    return dispatch(parse(sys.argv[1:] if argv is None else argv))


def dispatch(args: argparse.Namespace) -> int:
    import os

    from autograder.judge.threads import one_thread
    from autograder.speedups import SWITCH, check_switch

    if getattr(args, "no_fast", False):
        os.environ[SWITCH] = "0"      # for this process and the ones it starts (a Dask worker's own)
    wrong = check_switch()
    if wrong:
        print(f"attnkit: {wrong}", file=sys.stderr)
        return 2

    one_thread(unless_given=True)     # before numpy's import: the grader's own arithmetic
    from autograder.config import DEFAULT_COURSE, ConfigError

    args.course = args.course if args.course is not None else DEFAULT_COURSE
    console = None if args.command == "check" else make_console()     # check: see cmd_check
    try:
        return args.func(args, console)
    except ConfigError as err:
        print(f"attnkit: {err}", file=sys.stderr)
        return 2
    except KeyboardInterrupt:
        print("attnkit: interrupted; results written so far are kept (run the same command to resume)",
              file=sys.stderr)
        return 130


def run() -> None:
    """The program (`attnkit`, `python -m autograder.cli`): main(), then out."""
    leave(dispatch(parse(sys.argv[1:])))


def leave(code) -> NoReturn:
    """Ends the program as the interpreter would -- its threads joined, its exit hooks run (the
    sandbox's processes stopped, temporary folders removed), its output flushed -- without then
    tearing down every module it imported (numpy, rich, pydantic): at the end of a command that
    is work for nobody, and a cold `attnkit check` waited for it."""
    import atexit
    import os
    import threading

    join_threads = getattr(threading, "_shutdown", None)     # what Py_FinalizeEx calls first
    if not isinstance(code, int) or join_threads is None:
        sys.exit(code)
    join_threads()
    atexit._run_exitfuncs()
    for stream in (sys.stdout, sys.stderr):
        try:
            stream.flush()
        except (OSError, ValueError):      # a closed pipe (`| head`) or stream: nothing left to say
            pass
    os._exit(code)


if __name__ == "__main__":
    run()
