"""Red team: reading a student's upload costs that student's budget, in total, not per item.

Written as a student would attack the grader's reading of uploads (issue: limits per item, no total
per student), each beside honest students in one class graded by `attnkit grade` as a user runs it,
under a memory cap and a timeout:

  many_names     a small archive that is slow to parse (a pax header of digits), handed in under
                 sixty names, its bytes varied a little for each (so no two are the same upload):
                 the grader would parse it once per name;
  sparse_files   an honest archive beside thousands of sparse 2 MB .py files (nothing on disk):
                 staging would copy them all into the grader's temporary folder;
  dense_notebook notebooks of dense cells under the notebook size limit, under a dozen names.

The course's reading limits (course.yml `limits.intake`) are set low here -- 1 s of CPU time an
item (the least a course may set), 12 s a submission -- so that what is an attack depends as little as
can be on this machine's speed: each attack needs at least twice that (the dense notebook about 2 s
an item on a fast machine); an honest submission a small part of it.

The run must finish, every student have a row, the honest students keep full marks, each attacker's
own witness (hand_computation.py) be graded, and each attacker's feedback say what was left out and
why. One class run serves every test here (it is the slow part).
"""

from __future__ import annotations

import csv
import io
import json
import os
import sys
import time
from pathlib import Path

import pytest
import yaml

from autograder.config.limits import IntakeLimits
from tests.memory_capped import run_capped
from tests.test_hostile_uploads import HONEST, SOLUTIONS, course_file, kit_env, pax_digits_tgz

EXERCISES = ("hand_computation", "attention")
CAP_MB = 2048
RUN_TIMEOUT = 420
NAMES = 60
SPARSE_FILES, SPARSE_BYTES = 3_000, 2 * 1024 * 1024
NOTEBOOK_NAMES = 12


def dense_notebook(cells: int = 43, per_cell: int = 22_000, salt: int = 0) -> bytes:
    """A notebook under 2 MB of `cells` code cells, each one list of `per_cell` names: a million
    syntax-tree nodes to read (seconds of CPU time; per byte of the notebook, more than any other
    source tried)."""
    source = f"x{salt} = [" + "a," * per_cell + "]\n"
    made = [{"cell_type": "code", "id": f"dense-{i}", "metadata": {}, "execution_count": None, "outputs": [],
             "source": source} for i in range(cells)]
    return json.dumps({"nbformat": 4, "nbformat_minor": 5, "metadata": {}, "cells": made}).encode()


def honest_archive() -> bytes:
    import tarfile

    buf = io.BytesIO()
    with tarfile.open(fileobj=buf, mode="w:gz") as tf:
        data = (SOLUTIONS / "attention.py").read_bytes()
        info = tarfile.TarInfo("attention.py")
        info.size = len(data)
        tf.addfile(info, io.BytesIO(data))
    return buf.getvalue()


def build_class(root: Path) -> Path:
    class_dir = root / "class"
    for name in HONEST:
        folder = class_dir / name
        folder.mkdir(parents=True)
        for stem in EXERCISES:
            (folder / f"{stem}.py").write_bytes((SOLUTIONS / f"{stem}.py").read_bytes())

    def attacker(name: str) -> Path:
        folder = class_dir / name
        folder.mkdir(parents=True)
        (folder / "hand_computation.py").write_bytes((SOLUTIONS / "hand_computation.py").read_bytes())
        return folder

    folder = attacker("many_names")
    for i in range(NAMES):
        (folder / f"attention_{i:02d}.tar.gz").write_bytes(pax_digits_tgz(250_000 + i))

    folder = attacker("sparse_files")
    (folder / "work.tar.gz").write_bytes(honest_archive())
    for i in range(SPARSE_FILES):
        with open(folder / f"scratch_{i:04d}.py", "wb") as fh:
            fh.truncate(SPARSE_BYTES)

    folder = attacker("dense_notebook")
    (folder / "attention.ipynb").write_bytes(dense_notebook())
    for i in range(1, NOTEBOOK_NAMES):
        (folder / f"attention_v{i}.ipynb").write_bytes(dense_notebook(salt=i))
    return class_dir


def course_with_low_reading_limits(root: Path) -> Path:
    path = course_file(root, EXERCISES)
    data = yaml.safe_load(path.read_text(encoding="utf-8"))
    data["limits"]["intake"] = {"item_cpu_seconds": 1, "cpu_seconds": 12}
    path.write_text(yaml.safe_dump(data, sort_keys=False), encoding="utf-8")
    return path


def points(course: Path, stem: str) -> float:
    data = yaml.safe_load(course.read_text(encoding="utf-8"))
    return sum(c["points"] if isinstance(c, dict) else c for c in data["exercises"][stem]["checks"].values())


def full_marks(course: Path) -> float:
    return sum(points(course, stem) for stem in EXERCISES)


class Graded:
    def __init__(self, root: Path):
        self.class_dir, self.out = build_class(root), root / "out"
        self.course = course_with_low_reading_limits(root)
        started = time.monotonic()
        self.run = run_capped([sys.executable, "-m", "autograder.cli", "--course", str(self.course), "grade",
                               str(self.class_dir), "--out", str(self.out), "--jobs", "2"],
                              memory_mb=CAP_MB, timeout=RUN_TIMEOUT, env=kit_env(root / "tmp"), cwd=str(root))
        self.seconds = time.monotonic() - started

    def rows(self) -> dict[str, dict]:
        text = (self.out / "grades.csv").read_text(encoding="utf-8")
        return {r["student"]: r for r in csv.DictReader(io.StringIO(text))}

    def told(self, student: str) -> str:
        data = json.loads((self.out / "results" / f"{student}.json").read_text(encoding="utf-8"))
        return json.dumps(data["extra_data"]["result"])


@pytest.fixture(scope="module")
def graded(tmp_path_factory) -> Graded:
    return Graded(tmp_path_factory.mktemp("budget-attacks"))


ATTACKERS = ("many_names", "sparse_files", "dense_notebook")


@pytest.mark.slow
def test_the_run_finishes_and_every_student_has_a_row(graded):
    run = graded.run
    assert run.returncode == 0 and not run.out_of_memory, (run.capped_by, run.returncode, run.stderr[-3000:])
    assert sorted(graded.rows()) == sorted([*HONEST, *ATTACKERS])


@pytest.mark.slow
def test_honest_students_keep_full_marks(graded):
    rows = graded.rows()
    for name in HONEST:
        assert float(rows[name]["total"]) == full_marks(graded.course), rows[name]


@pytest.mark.slow
@pytest.mark.parametrize("student", ATTACKERS)
def test_an_attackers_work_is_graded_as_far_as_it_fits(graded, student):
    assert float(graded.rows()[student]["hand_computation"]) == 7, graded.rows()[student]


@pytest.mark.slow
def test_an_archive_under_sixty_names_is_read_within_its_authors_budget(graded):
    told = graded.told("many_names")
    # past the archives a submission may open, the rest is named as left out, and why
    assert "was not read" in told and "archives opened a submission may use" in told, told[:3000]
    opened = IntakeLimits().archives        # the first archives in name order; five are named, then a count
    assert f"attention_{opened:02d}.tar.gz" in told and f"and {NAMES - opened - 5} more" in told, told[:3000]
    # those opened were refused at their CPU time, or at what was left of the submission's
    assert "attention_00.tar.gz was not opened: reading it needs more than" in told, told[:3000]


@pytest.mark.slow
def test_thousands_of_sparse_files_stage_within_the_students_totals(graded):
    told = graded.told("sparse_files")
    assert "was not read" in told and "a submission may use" in told, told[:3000]
    # the work in the archive is graded: what was left out are the scratch files
    assert float(graded.rows()["sparse_files"]["attention"]) == points(graded.course, "attention"), \
        graded.rows()["sparse_files"]
    assert not os.listdir(graded.out.parent / "tmp"), "staged uploads were left in the temporary folder"


@pytest.mark.slow
def test_a_dense_notebook_under_a_dozen_names_costs_its_author_alone(graded):
    told = graded.told("dense_notebook")
    assert "attention.ipynb" in told and "was not read" in told, told[:3000]
    assert float(graded.rows()["dense_notebook"]["attention"]) == 0, graded.rows()["dense_notebook"]
