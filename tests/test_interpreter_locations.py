"""The sandbox sees the interpreter wherever and however it is installed.

Instructors and students install the kit into a standard `python -m venv` (no system
site-packages) under the temp folder (CI jobs, containers), under their home folder, on a path
with spaces, inside the checkout itself; some install it non-editable (`pip install .`). Each
test makes such a venv (tests/venvs.py: this environment's packages hard-linked into the venv's
own site-packages, so numpy, torch and matplotlib live only there) and grades `solutions/`
through it: 60/60, or one sentence naming what is missing.
Run as root in CI and as a normal user through scripts/normal_user_env.sh.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import tempfile
import uuid
from pathlib import Path

import pytest

from autograder.sandbox import Limits, Sandbox
from venvs import KIT, build_wheel, standard_venv, where_imported


def _jail_available() -> str | None:
    with Sandbox(Limits()) as sandbox:
        return None if sandbox.isolation.full else sandbox.isolation.describe()


@pytest.fixture(scope="module")
def jail():
    why = _jail_available()
    if why:
        pytest.skip(f"no jail here: {why}")


@pytest.fixture(scope="module")
def wheel(tmp_path_factory):
    return build_wheel(tmp_path_factory.mktemp("wheel"))


def make_venv(where: Path, **kwargs) -> Path:
    """A standard venv at `where` whose numpy, torch and matplotlib are its own."""
    python = standard_venv(where, **kwargs)
    found = where_imported(python, ("numpy", "matplotlib", "torch"))
    assert all(path.startswith(str(where)) for path in found.values()), found
    return python


def grade_solutions(python: Path, tmp_path: Path) -> dict:
    out = tmp_path / "results.json"
    run = subprocess.run([str(python), "-m", "autograder.cli", "check", "--submission", str(KIT / "solutions"),
                          "--json", str(out)], cwd=tmp_path, capture_output=True, text=True, timeout=600)
    assert out.exists(), run.stdout + run.stderr
    return json.loads(out.read_text())


def assert_full_marks(result: dict) -> None:
    lost = [(t["name"], t.get("output", "")[:300]) for t in result["tests"] if t["score"] < t["max_score"]]
    assert not lost, lost
    assert result["score"] == sum(t["max_score"] for t in result["tests"]) > 0


def _place(kind: str) -> Path:
    tag = uuid.uuid4().hex[:8]
    if kind == "temp":
        return Path(tempfile.gettempdir()) / f"attnkit-venv-{tag}"
    if kind == "temp with spaces":
        return Path(tempfile.gettempdir()) / f"attn kit venv {tag}"
    if kind == "home":
        return Path.home() / f".attnkit-test-venv-{tag}"
    if kind == "inside the checkout":
        return KIT / f".venv-test-{tag}"
    return Path("/opt") / f"attnkit-test-venv-{tag}"


@pytest.mark.slow
@pytest.mark.parametrize("kind", ["temp", "temp with spaces", "home", "opt", "inside the checkout"])
def test_solutions_full_marks_from_a_standard_venv(kind, jail, tmp_path):
    place = _place(kind)
    if not os.access(place.parent, os.W_OK):
        pytest.skip(f"{place.parent} is not writable by this user")
    try:
        python = make_venv(place)
        assert_full_marks(grade_solutions(python, tmp_path))
    finally:
        shutil.rmtree(place, ignore_errors=True)


@pytest.mark.slow
def test_a_non_editable_install_grades_and_hides_its_reference(jail, wheel, tmp_path):
    """`pip install .`: the kit inside site-packages, its checkout nowhere on the path."""
    place = _place("temp")
    try:
        python = make_venv(place, kit="installed", wheel=wheel)
        found = where_imported(python, ("autograder",))
        assert found["autograder"].startswith(str(place)), found
        assert_full_marks(grade_solutions(python, tmp_path))
    finally:
        shutil.rmtree(place, ignore_errors=True)


@pytest.mark.slow
def test_a_venv_without_torch_is_one_sentence_before_any_grade(jail, tmp_path):
    """A missing module is said once, with its fix, and no student is graded (never a 0)."""
    place = _place("temp")
    try:
        python = standard_venv(place, without=("torch",))
        klass = tmp_path / "class"
        shutil.copytree(KIT / "solutions", klass / "zoe")
        out = tmp_path / "out"
        run = subprocess.run([str(python), "-m", "autograder.cli", "grade", str(klass), "--out", str(out)],
                             cwd=tmp_path, capture_output=True, text=True, timeout=600)
        assert run.returncode == 2, run.stdout + run.stderr
        said = run.stderr.strip()
        assert "Traceback" not in said and len(said.splitlines()) == 1, said
        assert "torch is not installed" in said and "--index-url https://download.pytorch.org/whl/cpu" in said
        assert not (out / "results" / "zoe.json").exists()
        doctor = subprocess.run([str(python), "-m", "autograder.cli", "doctor"], cwd=tmp_path,
                                capture_output=True, text=True, timeout=600)
        assert doctor.returncode == 1 and "torch is not installed" in doctor.stdout, doctor.stdout + doctor.stderr
    finally:
        shutil.rmtree(place, ignore_errors=True)


@pytest.mark.slow
def test_class_plugin_and_doctor_from_a_standard_venv_under_temp(jail, tmp_path):
    """`attnkit grade` (a pool of warm sandboxes) and the pytest plugin from the same venv."""
    place = _place("temp")
    try:
        python = make_venv(place)
        klass = tmp_path / "class"
        shutil.copytree(KIT / "solutions", klass / "zoe")
        run = subprocess.run([str(python), "-m", "autograder.cli", "grade", str(klass), "--out", str(tmp_path / "out"),
                              "--jobs", "1"], cwd=tmp_path, capture_output=True, text=True, timeout=600)
        assert run.returncode == 0, run.stdout + run.stderr
        assert_full_marks(json.loads((tmp_path / "out" / "results" / "zoe.json").read_text()))
        plugin = subprocess.run([str(python), "-m", "pytest", "-q", "-p", "no:cacheprovider", str(KIT / "autograder"),
                                 "--submission", str(KIT / "solutions")], cwd=tmp_path, capture_output=True,
                                text=True, timeout=600)
        assert plugin.returncode == 0, plugin.stdout[-3000:] + plugin.stderr[-2000:]
        assert " failed" not in plugin.stdout
        doctor = subprocess.run([str(python), "-m", "autograder.cli", "doctor"], cwd=tmp_path,
                                capture_output=True, text=True, timeout=600)
        assert doctor.returncode == 0, doctor.stdout + doctor.stderr
        assert "torch" in doctor.stdout and str(place) in doctor.stdout and "60/60" in doctor.stdout
    finally:
        shutil.rmtree(place, ignore_errors=True)
