"""The instructor's and the student's commands for variants: `attnkit variants --roster ROSTER.csv`
(each student's numbers and answer key) and `attnkit practice hand_computation` (fresh numbers to
drill on). A handout per student (`attnkit handout OUT --roster ROSTER.csv`) is the handout's:
autograder/handout/per_student.py."""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from rich.console import Console

    from autograder.config.course import CourseConfig

    from autograder.intake.roster import Person

# A student's id becomes a folder name: nothing that could lead out of OUT or hide the folder.
SAFE_ID = re.compile(r"^[A-Za-z0-9_@+-][A-Za-z0-9._@+-]*$")


def add_commands(add) -> None:
    """Registers `variants` and `practice` with the kit's argument parser (`add` makes a subcommand)."""
    va = add("variants", help="list each student's numbers and answer key (course.yml variants:)")
    va.add_argument("--roster", required=True, metavar="ROSTER.csv",
                    help="the course's roster as nbgrader, Canvas, Moodle or Gradescope export it")
    va.add_argument("--json", metavar="FILE", help="also write every student's numbers and full key to FILE")
    va.set_defaults(func=cmd_variants)
    pr = add("practice", help="drill the hand computation on fresh numbers, checked step by step")
    pr.add_argument("exercise", choices=("hand_computation",))
    pr.add_argument("--seed", type=int, default=None, help="the practice numbers' seed (default: new each time)")
    pr.add_argument("--answers", metavar="FILE", help="check the answers in FILE (a .py file setting SCORES, ...) "
                    "instead of asking for them")
    pr.set_defaults(func=_cmd_practice)


def _cmd_practice(args, console: "Console") -> int:
    from autograder.variants.practice import cmd_practice     # numpy and the draw, only when practising

    return cmd_practice(args, console)


class RosterIdError(ValueError):
    """A roster row whose id cannot name a student's folder (the message names the line)."""


def roster_ids(path: Path) -> list[tuple[str, "Person"]]:
    """(the student's id, their row) for every row of the roster, in its order. The id is the one
    `attnkit grade` gives the student: the login (nbgrader's `id`), else the email, SIS id or LMS id."""
    from autograder.intake.roster import read_roster

    people = [p for p in read_roster(Path(path)) if not p.not_a_student]     # no handout for Canvas's Test Student
    bad = [f"{path} line {p.line}: {p.key!r} cannot name a folder (letters, digits and . _ @ + - only)"
           for p in people if not SAFE_ID.match(p.key)]
    if bad:
        raise RosterIdError("; ".join(bad[:10]))
    return [(p.key, p) for p in people]


def enabled(course: CourseConfig, console: "Console") -> bool:
    if not course.variants.enabled:
        console.print("[red]course.yml: variants are not enabled[/] (add `variants: {enabled: true}`; "
                      "docs/variants.md)")
    return course.variants.enabled


def listing(course: CourseConfig, ids: list[str]) -> list[dict]:
    """Each student's numbers and key, as plain data (the --json file)."""
    from autograder.variants import variant_for
    from autograder.variants.keys import answer_key

    out = []
    for student in ids:
        v = variant_for(course, student)
        key = answer_key(v)
        out.append({"student": student, "Q": v.q, "K": v.k, "V": v.v, "X": v.x, "seed": v.seed,
                    "key": {name: value.round(4).tolist() for name, value in key.items()}})
    return out


def cmd_variants(args, console: "Console") -> int:
    from rich.table import Table

    from autograder.checks import check_ids
    from autograder.intake.roster import RosterError
    from autograder.config import load_course
    from autograder.variants.draw import VariantError

    course = load_course(args.course, known_checks=check_ids())
    if not enabled(course, console):
        return 2
    try:
        rows = listing(course, [student for student, _ in roster_ids(args.roster)])
    except (RosterError, RosterIdError, VariantError) as err:
        console.print(str(err), style="red", markup=False)
        return 2
    table = Table(title=f"{course.course}: each student's numbers and key", title_justify="left", show_lines=True)
    for column in ("student", "Q | K | V", "X (cat, sat, mat)", "seed", "WEIGHTS", "CSM_WEIGHTS"):
        table.add_column(column)
    plain = lambda m: "\n".join(" ".join(f"{x:g}" for x in row) for row in m)  # noqa: E731
    for row in rows:
        table.add_row(row["student"], " | ".join(plain(row[n]).replace("\n", "; ") for n in "QKV"), plain(row["X"]),
                      str(row["seed"]), plain(row["key"]["WEIGHTS"]), plain(row["key"]["CSM_WEIGHTS"]))
    console.print(table)
    if args.json:
        from autograder.results import write_atomic

        write_atomic(Path(args.json), json.dumps({"course": course.course, "students": rows}, indent=1) + "\n")
        console.print(f"[dim]wrote {args.json} (every student's key: keep it from students)[/]")
    return 0
