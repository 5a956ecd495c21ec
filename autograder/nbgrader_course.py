"""Run the exercises as an nbgrader course: ``attnkit nbgrader COURSE_DIR [--force]``.

Writes a course folder that nbgrader (0.9) manages as it is::

    COURSE_DIR/
      nbgrader_config.py            the kit's autograde preprocessors, timeouts from course.yml
      attnkit_course.yml            the course file the test cells grade with
      source/<assignment>/<stem>.ipynb   one notebook per exercise, from solutions/<stem>.py

In each notebook (see docs/nbgrader.md):

* every code cell holding a ``### BEGIN SOLUTION`` region is an nbgrader solution cell
  (``solution: true, grade: false, locked: false``); nbgrader's ``generate_assignment``
  replaces the region by its stub. A module-level region (the typed answers of the hand
  computation) is preceded by the kit's ``NAME = None  # TODO(...)`` lines, so the release
  still shows what to fill in.
* after the cell (and its demo cells) of each task, a locked autograded test cell worth the
  task's points in course.yml. It lists the task's visible checks; the hidden ones are only in
  the course file, so the released cell equals the source cell. Run by the student, it grades
  the saved notebook in a fresh interpreter (``python -I -m autograder.nbgrader_cell``), prints
  the report and ends with the score as a bare float: nbgrader's partial credit. Under
  ``nbgrader autograde`` it does nothing: ``autograder.nbgrader_preprocessor`` grades the
  submitted file in nbgrader's process and writes the cell's outputs.
* manually graded written questions (markdown cells with ``grade: true, solution: true``): the
  ``written`` questions of the exercise's descriptor (why scores are scaled by sqrt(d_k), what a
  causal mask prevents).
"""

from __future__ import annotations

import json
import math
import re
import shutil
from pathlib import Path

from autograder.build import (BEGIN, SOLUTIONS_DIR, BuildError, module_level_stub, parse_regions, solution_files,
                              to_notebook)
from autograder.config import CourseConfig

NBGRADER_SCHEMA = 3
SOURCE_DIR = "source"
CONFIG_FILE = "nbgrader_config.py"
COURSE_FILE = "attnkit_course.yml"     # the name autograder.nbgrader_cell looks for
GRADER_STARTUP = 60                    # seconds a test cell allows for starting the grader and its sandbox


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


def safe_id(text: str) -> str:
    return re.sub(r"[^A-Za-z0-9_]+", "_", text).strip("_")


def task_grade_id(task: str) -> str:
    """The grade id of the autograded test cell of a task: ``attention.softmax`` ->
    ``tests_attention_softmax``."""
    return "tests_" + safe_id(task)


def task_of(check_id: str) -> str:
    return ".".join(check_id.split(".")[:2])


def tasks(course: CourseConfig, stem: str) -> dict[str, list[str]]:
    """The tasks of an exercise and their check ids, in the kit's order (only checks the
    course gives points to, or lists with 0 points)."""
    from autograder.checks import CHECKS

    out: dict[str, list[str]] = {}
    for check in CHECKS[stem]:
        if check.id in course.exercises[stem].checks:
            out.setdefault(task_of(check.id), []).append(check.id)
    return out


def task_points(course: CourseConfig, check_ids: list[str]) -> float:
    return float(sum(course.check(cid).points for cid in check_ids))


def cell_timeout(course: CourseConfig, n_checks: int) -> int:
    """Seconds a test cell waits for its grader: start-up, one import of the notebook's code
    and every call running into the call limit (the sandbox stops calling a function after
    its first timeout, so this is generous)."""
    lim = course.limits
    return int(math.ceil(GRADER_STARTUP + 2 * lim.import_timeout + n_checks * lim.call_timeout))


def execute_timeout(course: CourseConfig) -> int:
    """nbgrader's per-cell timeout (``Execute.timeout``): longer than the longest test cell's
    own wait, so a test cell always ends with its own message; a hanging student cell is
    interrupted after this many seconds and the run goes on."""
    longest = max((len(ids) for stem in course.exercises for ids in tasks(course, stem).values()), default=1)
    return cell_timeout(course, longest) + 30


# --------------------------------------------------------------------------- cells


def _nbgrader(grade_id: str, *, solution: bool, grade: bool, locked: bool, points: float | None = None) -> dict:
    meta = {"grade": grade, "grade_id": grade_id, "locked": locked, "schema_version": NBGRADER_SCHEMA,
            "solution": solution}
    if points is not None:
        meta["points"] = points
    return meta


def task_cell_source(stem: str, task: str, visible: list[str], hidden_points: float, points: float,
                     timeout: int) -> str:
    """The code of one autograded test cell. Self-contained: it uses nothing the notebook
    defined, imports under private names, writes nothing to stderr, and ends with a float.
    It lists only the visible checks: the hidden ones are known to the grader (course file),
    so the released cell is the source cell and nbgrader sees no changed checksum.
    Under ``nbgrader autograde`` (``ATTNKIT_AUTOGRADE`` set by the kit's preprocessor) it does
    nothing: the preprocessor grades the submitted file and writes this cell's outputs."""
    from autograder.nbgrader_cell import MARKER_ENV

    notebook = f"{stem}.ipynb"
    pts = f"{points:g}"
    listing = "[\n" + "".join(f"    {json.dumps(i)},\n" for i in visible) + "]"
    lines = [f"# Autograder tests for {task} ({pts} points). Save the notebook first: this cell checks",
             f"# the saved {notebook} with check.py (beside it) in a fresh Python process, not the variables",
             "# of this kernel. Its score here counts the visible checks; the grade is made after you hand in."]
    if hidden_points:
        lines.append(f"# {hidden_points:g} of the {pts} points are for hidden checks, graded after you hand in.")
    lines += [
        "import json as _attnkit_json, os as _attnkit_os, subprocess as _attnkit_subprocess, sys as _attnkit_sys",
        f"_attnkit_checks = {listing}",
        "_attnkit_score = 0.0",
        f'if __name__ == "__main__" and _attnkit_checks and not _attnkit_os.environ.get("{MARKER_ENV}"):',
        "    _attnkit_run = None",
        "    try:",
        "        _attnkit_run = _attnkit_subprocess.run(",
        '            [_attnkit_sys.executable, "-I", "check.py", "--cell", ' + json.dumps(stem) + ', *_attnkit_checks],',
        f"            capture_output=True, text=True, timeout={timeout}, stdin=_attnkit_subprocess.DEVNULL)",
        "        _attnkit_result = [_attnkit_json.loads(_line) for _line in _attnkit_run.stdout.splitlines()",
        '                           if _line.startswith(\'{"attnkit"\')][-1]',
        '        print(_attnkit_result["report"])',
        f'        _attnkit_score = min(max(float(_attnkit_result["score"]), 0.0), {pts})',
        "    except Exception as _attnkit_error:",
        '        print(f"The grader could not run: {type(_attnkit_error).__name__}: {_attnkit_error}")',
        "        if _attnkit_run is not None:",
        "            print(_attnkit_run.stderr[-1500:])",
        "_attnkit_score",
    ]
    return "\n".join(lines)


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
    nb = nbformat.reads(to_notebook(text, stem, source), as_version=4)
    nb.metadata["attnkit"] = {"generated_from": source, "generated_by": "attnkit nbgrader"}
    task_checks = tasks(course, stem)
    placed: set[str] = set()
    cells = []
    pending: list[str] = []        # tasks whose test cell goes after the demo cells that follow

    def flush():
        for task in pending:
            ids = task_checks[task]
            points = task_points(course, ids)
            if points <= 0:
                continue
            visible = [c for c in ids if not course.check(c).hidden]
            hidden_points = task_points(course, [c for c in ids if course.check(c).hidden])
            cell = nbformat.v4.new_code_cell(task_cell_source(stem, task, visible, hidden_points, points,
                                                              cell_timeout(course, len(visible))))
            cell["id"] = safe_id(f"{stem}-{task_grade_id(task)}").replace("_", "-")[:64]
            cell.metadata["nbgrader"] = _nbgrader(task_grade_id(task), solution=False, grade=True, locked=True,
                                                  points=points)
            cell.metadata["editable"] = False
            cell.metadata["deletable"] = False
            cells.append(cell)
            placed.add(task)
        pending.clear()

    for cell in nb.cells:
        is_demo = cell.cell_type == "code" and cell.source.lstrip().startswith('if __name__ == "__main__"')
        if pending and not is_demo:
            flush()
        cells.append(cell)
        if cell.cell_type == "code" and BEGIN in cell.source:
            found = _tasks_in(cell.source, f"{source} ({cell['id']})", stem)
            cell.metadata["nbgrader"] = _nbgrader("solution_" + "_".join(safe_id(t.split(".", 1)[1]) for t in found),
                                                  solution=True, grade=False, locked=False)
            pending += [t for t in found if t in task_checks and t not in pending]
    flush()
    missing = [t for t in task_checks if t not in placed and task_points(course, task_checks[t]) > 0]
    if missing:
        raise BuildError(source, None, f"no solution region for the graded task(s) {', '.join(missing)}")
    for q in written_questions(stem):
        ask = nbformat.v4.new_markdown_cell(q.question)
        ask["id"] = f"{stem}-{q.grade_id}-q".replace("_", "-")[:64]
        ask.metadata["nbgrader"] = _nbgrader(q.grade_id + "_question", solution=False, grade=False, locked=True)
        answer = nbformat.v4.new_markdown_cell(q.answer)
        answer["id"] = f"{stem}-{q.grade_id}".replace("_", "-")[:64]
        answer.metadata["nbgrader"] = _nbgrader(q.grade_id, solution=True, grade=True, locked=False,
                                                points=float(q.points))
        cells += [ask, answer]
    nb.cells = cells
    nbformat.validate(nb)
    return nb


def nbgrader_config(course: CourseConfig) -> str:
    return f'''"""nbgrader configuration of this course, written by `attnkit nbgrader` (see the kit's
docs/nbgrader.md). Run nbgrader from this folder: `nbgrader generate_assignment {course.assignment}`,
`nbgrader autograde {course.assignment}`, `nbgrader generate_feedback {course.assignment}`, `nbgrader export`."""

import os

c = get_config()  # noqa: F821 (provided by nbgrader when it reads this file)

_here = os.path.dirname(os.path.abspath(__file__))
c.CourseDirectory.root = _here

# The kit grades with this course file (points, hidden checks, hints, limits, seed).
os.environ["ATTNKIT_COURSE"] = os.path.join(_here, "{COURSE_FILE}")

# `nbgrader autograde` grades with the kit, in nbgrader's own process: the submitted code is
# read before any kernel runs, graded in one warm sandbox, and each test cell's outputs (the
# report and the score) are written by the kit after the kernel is done.
from autograder.nbgrader_preprocessor import configure  # noqa: E402

configure(c)

# A student cell that runs longer than this many seconds is interrupted and the run goes on.
c.Execute.timeout = {execute_timeout(course)}
c.Execute.interrupt_on_timeout = True
'''


# --------------------------------------------------------------------------- the course folder


def write_course(course_dir: Path, kit_root: Path, course: CourseConfig, *, force: bool = False,
                 course_file: Path | None = None) -> list[Path]:
    """Write nbgrader_config.py, attnkit_course.yml and source/<assignment>/<stem>.ipynb into
    ``course_dir``; return the files written. Without ``force``, refuses to overwrite an
    existing nbgrader_config.py or source notebook."""
    import nbformat
    import yaml

    course_dir, kit_root = Path(course_dir), Path(kit_root)
    by_stem = {p.stem: p for p in solution_files(kit_root)}
    missing = [s for s in course.exercises if s not in by_stem]
    if missing:
        raise CourseError(f"no solution file for the exercise(s) {', '.join(missing)} in {SOLUTIONS_DIR}/")
    assignment_dir = course_dir / SOURCE_DIR / course.assignment
    targets = [course_dir / CONFIG_FILE] + [assignment_dir / f"{s}.ipynb" for s in course.exercises]
    existing = [p for p in targets if p.exists()]
    if existing and not force:
        raise CourseError(f"{existing[0]} already exists (use --force to overwrite the generated files)")
    notebooks = {}
    for stem in course.exercises:
        path = by_stem[stem]
        source = f"{SOLUTIONS_DIR}/{path.name}"
        notebooks[stem] = source_notebook(path.read_text(encoding="utf-8"), stem, course, source)
    if force and assignment_dir.is_dir():
        shutil.rmtree(assignment_dir)
    assignment_dir.mkdir(parents=True, exist_ok=True)
    # The test cells run the student's checker, not the kit: nbgrader releases these files beside the notebooks.
    from autograder.handout.write import write_checker

    written = write_checker(assignment_dir, course)
    for stem, nb in notebooks.items():
        target = assignment_dir / f"{stem}.ipynb"
        text = nbformat.writes(nb, version=4)
        target.write_text(text if text.endswith("\n") else text + "\n", encoding="utf-8")
        written.append(target)
    config = course_dir / CONFIG_FILE
    config.write_text(nbgrader_config(course), encoding="utf-8")
    written.append(config)
    course_copy = course_dir / COURSE_FILE
    if course_file is not None and Path(course_file).is_file():
        course_copy.write_text(Path(course_file).read_text(encoding="utf-8"), encoding="utf-8")
    else:
        course_copy.write_text(yaml.safe_dump(course.model_dump(mode="json"), sort_keys=False), encoding="utf-8")
    written.append(course_copy)
    return written


def cmd_nbgrader(args, console) -> int:
    from autograder.checks import check_ids
    from autograder.config import KIT_ROOT, load_course

    course = load_course(args.course, known_checks=check_ids())
    course_dir = Path(args.course_dir)
    try:
        written = write_course(course_dir, KIT_ROOT, course, force=args.force, course_file=args.course)
    except (CourseError, BuildError) as err:
        console.print(f"[red]attnkit nbgrader: {err}[/]")
        return 2
    for path in written:
        console.print(f"wrote {path}")
    console.print(f"\nnext, from {course_dir}:\n"
                  f"  nbgrader generate_assignment {course.assignment}      # release/: no solutions, no hidden tests\n"
                  f"  nbgrader autograde {course.assignment}                # submitted/<student>/{course.assignment}/\n"
                  f"  nbgrader generate_feedback {course.assignment}\n"
                  f"  nbgrader export                                # grades.csv")
    return 0
