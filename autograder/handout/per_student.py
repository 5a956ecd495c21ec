"""`attnkit handout OUT --roster ROSTER.csv`: OUT/<student>.zip, each the handout with that student's
numbers (course.yml variants:, docs/variants.md); the zips themselves are class_handouts.py's."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING

from autograder.handout.class_handouts import folder_name, write_class_handouts
from autograder.handout.write import HandoutError
from autograder.variants.commands import RosterIdError, enabled, roster_ids

if TYPE_CHECKING:
    from rich.console import Console

    from autograder.config.course import CourseConfig


def handouts_per_student(args, course: CourseConfig, console: "Console", counting_bar) -> int:
    """`attnkit handout OUT --roster ROSTER.csv`: OUT/<student>.zip, each the handout with that
    student's numbers; `counting_bar(console, what, total)` gives the progress (the front end's)."""
    from autograder.intake.roster import RosterError
    from autograder.variants.draw import VariantError

    if not enabled(course, console):
        return 2
    out = Path(args.out)
    try:
        students = [student for student, _ in roster_ids(args.roster)]
        if out.exists() and not out.is_dir():
            raise HandoutError(f"{out} is a file; give a folder to write the handouts into")
        if out.is_dir() and any(out.iterdir()) and not args.force:
            raise HandoutError(f"{out} is not empty; give a new folder, or --force to overwrite the handouts in it")
        with counting_bar(console, "handouts", len(students)) as advance:
            written = write_class_handouts(out, course, students, on_done=advance)
    except (RosterError, RosterIdError, HandoutError, VariantError) as err:
        console.print(str(err), style="red", markup=False)
        return 2
    console.print(f"wrote {len(written)} handouts into {out}: <student>.zip, each unpacking into a folder "
                  f"{folder_name(course)}/ with that student's numbers; give each student theirs; `python check.py` "
                  f"there checks against their own numbers (docs/variants.md)", markup=False, highlight=False)
    return 0
