"""`attnkit handout OUT`: the stubs and notebooks, `check.py` and its data, a README for students.

Everything is copied from the kit's generated `exercises/` and `autograder/handout/` or written
from the course: no reference code, no solution, nothing of a hidden check (docs/handout.md).
"""

from __future__ import annotations

import shutil
from pathlib import Path

from autograder.config import KIT_DATA
from autograder.config.course import CourseConfig
from autograder.handout.data import check_data_files, write_check_data
from autograder.handout.task_cells import handout_notebook, tests_files
from autograder.intake import SOURCE_SUFFIXES
from autograder.variants.draw import Variant
from autograder.variants.handout import VARIED_FILES, with_numbers

HANDOUT_CODE = Path(__file__).resolve().parent
CHECKER = "check.py"
# check.py's modules, beside it: its own (unjailed*.py: your code run in a plain child, another
# exercise of yours that a check calls) and the judge package it decides with, the grader's own files byte for
# byte (tests/test_handout_engine.py): reading a file or notebook as Jupyter runs it, which form
# counts, a check's status when a call gave no answer, the comparisons and properties, what is seen
# in a wrong answer and the mistakes told by it, the failed checks grouped by cause.
JUDGE = HANDOUT_CODE.parent / "judge"
MODULES = {**{name: HANDOUT_CODE / name for name in ("unjailed.py", "unjailed_child.py", "unjailed_imports.py",
                                                     "unjailed_report.py", "unjailed_siblings.py")},
           **{f"judge/{path.name}": path for path in sorted(JUDGE.glob("*.py"))}}
DATA_FOLDER = "check_data"


class HandoutError(Exception):
    """The handout cannot be written where it was asked for."""


def write_checker(out: Path, course: CourseConfig, variant: Variant | None = None) -> list[Path]:
    """check.py and check_data/ in `out`: what a folder needs for students to check their work
    (on `variant`: that student's numbers and identity)."""
    out.mkdir(parents=True, exist_ok=True)
    shutil.copyfile(HANDOUT_CODE / "student_check.py", out / CHECKER)
    for name, source in MODULES.items():
        (out / name).parent.mkdir(exist_ok=True)
        shutil.copyfile(source, out / name)
    return [out / CHECKER, *(out / name for name in MODULES), *write_check_data(out / DATA_FOLDER, course, variant)]


def shared_files(course: CourseConfig, varied: bool = False) -> dict[str, Path | bytes]:
    """The handout's files that are the same for every student (name in the handout -> the file
    to copy, or its bytes): the exercises' stubs and notebooks (with `varied`, those that show a
    student's numbers left out), check.py and its modules, the README."""
    files: dict[str, Path | bytes] = {}
    for stem in course.exercises:
        for suffix in SOURCE_SUFFIXES:
            source = KIT_DATA / "exercises" / f"{stem}{suffix}"
            if source.is_file() and not (varied and stem in VARIED_FILES):
                files[source.name] = with_tests(source.read_bytes(), course, stem) if suffix == ".ipynb" else source
    files[CHECKER] = HANDOUT_CODE / "student_check.py"
    files.update(MODULES)
    files.update(tests_files(course))
    exercise_files = ", ".join(f"`{stem}.py` or `{stem}.ipynb`" for stem in course.exercises)
    files["README.md"] = STUDENT_README.format(course=course.course, files=exercise_files).encode("utf-8")
    return files


def with_tests(notebook: bytes, course: CourseConfig, stem: str) -> bytes:
    """A stub notebook with the test cell after each task, as in the nbgrader release (task_cells.py)."""
    return handout_notebook(notebook.decode("utf-8"), course, stem)


def own_files(course: CourseConfig, variant: Variant, *, compressed: bool = True) -> dict[str, bytes]:
    """The handout's files that are one student's own: the exercises that show their numbers, and
    check_data/ for their seed (`compressed`: data.check_data_files')."""
    files = {}
    for stem in course.exercises:
        for suffix in SOURCE_SUFFIXES:
            source = KIT_DATA / "exercises" / f"{stem}{suffix}"
            if source.is_file() and stem in VARIED_FILES:
                files[source.name] = with_tests(with_numbers(source, variant), course, stem) \
                    if suffix == ".ipynb" else with_numbers(source, variant)
    files.update({f"{DATA_FOLDER}/{name}": data
                  for name, data in check_data_files(course, variant, compressed=compressed).items()})
    return files


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
    files = {**shared_files(course, varied=variant is not None),
             **(own_files(course, variant) if variant is not None else
                {f"{DATA_FOLDER}/{name}": data for name, data in check_data_files(course).items()})}
    for name, source in files.items():
        (out / name).parent.mkdir(parents=True, exist_ok=True)       # judge/ and check_data/
        if isinstance(source, Path):
            shutil.copyfile(source, out / name)
        else:
            (out / name).write_bytes(source)
    return [out / name for name in files]


STUDENT_README = """# {course}

## Set up (once)

You need Python 3.10 or newer. Make a virtual environment for the course in this folder, and
install numpy, matplotlib and torch in it (PyTorch's CPU build is enough, a fraction of the size
of the default GPU build), and Jupyter if you work in the notebooks:

```bash
python3 -m venv .venv
source .venv/bin/activate            # Windows: .venv\\Scripts\\activate
pip install numpy matplotlib torch --extra-index-url https://download.pytorch.org/whl/cpu
pip install jupyter                  # for the notebooks (.ipynb) only
```

Activate it again (the `source` line) in each new terminal. With conda instead:
`conda create -n attention python=3.12 numpy matplotlib pytorch cpuonly jupyter -c pytorch`, then
`conda activate attention`.

## Work and check

Fill in each exercise where it says `TODO(<task id>)`, in the `.py` file (any editor) or in the
`.ipynb` notebook (Jupyter: `jupyter notebook` or `jupyter lab` in this folder): one of the two per
exercise. In a notebook, each task is followed by a test cell: save the notebook (Ctrl-S), then run
that cell; it checks the saved file, as `check.py` does. In a terminal, in this folder:

```bash
python check.py                       # every exercise
python check.py attention causal_mask # these exercises (attention.py or attention.ipynb name it too)
python check.py --watch               # check an exercise again each time you save it, and those that call it (Ctrl-C stops)
python check.py --watch attention     # watch these exercises only
python check.py --json results.json   # also write each check's result to a file
python check.py --help                # the exercises and these options
```

`check.py` runs the course's visible checks with the grader's own code: the same reading of your
file or notebook (a notebook runs as Jupyter's Run All: magics and `display` work, a cell that
raises is skipped and named), the same comparisons, the same hints, each said once per cause.
Hidden checks, and the values of your hand computation, are graded after you hand in.

An exercise may use another (`from attention import softmax` in the causal mask): the grader gives
it a correct `attention`, so a mistake there is not charged twice. `check.py` has only yours: a
check that fails while it calls your `attention`, which does not pass its own checks yet, "waits
on attention" and is not decided until that exercise passes. Python (and Jupyter) imports
`attention.py`, never `attention.ipynb`: if you work in the notebook, download it as `attention.py`
(Jupyter: File > Download as > Python) before another exercise imports it.

## Which file counts, and what to hand in

Each exercise is graded from the file that holds your work: if you work in `attention.ipynb`, the
untouched `attention.py` beside it does not count against you, and the other way round. Which was
saved last plays no part. If both hold work, both are graded and the better counts. A file of yours
that does not compile still counts over an untouched stub: its error is what you get back, so fix
it before you hand in. `check.py` says, above each exercise's checks, which file it checked and why.

Hand in the exercise files you worked in ({files}), under their own names; `check.py` and
`check_data/` need not be handed in.
"""
