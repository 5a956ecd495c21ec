"""An nbgrader course made by the kit, driven under a memory cap as an instructor would drive it
(`nbgrader generate_assignment`, students' notebooks in submitted/, `autograde`, `export`): the
red-team tests use it to show that an attack in a notebook costs its author alone."""

from __future__ import annotations

import csv
import io
import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from tests.memory_capped import run_capped

ASSIGNMENT = "self_attention"


def this_interpreter_for_nbgrader(folder: Path, env: dict) -> dict:
    """nbgrader runs `alembic` by name and a Jupyter kernel by its installed kernel spec: make both
    this interpreter, whatever the installed files' first lines say (a normal user may not enter
    the folder of an interpreter made visible to it elsewhere: scripts/normal_user_env.sh)."""
    shims, kernel = folder / "bin", folder / "jupyter" / "kernels" / "python3"
    shims.mkdir()
    kernel.mkdir(parents=True)
    (shims / "alembic").write_text(f'#!/bin/sh\nexec "{sys.executable}" -m alembic "$@"\n')
    (shims / "alembic").chmod(0o755)
    (kernel / "kernel.json").write_text(json.dumps({
        "argv": [sys.executable, "-m", "ipykernel_launcher", "-f", "{connection_file}"],
        "display_name": "Python 3", "language": "python"}))
    return dict(env, PATH=os.pathsep.join([str(shims), env.get("PATH", "")]),
                JUPYTER_PATH=os.pathsep.join(filter(None, [str(folder / "jupyter"), env.get("JUPYTER_PATH")])))


class CappedNbgraderCourse:
    """The kit's nbgrader course under `folder`/course for the course file `course_path`."""

    def __init__(self, folder: Path, course_path: Path, env: dict, cap_mb: int, timeout: float):
        from autograder.checks import check_ids
        from autograder.config import KIT_ROOT, load_course
        from autograder.nbgrader.course import write_course

        self.root, self.cap_mb, self.timeout = folder / "course", cap_mb, timeout
        write_course(self.root, KIT_ROOT, load_course(course_path, known_checks=check_ids()), course_file=course_path)
        self.env = this_interpreter_for_nbgrader(folder, env)

    def nbgrader(self, *args: str):
        try:
            return run_capped([sys.executable, "-m", "nbgrader", *args, f"--CourseDirectory.root={self.root}"],
                              memory_mb=self.cap_mb, timeout=self.timeout, env=self.env, cwd=str(self.root))
        except subprocess.TimeoutExpired:
            pytest.fail(f"`nbgrader {args[0]}` did not finish within {self.timeout} s")

    def release(self) -> None:
        run = self.nbgrader("generate_assignment", ASSIGNMENT, "--force")
        assert run.returncode == 0, run.stderr[-3000:]

    def released(self, stem: str):
        """The notebook students receive for `stem`, read afresh."""
        import nbformat

        return nbformat.read(self.root / "source" / ASSIGNMENT / f"{stem}.ipynb", as_version=4)

    def submit(self, student: str, stem: str, notebook) -> None:
        import nbformat

        target = self.root / "submitted" / student / ASSIGNMENT
        target.mkdir(parents=True, exist_ok=True)
        nbformat.write(notebook, target / f"{stem}.ipynb")

    def autograde_and_export(self) -> dict[str, float]:
        """Each student's total as nbgrader's export writes it in grades.csv."""
        run = self.nbgrader("autograde", ASSIGNMENT, "--force")
        assert run.returncode == 0 and not run.out_of_memory, (run.capped_by, run.stdout[-2000:], run.stderr[-3000:])
        run = self.nbgrader("export")
        assert run.returncode == 0, run.stderr[-3000:]
        rows = csv.DictReader(io.StringIO((self.root / "grades.csv").read_text()))
        return {r["student_id"]: float(r["score"]) for r in rows}

    def told(self, student: str, stem: str) -> str:
        """What the autograded notebook's code cells say: streams, and the kit's report as plain text
        beside its HTML in a test cell's display."""
        import nbformat

        graded = nbformat.read(self.root / "autograded" / student / ASSIGNMENT / f"{stem}.ipynb", as_version=4)
        return "".join(o.get("text", "") or o.get("data", {}).get("text/plain", "")
                       for c in graded.cells if c.cell_type == "code" for o in c.get("outputs", []))
