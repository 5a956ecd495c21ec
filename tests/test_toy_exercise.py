"""A sixth exercise is four files: its reference, its solution, its checks module (with the
descriptor and its misconceptions) and its course.yml entry. Nothing else in the kit changes,
and it is built by `attnkit build`, graded by `attnkit check`, `attnkit grade`, the pytest plugin
and the real `nbgrader autograde` in the generated course, with the same points on every path."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from autograder.config import KIT_ROOT

REFERENCE = '''
"""Dot-product scores: the reference of the toy exercise."""

import numpy as np


def dot_scores(Q, K):
    """(..., n_q, d) and (..., n_k, d) -> (..., n_q, n_k): every query against every key."""
    return np.asarray(Q, dtype=np.float64) @ np.swapaxes(np.asarray(K, dtype=np.float64), -1, -2)
'''

SOLUTION = '''
# ---
# jupyter:
#   jupytext:
#     text_representation:
#       extension: .py
#       format_name: percent
#       format_version: '1.3'
#   kernelspec:
#     display_name: Python 3
#     language: python
#     name: python3
# ---

# %% [markdown]
# # Exercise 6 - Dot-product scores
#
# Every query against every key.

# %%
import numpy as np


# %%
def dot_scores(Q, K):
    """(..., n_q, d) and (..., n_k, d) -> (..., n_q, n_k)."""
    ### BEGIN SOLUTION
    return np.asarray(Q) @ np.swapaxes(np.asarray(K), -1, -2)
    ### END SOLUTION
'''

CHECKS = '''
"""Checks for toy.py: dot-product scores, and the mistakes the grader recognises in it."""

import numpy as np

from autograder.checks.base import Check, compare_arrays
from autograder.checks.exercise import Exercise
from autograder.checks.misconception import Misconception


def _keys_all_axes_reversed(Q, K):
    return np.asarray(Q) @ np.asarray(K).T          # .T reverses every axis of a batch of keys


CATALOGUE = [
    Misconception("transpose_all_axes", "toy", "K.T reverses every axis of a batch of keys, not the last two: "
                  "swap only the last two axes.", lambda: {"dot_scores": _keys_all_axes_reversed}),
]

CHECKS = [
    Check("toy.dot_scores.batched", "scores of a batch: (2, 3, 4) against (2, 5, 4)",
          inputs=lambda rng: {"Q": rng.normal(size=(2, 3, 4)), "K": rng.normal(size=(2, 5, 4))},
          run=lambda impl, i: impl.dot_scores(i["Q"], i["K"]), compare=compare_arrays("scores", weights=())),
]

EXERCISE = Exercise(stem="toy", title="Dot-product scores", order=6, returns={"dot_scores": "array"},
                    checks=CHECKS, catalogue=__name__)
'''

COURSE_ENTRY = '''
  toy:
    title: Dot-product scores
    checks:
      toy.dot_scores.batched: 2
'''


@pytest.fixture(scope="module")
def kit(tmp_path_factory) -> Path:
    """A copy of the kit (its tracked files) with the toy exercise's four files written."""
    root = tmp_path_factory.mktemp("kit") / "attnkit"
    files = subprocess.run(["git", "ls-files", "-z", "--cached", "--others", "--exclude-standard"], cwd=KIT_ROOT, capture_output=True, check=True).stdout
    for name in filter(None, files.decode().split("\0")):
        if name.startswith(("tests/", "demo/", "benchmarks/")) or not (KIT_ROOT / name).is_file():
            continue
        (root / name).parent.mkdir(parents=True, exist_ok=True)
        try:
            shutil.copy2(KIT_ROOT / name, root / name)
        except FileNotFoundError:      # gone since it was listed: another test's scratch file, not the kit
            continue
    written = {"reference/toy.py": REFERENCE, "solutions/toy.py": SOLUTION, "autograder/checks/toy.py": CHECKS}
    for name, text in written.items():
        (root / name).write_text(textwrap.dedent(text).lstrip(), encoding="utf-8")
    with open(root / "course.yml", "a", encoding="utf-8") as fh:            # the fourth file
        fh.write(COURSE_ENTRY)
    return root


def _run(cwd: Path, *args: str, kit_path: Path | None = None, timeout: float = 600) -> subprocess.CompletedProcess:
    """Python in the copy: the copy's folder comes first on sys.path, so the copy's kit runs."""
    env = {k: v for k, v in os.environ.items() if k != "PYTHONPATH"} | {"PYTHONPATH": str(kit_path or cwd)}
    return subprocess.run([sys.executable, *args], cwd=cwd, capture_output=True, text=True, timeout=timeout, env=env)


def test_build_makes_the_toy_stub(kit):
    run = _run(kit, "-m", "autograder.cli", "build")
    assert run.returncode == 0, run.stdout + run.stderr
    assert (kit / "exercises" / "toy.py").is_file() and (kit / "exercises" / "toy.ipynb").is_file()
    assert "NotImplementedError" in (kit / "exercises" / "toy.py").read_text()


def test_attnkit_check_grades_the_toy_exercise(kit):
    solved = _run(kit, "-m", "autograder.cli", "check", "--submission", "solutions", "--exercise", "toy")
    assert solved.returncode == 0 and "2/2" in solved.stdout, solved.stdout + solved.stderr
    wrong = kit / "wrong"
    wrong.mkdir()
    (wrong / "toy.py").write_text("import numpy as np\n\ndef dot_scores(Q, K):\n    return np.asarray(Q) @ "
                                  "np.asarray(K).T\n")
    failed = _run(kit, "-m", "autograder.cli", "check", "--submission", "wrong", "--exercise", "toy")
    assert failed.returncode == 1 and "0/2" in failed.stdout, failed.stdout + failed.stderr



def test_attnkit_grade_grades_the_toy_exercise_in_a_class(kit):
    import csv

    for student, body in (("ada", "np.asarray(Q) @ np.swapaxes(np.asarray(K), -1, -2)"),
                          ("bob", "np.asarray(Q) @ np.asarray(K)")):
        folder = kit / "class" / student
        folder.mkdir(parents=True)
        (folder / "toy.py").write_text(f"import numpy as np\n\ndef dot_scores(Q, K):\n    return {body}\n")
    run = _run(kit, "-m", "autograder.cli", "grade", "class", "--out", "graded", "--jobs", "1")
    assert run.returncode in (0, 1), run.stdout + run.stderr
    with open(kit / "graded" / "grades.csv", newline="") as fh:
        rows = {row["student"]: row for row in csv.DictReader(fh)}
    assert float(rows["ada"]["toy"]) == 2.0 and float(rows["bob"]["toy"]) == 0.0, rows


def test_the_toy_descriptor_names_its_misconceptions(kit):
    """The toy's own catalogue entry (in its checks module, named by its descriptor) explains the
    error of `K.T` on a batch, and `attnkit misconceptions` lists it."""
    wrong = kit / "wrong_keys"
    wrong.mkdir(exist_ok=True)
    (wrong / "toy.py").write_text("import numpy as np\n\ndef dot_scores(Q, K):\n    return np.asarray(Q) @ "
                                  "np.asarray(K).T\n")
    failed = _run(kit, "-m", "autograder.cli", "check", "--submission", "wrong_keys", "--exercise", "toy")
    assert failed.returncode == 1 and "transpose_all_axes" in failed.stdout, failed.stdout + failed.stderr
    assert "swap only the last two axes" in " ".join(failed.stdout.split())
    listed = _run(kit, "-m", "autograder.cli", "misconceptions", "--exercise", "toy")
    assert listed.returncode == 0 and "transpose_all_axes" in listed.stdout, listed.stdout + listed.stderr


def test_pytest_grades_the_toy_exercise(kit):
    run = _run(kit, "-m", "pytest", "autograder", "-p", "no:cacheprovider", "--submission", "solutions",
               "-k", "toy", "-q")
    assert run.returncode == 0 and "1 passed" in run.stdout, run.stdout[-3000:] + run.stderr[-3000:]


def test_the_nbgrader_course_has_the_toy_notebook(kit):
    run = _run(kit, "-m", "autograder.cli", "nbgrader", str(kit / "nbcourse"), "--force")
    assert run.returncode == 0, run.stdout + run.stderr
    notebook = kit / "nbcourse" / "source" / "self_attention" / "toy.ipynb"
    assert notebook.is_file() and "toy.dot_scores" in notebook.read_text()


def _nbgrader(kit: Path, course_dir: Path, *args: str) -> subprocess.CompletedProcess:
    run = _run(course_dir, "-m", "nbgrader", *args, f"--CourseDirectory.root={course_dir}", kit_path=kit)
    assert run.returncode == 0, f"nbgrader {' '.join(args)}:\n{run.stdout[-3000:]}\n{run.stderr[-3000:]}"
    return run


@pytest.mark.slow
def test_nbgrader_autogrades_the_toy_exercise_as_attnkit_check_does(kit):
    """The real nbgrader on the generated course: a right and a wrong toy notebook earn, test
    cell by test cell and in the gradebook, exactly what `attnkit check` gives the same file."""
    import json

    import nbformat

    course_dir = kit / "nbtoy"
    made = _run(kit, "-m", "autograder.cli", "nbgrader", str(course_dir))
    assert made.returncode == 0, made.stdout + made.stderr
    _nbgrader(kit, course_dir, "generate_assignment", "self_attention", "--force")
    source = nbformat.read(course_dir / "source" / "self_attention" / "toy.ipynb", as_version=4)
    wrong = nbformat.from_dict(json.loads(json.dumps(source)))
    edits = 0
    for cell in wrong.cells:
        if "np.swapaxes(np.asarray(K), -1, -2)" in cell.source:
            cell.source = cell.source.replace("np.swapaxes(np.asarray(K), -1, -2)", "np.asarray(K).T")
            edits += 1
    assert edits == 1
    for student, nb in (("right", source), ("wrong", wrong)):
        folder = course_dir / "submitted" / student / "self_attention"
        folder.mkdir(parents=True)
        nbformat.write(nb, folder / "toy.ipynb")
    _nbgrader(kit, course_dir, "autograde", "self_attention", "--force")

    for student in ("right", "wrong"):
        folder = course_dir / "submitted" / student / "self_attention"
        checked = _run(kit, "-m", "autograder.cli", "check", "--submission", str(folder), "--exercise", "toy",
                       "--json", str(kit / f"{student}.json"))
        assert checked.returncode in (0, 1), checked.stdout + checked.stderr
        result = json.loads((kit / f"{student}.json").read_text())
        kit_score = sum(t["score"] for t in result["tests"])
        graded = nbformat.read(course_dir / "autograded" / student / "self_attention" / "toy.ipynb", as_version=4)
        cell_scores = [float(o["data"]["text/plain"]) for c in graded.cells
                       if c.metadata.get("nbgrader", {}).get("grade") and c.cell_type == "code"
                       for o in c.outputs if o.output_type == "execute_result"]
        assert cell_scores and sum(cell_scores) == kit_score, (student, cell_scores, result)
        assert kit_score == (2.0 if student == "right" else 0.0)

    from nbgrader.api import Gradebook

    with Gradebook(f"sqlite:///{course_dir / 'gradebook.db'}") as gradebook:
        for student, expected in (("right", 2.0), ("wrong", 0.0)):
            graded = gradebook.find_submission_notebook("toy", "self_attention", student)
            assert (graded.score, graded.max_score) == (expected, 2.0)
    _nbgrader(kit, course_dir, "generate_feedback", "self_attention", "--force")
    for student, score in (("right", "2.0"), ("wrong", "0.0")):
        page = (course_dir / "feedback" / student / "self_attention" / "toy.html").read_text()
        assert f"toy (Score: {score} / 2.0)" in page
