"""The sandbox sees the interpreter wherever it lives (issue 21).

Instructors install the kit into a virtualenv under the temp folder (CI jobs, containers),
under their home folder, under /opt, or on a path with spaces. Each child mounts a private
tmpfs over /tmp: before the fix it covered a venv there, and whatever the child imported
lazily (matplotlib's fonts, `numpy.testing`) was gone: `solutions/` scored 51/53.

Each test builds a venv at such a place whose numpy and matplotlib live inside it (copied
from this interpreter, so lazily loaded files are under that folder), points it at this
checkout with a .pth file, and grades `solutions/` through it.
Run as root in CI and as a normal user through scripts/normal_user_env.sh.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import tempfile
import uuid
from pathlib import Path

import matplotlib
import numpy
import pytest

from autograder.sandbox import Limits, Sandbox

KIT = Path(__file__).resolve().parents[1]


def _jail_available() -> str | None:
    with Sandbox(Limits()) as sandbox:
        return None if sandbox.isolation.full else sandbox.isolation.describe()


@pytest.fixture(scope="module")
def jail():
    why = _jail_available()
    if why:
        pytest.skip(f"no jail here: {why}")


def make_venv(where: Path) -> Path:
    """A venv at `where` with its own numpy and matplotlib and this checkout on its path."""
    subprocess.run([sys.executable, "-m", "venv", "--system-site-packages", "--without-pip", str(where)],
                   check=True, capture_output=True)
    python = where / "bin" / "python"
    site = subprocess.run([str(python), "-c", "import sysconfig; print(sysconfig.get_paths()['purelib'])"],
                          check=True, capture_output=True, text=True).stdout.strip()
    for module in (numpy, matplotlib):
        package = Path(module.__file__).parent
        shutil.copytree(package, Path(site) / package.name, symlinks=True)
        libs = package.parent / f"{package.name}.libs"       # numpy's vendored BLAS
        if libs.is_dir():
            shutil.copytree(libs, Path(site) / libs.name, symlinks=True)
    (Path(site) / "attnkit_checkout.pth").write_text(str(KIT) + "\n")
    where_numpy = subprocess.run([str(python), "-c", "import numpy, matplotlib; print(numpy.__file__); "
                                  "print(matplotlib.__file__)"], check=True, capture_output=True, text=True).stdout
    assert all(line.startswith(str(where)) for line in where_numpy.splitlines()), where_numpy
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
    return Path("/opt") / f"attnkit-test-venv-{tag}"


@pytest.mark.slow
@pytest.mark.parametrize("kind", ["temp", "temp with spaces", "home", "opt"])
def test_solutions_full_marks_from_a_venv(kind, jail, tmp_path):
    place = _place(kind)
    if not os.access(place.parent, os.W_OK):
        pytest.skip(f"{place.parent} is not writable by this user")
    try:
        python = make_venv(place)
        assert_full_marks(grade_solutions(python, tmp_path))
    finally:
        shutil.rmtree(place, ignore_errors=True)


@pytest.mark.slow
def test_class_and_plugin_from_a_venv_under_temp(jail, tmp_path):
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
    finally:
        shutil.rmtree(place, ignore_errors=True)
