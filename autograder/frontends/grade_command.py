"""`attnkit grade CLASS_DIR --out OUT`: the command line's side of grading a class."""

from __future__ import annotations

import sys
from pathlib import Path
from typing import TYPE_CHECKING
from autograder.judge.words import counted

if TYPE_CHECKING:
    from rich.console import Console


def cmd_grade(args, console: Console, course) -> int:
    """`attnkit grade`: who each submission is and whose numbers it holds, said and checked
    before anything is graded; the class graded; what was written, and for whom, said after."""
    from autograder.grading.local_grading import grade_class
    from autograder.sandbox import SandboxError
    from autograder.grading.preflight import PreflightFailed
    from autograder.frontends.progress import ClassProgress
    from autograder.reports.summary import print_summary

    class_dir, out = Path(args.class_dir), Path(args.out)
    if class_dir.is_file() and class_dir.suffix.lower() == ".zip":
        console.print(f"[red]{class_dir} is a zip (Gradescope's Export Submissions?): unzip it and give the folder[/]")
        return 2
    if not class_dir.is_dir():
        console.print(f"[red]{class_dir}: no such folder[/]")
        return 2
    if args.jobs is not None and args.jobs < 0:
        console.print(f"[red]--jobs {args.jobs}: give a number of submissions to grade at once (0: one per core)[/]")
        return 2
    jobs = args.jobs or None      # None: as LocalGrading picks (one per core, one more for a large class)
    roster, target = None, None
    if args.assignment and not args.roster:
        console.print("[red]--assignment names a column of the LMS's gradebook: give that export as --roster too[/]")
        return 2
    if args.roster:
        from autograder.intake.gradebook_column import read_target
        from autograder.intake.roster import RosterError, read_roster

        try:
            roster = read_roster(Path(args.roster))
            target = read_target(Path(args.roster), args.assignment, course.assignment,
                                 missing_as_zero=args.missing_as_zero)
        except RosterError as err:
            print(f"attnkit grade --roster: {err}", file=sys.stderr)
            return 2
    elif args.missing_as_zero:
        console.print("[red]--missing-as-zero: give --roster ROSTER.csv, whose students with no submission get 0[/]")
        return 2
    from autograder.intake.identify import AmbiguousIdentity, UnknownStudents, identify, refuse_unknown
    from autograder.intake.gradescope_export import ExportError
    from autograder.intake.lms import LayoutUnclear

    try:
        found = _say_layout(class_dir, out, course, args.layout, console)
    except (ExportError, LayoutUnclear) as err:
        print(f"attnkit grade: {err}", file=sys.stderr)
        return 2
    if roster is not None and not _roster_names_the_download(found.layout, roster, args.roster):
        return 2
    if roster is None and found.people is not None:     # the download names its students (Gradescope's export)
        roster = list(found.people)
    try:     # with variants on, whose numbers each submission should hold: known before anything is graded
        class_list = identify(found.students, roster, not_read=found.not_read(), roster_name=str(args.roster))
        _say_identity(class_list, console)
        refuse_unknown(class_list, course.variants.enabled, roster is not None)
    except (AmbiguousIdentity, UnknownStudents) as err:
        print(f"attnkit grade: {err}", file=sys.stderr)
        return 2
    ids = {s.name for s in class_list.students} | {p.key for p in class_list.enrolment.absent}
    if args.student is not None and args.student not in {s.name for s in class_list.students}:
        near = ", ".join(sorted(s.name for s in class_list.students)[:10])
        print(f"attnkit grade --student {args.student}: no such student in {class_dir} (ids as grades.csv's student "
              f"column gives them: {near}{' ...' if len(class_list.students) > 10 else ''})", file=sys.stderr)
        return 2
    if args.student is not None and not (out / "results").is_dir():
        print(f"attnkit grade --student: {out} holds no graded class; grade the class first", file=sys.stderr)
        return 2
    overrides = None
    overrides_file = Path(args.overrides) if args.overrides else out / "overrides.csv"
    if args.overrides or overrides_file.is_file():
        from autograder.reports.overrides import OverrideError, read_overrides

        try:
            overrides = read_overrides(overrides_file, course, ids)
        except OverrideError as err:
            print(f"attnkit grade --overrides: {err}", file=sys.stderr)
            return 2
    lateness = None
    if course.late is not None:     # each student's due date and time, known before anything is graded
        from autograder.intake.submitted_at import TimesError, class_lateness
        from autograder.intake.late_policy import LateError

        try:
            lateness, said = class_lateness(course, Path(args.course).parent, class_list,
                                            target.header if target is not None else (),
                                            Path(args.submitted_at) if args.submitted_at else None, found.times,
                                            Path(args.roster) if args.roster else None)
        except (LateError, TimesError) as err:
            print(f"attnkit grade: {err}", file=sys.stderr)
            return 2
        for line in said:      # which zone a time written without one was read in
            console.print(line, markup=False, highlight=False, soft_wrap=True)
    elif args.submitted_at:
        console.print("[red]--submitted-at: course.yml has no `late:` (a due date and a late policy)[/]")
        return 2
    checked = []     # the preflight's outcome, said in the summary
    try:
        with ClassProgress(console) as progress:
            if args.scheduler:
                from autograder.cluster.cli import grade_on_cluster

                results = grade_on_cluster(args, class_dir, out, course, progress, console,
                                           on_preflight=checked.append, roster=roster, target=target,
                                           overrides=overrides, only=args.student, lateness=lateness)
                if results is None:
                    return 2
            else:
                results = grade_class(class_dir, out, course, jobs=jobs, regrade=args.regrade,
                                      on_result=progress.advance, on_start=progress.start,
                                      exports=tuple(args.export or ()), isolation=not args.no_isolation,
                                      preflight=not args.no_preflight, on_preflight=checked.append,
                                      layout=args.layout, roster=roster, target=target, overrides=overrides,
                                      only=args.student, lateness=lateness)
    except (SandboxError, PreflightFailed) as err:   # the sandbox cannot grade right here: say why
        print(f"attnkit grade: {err}", file=sys.stderr)
        return 2
    except OSError as err:   # OUT could not be written (a full disk, permissions): say so, no traceback
        print(f"attnkit: {err} (results written so far are kept; run the same command to resume)", file=sys.stderr)
        return 1
    console.print(f"[dim]{progress.describe()}[/]", highlight=False)
    for preflight in checked:
        console.print(preflight.describe(), style="dim" if preflight.status.value.startswith("passed") or
                      preflight.status.value == "not needed" else "yellow", markup=False, highlight=False)
    import json

    print_summary(results, course, console, out, named=class_list.shown,
                  summary=json.loads((out / "summary.json").read_text(encoding="utf-8")))
    if args.student is not None:
        console.print(f"graded {class_list.shown(args.student)} ({args.student}) again; the others' results are "
                      f"as {out / 'results'} held them", markup=False, highlight=False)
    _say_feedback_zips(args.export or (), class_list, out, console)
    if overrides is not None:
        console.print(f"merged {sum(len(v) for v in overrides.by_student.values())} overrides from {overrides.source} "
                      f"(summary.json's `overrides`, grades.csv's `override` column)", markup=False, highlight=False)
    if roster is not None:
        _say_roster(class_list, console, target if args.export else None,
                    sum(course.max_points(s) for s in course.exercises))
    elif any(s.lms_id for s in class_list.students) and set(args.export or ()) & {"moodle", "gradescope-csv"}:
        console.print("[yellow]an LMS download names students by the LMS's number only: the moodle and "
                      "gradescope-csv exports have no login; give --roster ROSTER.csv to fill them[/]")
    if args.gradebook:
        from autograder.nbgrader.gradebook import GradebookError, write_gradebook

        try:
            written = write_gradebook(results, args.gradebook, course)
        except GradebookError as err:
            console.print(f"[red]--gradebook {args.gradebook}: {err}[/]", markup=False)
            return 2
        by_hand = sorted(s for s, total in written.items() if total is None)
        console.print(f"wrote {counted(len(written), 'student')}' scores into the nbgrader gradebook {args.gradebook}"
                      + (f"; a grader error left {len(by_hand)} to grade by hand in formgrader ({', '.join(by_hand[:10])}"
                         f"{' ...' if len(by_hand) > 10 else ''})" if by_hand else ""), markup=False, highlight=False)
    return 0


def _say_feedback_zips(exports, class_list, out: Path, console: Console) -> None:
    """Where each feedback zip goes, and who has no page in it (a name the LMS cannot match)."""
    import zipfile

    from autograder.reports.feedback_zip import entry_name, zip_name

    where = {"canvas-feedback": "Canvas: the assignment's Submissions > Re-Upload Submissions",
             "moodle-feedback": "Moodle: the assignment's submissions > Upload multiple feedback files in a zip"}
    for fmt in dict.fromkeys(e for e in exports if e in where):
        path = out / zip_name(fmt)
        try:
            with zipfile.ZipFile(path) as zf:
                count = len(zf.namelist())
        except (OSError, zipfile.BadZipFile):
            continue
        console.print(f"wrote {path} ({count} feedback pages): upload it in {where[fmt]}", markup=False,
                      highlight=False, soft_wrap=True)
        left = [s.name for s in class_list.students if entry_name(fmt, s) is None or s.claim_of]
        if left:
            console.print(f"[yellow]{len(left)} students have no page in it (their download names no "
                          f"{fmt.split('-')[0].capitalize()} file to attach it to, or several submissions "
                          f"claim them):[/]")
            for name in left[:30]:
                console.print(f"  {class_list.shown(name)} ({name})", markup=False, highlight=False)


def _say_roster(class_list, console: Console, target=None, course_points: float = 0) -> None:
    """Which column the exports wrote, at what scale; who on the roster handed in nothing, and
    which submissions match no row: one per line, by last name ("Last, First" holds a comma)."""
    found = class_list.enrolment
    if target is not None:
        scale = (f", scores scaled from {course_points:g} to its {target.points:g} points"
                 if target.points and target.points != course_points else "")
        console.print(f"the exports write the column {target.column!r}{scale}", markup=False, highlight=False)
    absent = [f"{p.listed} ({p.key})" if p.listed and p.listed != p.key else p.key
              for p in sorted(found.absent, key=lambda p: p.sort_key)]
    missing = "a 0 in the exports" if target is not None and target.missing_as_zero else \
        "left empty in the exports: missing to the LMS; --missing-as-zero writes 0"
    for what, names in ((f"on the roster with no submission ({missing})", absent),
                        ("submissions matching no roster row (graded; match them by hand)", list(found.unmatched))):
        if names:
            console.print(f"\n[bold]{len(names)} {what}[/]")
            for name in names[:30]:
                console.print(f"  {name}", markup=False, soft_wrap=True, highlight=False)
            if len(names) > 30:
                console.print(f"  ... and {len(names) - 30} more (report.html lists them all)", markup=False)


def _say_layout(class_dir: Path, out: Path, course, layout: str, console: Console):
    """An LMS's download recognised, and what in it belongs to no student, said before grading;
    returns what read_class found."""
    from autograder.intake.lms import Layout, read_class

    found = read_class(class_dir, course.assignment, exclude=(out,), layout=layout)
    if found.layout is not Layout.FOLDERS:
        console.print(f"{class_dir}: {found.layout.value}'s download, {counted(len(found.students), 'student')}"
                      f"{f'; {found.naming}' if found.naming else ''} (--layout folders|canvas|moodle|gradescope to "
                      f"choose)", markup=False, soft_wrap=True)
    if found.strays:
        shown = ", ".join(found.strays[:10]) + (f" and {len(found.strays) - 10} more" if len(found.strays) > 10 else "")
        console.print(f"[yellow]not graded, named like no {found.layout.value} submission:[/] ", end="")
        console.print(shown, markup=False, soft_wrap=True)
    if found.set_aside:
        console.print(f"[yellow]{len(found.set_aside)} set aside, not graded:[/]")
        for name, why in found.set_aside[:30]:
            console.print(f"  {name}: {why}", markup=False, soft_wrap=True, highlight=False)
        if len(found.set_aside) > 30:
            console.print(f"  ... and {len(found.set_aside) - 30} more (report.html lists them all)", markup=False)
    return found


def _roster_names_the_download(layout, roster, path) -> bool:
    """An LMS's download names each student by the LMS's id alone: a roster without that id
    cannot say who any submission is; said with the file, before anything is written."""
    from autograder.intake.lms import Layout

    needs = {Layout.CANVAS: ("Canvas's user id (the ID column of Canvas's gradebook export)",
                             "the gradebook export of the course"),
             Layout.MOODLE: ("Moodle's participant number (the Identifier column of the grading worksheet)",
                             "the assignment's grading worksheet (Download grading worksheet)")}.get(layout)
    if needs is None or any(p.lms_id for p in roster):
        return True
    print(f"attnkit grade --roster: {path} line 1: no column holds {needs[0]}, the only part of "
          f"{layout.value.capitalize()}'s download that says whose a submission is; give {needs[1]}", file=sys.stderr)
    return False


def _say_identity(class_list, console: Console) -> None:
    """Before grading: the submissions of no student, set aside, and the students several
    submissions claim, each graded apart under its own key."""
    found = class_list.enrolment
    if found.not_students:
        n = len(found.not_students)
        console.print(f"set aside {counted(n, 'non-student')} (not graded, counted, exported or given "
                      f"feedback):", markup=False, highlight=False)
        for who, why in found.not_students:
            console.print(f"  {who}: {why}", markup=False, soft_wrap=True, highlight=False)
    if found.claims:
        n = len(found.claims)
        console.print(f"[yellow]{n} student{'s are' if n != 1 else ' is'} claimed by several submissions: each is "
                      f"graded under its own key, on that student's numbers, and none is exported as theirs; remove "
                      f"the ones that are not theirs from the class folder and run again[/]")
        for claim in found.claims:
            each = "; ".join(f"{key} from {source}" for key, source in zip(claim.keys, claim.sources))
            console.print(f"  {claim.shown} ({claim.student}): {each}", markup=False, soft_wrap=True, highlight=False)
