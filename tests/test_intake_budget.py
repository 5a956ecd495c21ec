"""Reading a student's upload draws on totals per student (autograder/intake/budget.py), not only
limits per item: what goes past a total is left out and said, the rest is staged and graded.
(The attacks as a student writes them, in a class run: tests/test_intake_budget_attacks.py.)"""

from __future__ import annotations

import io
import json
import os
import tarfile
from pathlib import Path

import pytest

from autograder.config import KIT_ROOT
from autograder.intake import bounded, budget, load, staging
from autograder.intake.load import LoadError, SourceFile
from autograder.intake.students import Student

SOLUTIONS = KIT_ROOT / "solutions"
SCRATCH, SCRATCH_BYTES = 100, 2 * 1024 * 1024


def archive_of(*names: str) -> bytes:
    buf = io.BytesIO()
    with tarfile.open(fileobj=buf, mode="w:gz") as tf:
        for name in names:
            data = (SOLUTIONS / name).read_bytes()
            info = tarfile.TarInfo(name)
            info.size = len(data)
            tf.addfile(info, io.BytesIO(data))
    return buf.getvalue()


@pytest.fixture
def scratch_beside_an_archive(tmp_path) -> Path:
    """The work in an archive, beside a hundred sparse 2 MB .py files (nothing on disk)."""
    folder = tmp_path / "student"
    folder.mkdir()
    (folder / "work.tar.gz").write_bytes(archive_of("attention.py"))
    (folder / "hand_computation.py").write_bytes((SOLUTIONS / "hand_computation.py").read_bytes())
    for i in range(SCRATCH):
        with open(folder / f"scratch_{i:03d}.py", "wb") as fh:
            fh.truncate(SCRATCH_BYTES)
    return folder


def read(folder: Path, account: budget.Account, stems=("hand_computation", "attention")):
    with budget.charging(account), staging.read(folder, Student("s", folder), stems) as found:
        staged = sorted(os.listdir(found.folder))
        return found, staged


def test_staging_stops_at_the_students_byte_total_and_grades_the_rest(scratch_beside_an_archive):
    account = budget.Account(budget.IntakeLimits(staged_mb=6))
    found, staged = read(scratch_beside_an_archive, account)
    # the exercise files first, then the archive, then what fits of the scratch files
    assert isinstance(found.sources["attention"], SourceFile), found.sources["attention"]
    assert isinstance(found.sources["hand_computation"], SourceFile)
    assert account.used["staged_bytes"] <= 6 * 1024 * 1024
    assert 0 < len([n for n in staged if n.startswith("scratch_")]) < SCRATCH
    said = account.summary()
    assert "scratch_" in said and "more than the 6 MB of files staged a submission may use" in said, said
    assert said.endswith("the rest was graded")


def test_a_file_left_out_for_its_bytes_is_not_counted_as_staged(scratch_beside_an_archive):
    account = budget.Account(budget.IntakeLimits(staged_mb=6, files=20))
    _, staged = read(scratch_beside_an_archive, account)
    assert account.used["files"] == len(staged), (account.used, staged)
    assert "20 files staged" not in account.summary()      # only the bytes ran out


def test_the_files_total_leaves_out_scratch_files_not_the_archive(scratch_beside_an_archive, tmp_path):
    for i in range(SCRATCH):      # small now: only their number counts
        Path(scratch_beside_an_archive, f"scratch_{i:03d}.py").write_text("x = 1\n")
    account = budget.Account(budget.IntakeLimits(files=10))
    found, staged = read(scratch_beside_an_archive, account)
    assert isinstance(found.sources["attention"], SourceFile), found.sources["attention"]
    assert len(staged) == 10 and "attention.py" in staged
    assert "more than the 10 files staged a submission may use" in account.summary()


def test_past_the_notebook_total_a_notebook_is_not_read_at_all(monkeypatch):
    account = budget.Account(budget.IntakeLimits(notebook_kb=1))
    assert account.take("notebook_bytes", 1024)

    def no_child(*args, **kwargs):
        raise AssertionError("a notebook past the student's total was read")

    monkeypatch.setattr(bounded, "run", no_child)
    cell = {"cell_type": "code", "metadata": {}, "execution_count": None, "outputs": [], "source": "x = 1\n"}
    text = json.dumps({"nbformat": 4, "nbformat_minor": 5, "metadata": {}, "cells": [cell]})
    with budget.charging(account):
        got = load._notebook_source(text, "attention.ipynb", "attention")
    assert isinstance(got, LoadError) and "attention.ipynb was not read" in got.message, got
    assert "1 KB of notebook code a submission may use" in got.message
    assert "attention.ipynb" in account.summary()


def test_an_honest_submission_is_read_whole_and_charged_to_its_author(tmp_path):
    folder = tmp_path / "honest"
    folder.mkdir()
    (folder / "work.zip").write_bytes(b"")      # replaced below: a zip of every solution
    import zipfile

    with zipfile.ZipFile(folder / "work.zip", "w") as zf:
        for path in sorted(SOLUTIONS.glob("*.py")):
            zf.write(path, path.name)
    account = budget.Account()
    found, _ = read(folder, account, tuple(p.stem for p in SOLUTIONS.glob("*.py")))
    assert all(isinstance(s, SourceFile) for s in found.sources.values()), found.sources
    assert account.summary() == ""
    assert account.cpu_seconds > 0 and account.used["archives"] == 1, account
