"""The hand computation's notebook of an nbgrader course with variants: each student's numbers drawn
when the notebook runs, from the id JupyterHub and nbgrader know them by (docs/nbgrader.md, "variants").

nbgrader releases one notebook to the whole class, so the numbers cannot be written into it. The
course's numbers are taken out of the markdown (the LaTeX matrices, the table of embeddings) and
out of the answer cells (the lines defining Q, K, V and X); before each answer cell a cell draws the
student's own with attnkit_variant.py (autograder/nbgrader/notebook_variant.py, kit-free, released
beside the notebook) and shows them as its output, since a markdown cell cannot change. A last cell
drills on fresh numbers. These cells carry `metadata.attnkit.role`: the grader leaves them out
(autograder/intake/load.py), since it recomputes the student's numbers from nbgrader's id and
grades only the answers.
"""

from __future__ import annotations

import json
import re
import shutil
from pathlib import Path

from autograder.config.course import CourseConfig
from autograder.intake.load import KIT_CELL_ROLES

VARIANT_MODULE = "attnkit_variant"          # released beside the notebooks
VARIANT_STEM = "hand_computation"
NUMBERS, PRACTICE = KIT_CELL_ROLES          # metadata.attnkit.role: autograder/intake/load.py leaves these out

PART_A_LATEX = re.compile(r"\$\$Q = \\begin\{pmatrix\}.*?\$\$", re.DOTALL)
PART_B_TABLE = re.compile(r"\| token \| embedding \|\n\|---\|---\|\n(\| \w+ \| [^\n]*\|\n?){3}")
PART_A_CODE = re.compile(r"^[QKV] = \[\[[^\n]*\]\]\n", re.MULTILINE)
PART_B_CODE = re.compile(r"^X = \[\n(    \[[^\n]*\],  # \w+\n){3}\]\n", re.MULTILINE)

PART_A_TEXT = "Your own $Q$, $K$ and $V$ are drawn from your student id: the cell below shows them."
PART_B_TEXT = "Your own embeddings are drawn from your student id: the cell below shows them, one row per token."

PART_A_CELL = f"""\
# Your numbers, drawn from your student id ({VARIANT_MODULE}.py, beside this notebook): the same each
# time you run this cell, and not your neighbour's. Under JupyterHub the id is your login; to work
# elsewhere, write the id your course knows you by here: STUDENT_ID = "your id".
STUDENT_ID = None
import {VARIANT_MODULE}
Q, K, V = {VARIANT_MODULE}.part_a(STUDENT_ID)"""

PART_B_CELL = f"""\
# Your embeddings (cat, sat, mat: one row each), drawn from your student id as above.
X = {VARIANT_MODULE}.part_b(STUDENT_ID)"""

PRACTICE_MARKDOWN = """\
## Practice on fresh numbers (not graded)

Want another round first? The cell below draws new numbers (never your graded ones) and checks
your steps one by one, explaining the first wrong one. Run it once to get numbers and their seed,
write the seed into `PRACTICE_SEED`, fill in your steps and run it again."""

PRACTICE_CELL = f"""\
import {VARIANT_MODULE}
PRACTICE_SEED = None      # None: new numbers each run; the seed they show, to keep them
PRACTICE = dict(SCORES=None, SCALED_SCORES=None, WEIGHTS=None, OUTPUT=None,
                CSM_SCORES=None, CSM_WEIGHTS=None, CSM_OUTPUT=None)
print({VARIANT_MODULE}.practice(PRACTICE_SEED, PRACTICE))"""


class VariantCourseError(Exception):
    """The course's variants cannot be released as one nbgrader notebook (the message says why and what to do)."""


def runtime_numbers(course: CourseConfig) -> bool:
    """Whether the course's hand computation notebook draws each student's numbers when it runs."""
    return (course.variants.enabled and "hand" in course.variants.vary and VARIANT_STEM in course.exercises)


def refuse_secret(course: CourseConfig) -> None:
    if runtime_numbers(course) and course.variants.secret_env:
        raise VariantCourseError(
            f"course.yml: variants.secret_env ({course.variants.secret_env}) keys the draw with a secret, and an "
            f"nbgrader release would have to ship it in every student's folder for the notebook to draw their "
            f"numbers. Either remove secret_env (the numbers then follow from the course and the student id, "
            f"which is what an nbgrader release can do), or release per-student handouts instead: `attnkit handout "
            f"OUT --roster ROSTER.csv` (docs/variants.md)")


def _must_sub(pattern: re.Pattern, replacement: str, text: str, what: str) -> str:
    new, count = pattern.subn(lambda _: replacement, text, count=1)
    if not count:
        raise VariantCourseError(f"the course's {what} are not in the hand computation's notebook; update "
                                 f"autograder/nbgrader/variant_cells.py to the exercise's new text")
    return new


def _cell(kind: str, source: str, cell_id: str, role: str | None):
    import nbformat

    cell = nbformat.v4.new_code_cell(source) if kind == "code" else nbformat.v4.new_markdown_cell(source)
    cell["id"] = cell_id
    if role:
        cell.metadata["attnkit"] = {"role": role}
    return cell


def with_runtime_numbers(nb) -> None:
    """Rewrite the hand computation's source notebook (in place) to draw each student's numbers."""
    cells = []
    done = set()
    for cell in nb.cells:
        if cell.cell_type == "markdown" and PART_A_LATEX.search(cell.source):
            cell.source = _must_sub(PART_A_LATEX, PART_A_TEXT, cell.source, "Q, K and V (LaTeX)")
            cells += [cell, _cell("code", PART_A_CELL, "hand-computation-your-numbers-a", NUMBERS)]
            done.add("markdown A")
            continue
        if cell.cell_type == "markdown" and PART_B_TABLE.search(cell.source):
            cell.source = _must_sub(PART_B_TABLE, PART_B_TEXT + "\n", cell.source, "embeddings (table)")
            cells += [cell, _cell("code", PART_B_CELL, "hand-computation-your-numbers-b", NUMBERS)]
            done.add("markdown B")
            continue
        if cell.cell_type == "code" and PART_A_CODE.search(cell.source):
            cell.source = PART_A_CODE.sub("", cell.source)
            done.add("code A")
        if cell.cell_type == "code" and PART_B_CODE.search(cell.source):
            cell.source = _must_sub(PART_B_CODE, "", cell.source, "embeddings (code)")
            done.add("code B")
        cells.append(cell)
    missing = {"markdown A", "markdown B", "code A", "code B"} - done
    if missing:
        raise VariantCourseError(f"the course's numbers ({', '.join(sorted(missing))}) are not in the hand "
                                 f"computation's notebook; update autograder/nbgrader/variant_cells.py")
    cells += [_cell("markdown", PRACTICE_MARKDOWN, "hand-computation-practice-intro", None),
              _cell("code", PRACTICE_CELL, "hand-computation-practice", PRACTICE)]
    nb.cells = cells


def write_variant_module(assignment_dir: Path, course: CourseConfig) -> list[Path]:
    """attnkit_variant.py and the course identity it draws with (no secret: refuse_secret)."""
    from autograder.variants.draw import course_identity

    module = assignment_dir / f"{VARIANT_MODULE}.py"
    shutil.copyfile(Path(__file__).with_name("notebook_variant.py"), module)
    settings = assignment_dir / f"{VARIANT_MODULE}.json"
    settings.write_text(json.dumps({"identity": course_identity(course), "hand_tolerance": course.tolerances.hand},
                                   indent=1) + "\n", encoding="utf-8")
    return [module, settings]
