"""Run the exercises as an nbgrader course: ``attnkit nbgrader COURSE_DIR [--force]``.

Writes a course folder that nbgrader (0.9) manages as it is::

    COURSE_DIR/
      nbgrader_config.py            course id, exchange root (with --exchange), the kit's autograde
                                    preprocessors and collect, timeouts from course.yml
      attnkit_course.yml            the course file the test cells grade with
      source/<assignment>/<stem>.ipynb   one notebook per exercise, from solutions/<stem>.py
      source/<assignment>/attnkit_tests.py, .json, check.py ...   what the test cells run

In each notebook (see docs/nbgrader.md):

* every code cell holding a ``### BEGIN SOLUTION`` region is an nbgrader solution cell
  (``solution: true, grade: false, locked: false``); nbgrader's ``generate_assignment``
  replaces the region by its stub. A module-level region (the typed answers of the hand
  computation) is preceded by the kit's ``NAME = None  # TODO(...)`` lines, so the release
  still shows what to fill in.
* after the cell (and its demo cells) of each task, a locked autograded test cell worth the
  task's points in course.yml: a comment and ``attnkit_tests.run("<task>")``
  (autograder/handout/notebook_tests.py, released beside the notebook), which runs the handout's
  check.py on the saved notebook in a fresh interpreter for the task's visible checks (listed
  in attnkit_tests.json; the hidden ones are only in the course file, so the released cell
  equals the source cell), prints the report and returns the score: nbgrader's partial
  credit. Under ``nbgrader autograde`` it does nothing: ``autograder.nbgrader.preprocessor``
  grades the submitted file in nbgrader's process and writes the cell's outputs.
* manually graded written questions (markdown cells with ``grade: true, solution: true``): the
  ``written`` questions of the exercise's descriptor (why scores are scaled by sqrt(d_k), what a
  causal mask prevents).

The course folder is the instructor's alone (mode 0700, whatever the umask): it holds the
solutions, the hidden checks' ids, the gradebook and every submission. nbgrader's exchange, the
one folder students write to, is outside it: nbgrader's default unless --exchange names another.
"""

from __future__ import annotations

import json
import math
import re
import shutil
from pathlib import Path

from autograder.build.exercises import (BEGIN, SOLUTIONS_DIR, BuildError, module_level_stub, parse_regions, solution_files,
                              to_notebook)
from autograder.config.course import CourseConfig, course_data
# the test cell after each task, the same in the handout's notebooks (re-exported: the nbgrader
# modules' vocabulary)
from autograder.handout.task_cells import (TESTS_MODULE, cell_timeout, nbgrader_metadata, safe_id,  # noqa: F401
                                           task_cell_source, task_grade_id, task_of, task_points, task_table,
                                           tasks, tests_files, with_test_cells)
from autograder.nbgrader.shared_machine import NBGRADER_EXCHANGE, exchange_root, setup_advice

SOURCE_DIR = "source"
CONFIG_FILE = "nbgrader_config.py"
COURSE_FILE = "attnkit_course.yml"     # the name autograder.nbgrader.cells looks for
COLLECT_CLASS = "autograder.nbgrader.collect.OwnerCheckedCollect"


def written_questions(stem: str) -> tuple:
    """The exercise's manually graded questions (its descriptor's ``written``)."""
    from autograder.checks import EXERCISES

    return EXERCISES[stem].written


def __getattr__(name: str):
    if name == "WRITTEN_QUESTIONS":      # every exercise's, derived (imported lazily: the checks are heavy)
        from autograder.checks import EXERCISES

        return tuple(q for exercise in EXERCISES.values() for q in exercise.written)
    raise AttributeError(name)


class CourseError(Exception):
    """The course cannot be written (COURSE_DIR not empty without --force, a bad solution file)."""


# --------------------------------------------------------------------------- names shared with gradebook.py


def execute_timeout(course: CourseConfig) -> int:
    """nbgrader's per-cell timeout (``Execute.timeout``): longer than the longest test cell's
    own wait, so a test cell always ends with its own message; a hanging student cell is
    interrupted after this many seconds and the run goes on."""
    longest = max((len(ids) for stem in course.exercises for ids in tasks(course, stem).values()), default=1)
    return cell_timeout(course, longest) + 30


# --------------------------------------------------------------------------- cells


def _with_none_stubs(text: str, filename: str, stem: str) -> str:
    """Put the kit's ``NAME = None  # TODO(...)`` lines before each module-level region, so
    the released notebook still names the answers to type in."""
    lines = text.splitlines()
    regions = parse_regions(text, filename, stem)
    for region in sorted((r for r in regions if r.module_level), key=lambda r: r.begin, reverse=True):
        at = (region.task_line or region.begin) - 1
        lines[at:at] = module_level_stub(lines, region, filename)
    return "\n".join(lines) + "\n"


def _tasks_in(source: str, filename: str, stem: str) -> list[str]:
    """The task ids of the solution regions in one cell's source, in order."""
    found: list[str] = []
    for region in parse_regions(source, filename, stem):
        if region.task not in found:
            found.append(region.task)
    return found


def source_notebook(solution_text: str, stem: str, course: CourseConfig, source: str) -> dict:
    """The nbgrader source notebook of one exercise, as an nbformat dict."""
    import nbformat

    text = _with_none_stubs(solution_text, source, stem)
    nb = nbformat.reads(to_notebook(text, stem), as_version=4)
    from autograder.nbgrader.variant_cells import VARIANT_STEM, runtime_numbers, with_runtime_numbers

    if stem == VARIANT_STEM and runtime_numbers(course):     # each student's numbers, drawn as the notebook runs
        with_runtime_numbers(nb)
    task_checks = tasks(course, stem)

    def solution_tasks(cell) -> list[str]:
        if BEGIN not in cell.source:
            return []
        found = _tasks_in(cell.source, f"{source} ({cell['id']})", stem)
        cell.metadata["nbgrader"] = nbgrader_metadata("solution_" + "_".join(safe_id(t.split(".", 1)[1]) for t in found),
                                                      solution=True, grade=False, locked=False)
        return found

    cells, placed = with_test_cells(nb.cells, course, stem, solution_tasks)
    missing = [t for t in task_checks if t not in placed and task_points(course, task_checks[t]) > 0]
    if missing:
        raise BuildError(source, None, f"no solution region for the graded task(s) {', '.join(missing)}")
    for q in written_questions(stem):
        ask = nbformat.v4.new_markdown_cell(q.question)
        ask["id"] = f"{stem}-{q.grade_id}-q".replace("_", "-")[:64]
        ask.metadata["nbgrader"] = nbgrader_metadata(q.grade_id + "_question", solution=False, grade=False, locked=True)
        answer = nbformat.v4.new_markdown_cell(q.answer)
        answer["id"] = f"{stem}-{q.grade_id}".replace("_", "-")[:64]
        answer.metadata["nbgrader"] = nbgrader_metadata(q.grade_id, solution=True, grade=True, locked=False,
                                                points=float(q.points))
        cells += [ask, answer]
    nb.cells = cells
    nbformat.validate(nb)
    return nb


def default_course_id(course: CourseConfig) -> str:
    """nbgrader's course id from the course's name: "Self-Attention from Scratch" -> "self_attention_from_scratch"."""
    return safe_id(course.course).lower() or "attnkit"


def nbgrader_config(course: CourseConfig, course_id: str, exchange: str | None = None) -> str:
    """The course's nbgrader_config.py. `exchange`: the exchange root; None: nbgrader's (its
    default, or a global nbgrader_config.py's, which the students' servers read too)."""
    if exchange is None:
        exchange_line = (f"# Not set here: nbgrader's default ({NBGRADER_EXCHANGE}), or c.Exchange.root of a global\n"
                         "# nbgrader_config.py (e.g. in /etc/jupyter), which the students' servers read too.")
    else:
        exchange_line = f"c.Exchange.root = {str(exchange_root(exchange))!r}"
    a = course.assignment
    return f'''"""nbgrader configuration of this course, written by `attnkit nbgrader` (see the kit's
docs/nbgrader.md). Run nbgrader from this folder: `nbgrader generate_assignment {a}`,
`nbgrader release_assignment {a}`, `nbgrader collect {a}`, `nbgrader autograde {a}`,
`nbgrader generate_feedback {a}`, `nbgrader export`. Students fetch and submit with
`nbgrader fetch_assignment {a}` and `nbgrader submit {a}`, given this course id and exchange."""

import os

c = get_config()  # noqa: F821 (provided by nbgrader when it reads this file)

_here = os.path.dirname(os.path.abspath(__file__))
c.CourseDirectory.root = _here
c.CourseDirectory.course_id = {course_id!r}

# The exchange, where release_assignment puts the assignment and submit puts the students'
# notebooks: a folder every student can write to, outside this one (which is the instructor's alone:
# the solutions, the hidden checks' ids, the gradebook and every submission are in it).
{exchange_line}

# collect takes a submission only from the account it is named after: a folder planted under
# another student's name, or holding links or another account's files, is refused and named.
c.ExchangeFactory.collect = {COLLECT_CLASS!r}

# The kit grades with this course file (points, hidden checks, hints, limits, seed).
os.environ["ATTNKIT_COURSE"] = os.path.join(_here, "{COURSE_FILE}")

# `nbgrader autograde` grades with the kit, in nbgrader's own process: the submitted code is
# read before any kernel runs, graded in one warm sandbox, and each test cell's outputs (the
# report and the score) are written by the kit. nbgrader's Execute is replaced by the kit's
# ExecuteWhereNeeded: a notebook whose autograded cells are all the kit's runs in no kernel.
from autograder.nbgrader.preprocessor import configure  # noqa: E402

configure(c)

# True: run every notebook in a kernel as well, as plain nbgrader does, so that the feedback also
# shows the outputs of the student's own cells (slower; the grade is the same). A notebook with
# test cells of your own (not the kit's) always runs in a kernel: nbgrader reads their outputs.
c.ExecuteWhereNeeded.always = False

# Where a kernel runs, a student cell that runs longer than this many seconds is interrupted
# and the run goes on.
c.Execute.timeout = {execute_timeout(course)}
c.Execute.interrupt_on_timeout = True
'''


# --------------------------------------------------------------------------- the course folder


def write_course(course_dir: Path, kit_root: Path, course: CourseConfig, *, force: bool = False,
                 course_file: Path | None = None, course_id: str | None = None,
                 exchange: Path | None = None) -> list[Path]:
    """Write nbgrader_config.py, attnkit_course.yml and source/<assignment>/ (a notebook per
    exercise, the checker and the test cells' attnkit_tests.py) into ``course_dir``, which only
    its owner may enter; return the files written. Without ``force``, refuses to overwrite an
    existing nbgrader_config.py or source notebook; refuses an exchange inside the course."""
    import nbformat
    import yaml

    course_dir, kit_root = Path(course_dir), Path(kit_root)
    if exchange is not None and exchange_root(exchange).is_relative_to(course_dir.resolve()):
        raise CourseError(f"the exchange {exchange} is inside the course folder {course_dir}, which students must "
                          "not enter: give a folder outside it (nbgrader's default is "
                          f"{NBGRADER_EXCHANGE})")
    by_stem = {p.stem: p for p in solution_files(kit_root)}
    missing = [s for s in course.exercises if s not in by_stem]
    if missing:
        raise CourseError(f"no solution file for the exercise(s) {', '.join(missing)} in {SOLUTIONS_DIR}/")
    assignment_dir = course_dir / SOURCE_DIR / course.assignment
    targets = [course_dir / CONFIG_FILE] + [assignment_dir / f"{s}.ipynb" for s in course.exercises]
    existing = [p for p in targets if p.exists()]
    if existing and not force:
        raise CourseError(f"{existing[0]} already exists (use --force to overwrite the generated files)")
    from autograder.nbgrader.variant_cells import VariantCourseError, refuse_secret, runtime_numbers

    try:
        refuse_secret(course)
    except VariantCourseError as err:
        raise CourseError(str(err)) from None
    notebooks = {}
    for stem in course.exercises:
        path = by_stem[stem]
        source = f"{SOLUTIONS_DIR}/{path.name}"
        notebooks[stem] = source_notebook(path.read_text(encoding="utf-8"), stem, course, source)
    if force and assignment_dir.is_dir():
        shutil.rmtree(assignment_dir)
    course_dir.mkdir(parents=True, exist_ok=True)
    # The solutions, the hidden checks' ids, and later nbgrader's release/, gradebook.db and every
    # student's submitted/ live in here: closed at the top, so what nbgrader writes inside with the
    # instructor's umask is out of reach too.
    try:
        course_dir.chmod(0o700)
    except PermissionError:
        raise CourseError(f"{course_dir}: cannot make it private (mode 700): is it another account's folder?") from None
    assignment_dir.mkdir(parents=True, exist_ok=True)
    # The test cells run the student's checker, not the kit: nbgrader releases these files beside the notebooks.
    from autograder.handout.write import write_checker

    written = write_checker(assignment_dir, course)
    for name, data in tests_files(course).items():
        (assignment_dir / name).write_bytes(data)
        written.append(assignment_dir / name)
    if runtime_numbers(course):
        from autograder.nbgrader.variant_cells import write_variant_module

        written += write_variant_module(assignment_dir, course)
    for stem, nb in notebooks.items():
        target = assignment_dir / f"{stem}.ipynb"
        text = nbformat.writes(nb, version=4)
        target.write_text(text if text.endswith("\n") else text + "\n", encoding="utf-8")
        written.append(target)
    config = course_dir / CONFIG_FILE
    config.write_text(nbgrader_config(course, course_id or default_course_id(course), exchange), encoding="utf-8")
    written.append(config)
    course_copy = course_dir / COURSE_FILE
    if course_file is not None and Path(course_file).is_file():
        course_copy.write_text(Path(course_file).read_text(encoding="utf-8"), encoding="utf-8")
    else:
        course_copy.write_text(yaml.safe_dump(course_data(course), sort_keys=False), encoding="utf-8")
    written.append(course_copy)
    return written


def course_totals(course: CourseConfig) -> tuple[float, float]:
    """The points nbgrader counts for the course: (autograded, written): the test cells' points
    (course.yml's, task by task) and the manually graded written questions'."""
    autograded = sum(spec["points"] for spec in task_table(course).values())
    written = sum(float(q.points) for stem in course.exercises for q in written_questions(stem))
    return autograded, written


def cmd_nbgrader(args, console) -> int:
    from autograder.checks import check_ids
    from autograder.config import KIT_DATA, load_course

    course = load_course(args.course, known_checks=check_ids())
    course_dir = Path(args.course_dir)
    course_id = args.course_id or default_course_id(course)
    try:
        written = write_course(course_dir, KIT_DATA, course, force=args.force, course_file=args.course,
                               course_id=course_id, exchange=args.exchange)
    except (CourseError, BuildError) as err:
        console.print(f"[red]attnkit nbgrader: {err}[/]")
        return 2
    for path in written:
        console.print(f"wrote {path}")
    autograded, written_points = course_totals(course)
    a = course.assignment
    console.print(f"\ncourse id {course_id}; nbgrader will count {autograded:g} autograded + "
                  f"{written_points:g} written = {autograded + written_points:g} points\n"
                  f"{setup_advice(course_dir, course_id, args.exchange)}\n"
                  f"next, from {course_dir} (docs/nbgrader.md walks the whole cycle):\n"
                  f"  nbgrader generate_assignment {a}   # release/: no solutions, no hidden tests\n"
                  f"  nbgrader release_assignment {a}    # into the exchange: students fetch_assignment, submit\n"
                  f"  nbgrader collect {a}               # submitted/<student>/{a}/\n"
                  f"  nbgrader autograde {a}\n"
                  f"  nbgrader generate_feedback {a}\n"
                  f"  nbgrader export                    # grades.csv", highlight=False, soft_wrap=True)
    return 0
