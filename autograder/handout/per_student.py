"""`attnkit handout OUT --roster ROSTER.csv`: OUT/<student>/, each the handout with that student's
numbers (course.yml variants:, docs/variants.md)."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING

from autograder.handout.write import HandoutError, write_handout
from autograder.variants.commands import RosterIdError, enabled, roster_ids

if TYPE_CHECKING:
    from rich.console import Console

    from autograder.config.course import CourseConfig


def handouts_per_student(args, course: CourseConfig, console: "Console") -> int:
    """`attnkit handout OUT --roster ROSTER.csv`: OUT/<student>/, each the handout with that student's numbers."""
    from autograder.intake.roster import RosterError
    from autograder.variants import variant_for
    from autograder.variants.draw import VariantError

    if not enabled(course, console):
        return 2
    out = Path(args.out)
    try:
        students = roster_ids(args.roster)
        if out.is_dir() and any(out.iterdir()) and not args.force:
            raise HandoutError(f"{out} is not empty; give a new folder, or --force to overwrite the handouts in it")
        written = [path for student, _ in students
                   for path in write_handout(out / student, course, force=True, variant=variant_for(course, student))]
    except (RosterError, RosterIdError, HandoutError, VariantError) as err:
        console.print(str(err), style="red", markup=False)
        return 2
    console.print(f"wrote {len(students)} handouts ({len(written)} files) into {out}/<student>/: give each student "
                  f"their folder; `python check.py` there checks against their own numbers (docs/variants.md)")
    return 0
