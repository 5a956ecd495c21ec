"""`attnkit handout OUT`: the stubs and notebooks, `check.py` and its data, a README for students.

Everything is copied from the kit's generated `exercises/` and `autograder/handout/` or written
from the course: no reference code, no solution, nothing of a hidden check (docs/handout.md).
"""

from __future__ import annotations

import shutil
from pathlib import Path

from autograder.config import KIT_DATA
from autograder.config.course import CourseConfig
HANDOUT_CODE = Path(__file__).resolve().parent
from autograder.handout.data import write_check_data
from autograder.intake import SOURCE_SUFFIXES
from autograder.variants.draw import Variant
from autograder.variants.handout import VARIED_FILES, with_numbers

CHECKER = "check.py"
# check.py's modules, beside it: the child that runs the student's code, its comparisons with answers,
# the properties the grader tests with code, the failed checks grouped by cause as the grader's pages
# group them, and the sandbox's reading of a returned dict or figure.
MODULES = {"check_child.py": HANDOUT_CODE / "check_child.py",
           "check_answers.py": HANDOUT_CODE / "check_answers.py",
           "check_properties.py": HANDOUT_CODE / "check_properties.py",
           "check_causes.py": HANDOUT_CODE / "check_causes.py",
           "figure_reading.py": HANDOUT_CODE / "figure_reading.py",
           "check_convert.py": HANDOUT_CODE.parent / "sandbox" / "inside" / "convert.py"}
DATA_FOLDER = "check_data"


class HandoutError(Exception):
    """The handout cannot be written where it was asked for."""


def write_checker(out: Path, course: CourseConfig, variant: Variant | None = None) -> list[Path]:
    """check.py and check_data/ in `out`: what a folder needs for students to check their work
    (on `variant`: that student's numbers and identity)."""
    out.mkdir(parents=True, exist_ok=True)
    shutil.copyfile(HANDOUT_CODE / "student_check.py", out / CHECKER)
    for name, source in MODULES.items():
        shutil.copyfile(source, out / name)
    return [out / CHECKER, *(out / name for name in MODULES), *write_check_data(out / DATA_FOLDER, course, variant)]


def write_handout(out: Path, course: CourseConfig, *, force: bool = False,
                  variant: Variant | None = None) -> list[Path]:
    """The whole handout in `out`; a folder that already holds files is left alone unless `force`
    (it may be a student's work). On `variant`: the exercises' text and check data carry that
    student's numbers (autograder/variants/handout.py)."""
    if out.exists() and not out.is_dir():
        raise HandoutError(f"{out} is a file; give a folder to write the handout into")
    if out.is_dir() and any(out.iterdir()) and not force:
        raise HandoutError(f"{out} is not empty; give a new folder, or --force to overwrite the handout's files "
                           f"in it (a student's edited exercise files would be overwritten too)")
    out.mkdir(parents=True, exist_ok=True)
    written = []
    for stem in course.exercises:
        for suffix in SOURCE_SUFFIXES:
            source = KIT_DATA / "exercises" / f"{stem}{suffix}"
            if source.is_file():
                if variant is not None and stem in VARIED_FILES:
                    (out / source.name).write_bytes(with_numbers(source, variant))
                else:
                    shutil.copyfile(source, out / source.name)
                written.append(out / source.name)
    written += write_checker(out, course, variant)
    (out / "README.md").write_text(STUDENT_README.format(course=course.course), encoding="utf-8")
    return [*written, out / "README.md"]


STUDENT_README = """# {course}

Fill in each exercise file (`.py` in any editor, or the `.ipynb` notebook in Jupyter) where it
says `TODO(<task id>)`. Then check your work:

```bash
python check.py               # every exercise
python check.py attention     # one exercise
python check.py --watch       # check an exercise again each time you save it (Ctrl-C stops)
```

You need Python 3 with numpy, torch and matplotlib. `check.py` runs the visible checks of the
course on your own machine: it says what differs and where, and names a known mistake when your
answer is the one that mistake gives. When both `attention.py` and `attention.ipynb` are here, it
checks the one you saved last. Hidden checks, and the values of your hand computation, are graded
after you hand in.
"""
