"""The kit in a standard venv on each Python it supports (3.10 to 3.13), installed as a user
installs it (`pip install`, no system site-packages).

torch's CPU wheel is not at hand for every Python here (elsewhere its CUDA build is several GB),
so these venvs hold the kit and what a student's check needs but torch: the four numpy exercises
score full marks through `attnkit check`, and the torch exercise is one sentence naming the missing
module and its install command. The Python the suite runs on grades all five
(test_interpreter_locations) and holds the instructor's Jupyter and nbgrader (tests/test_nbgrader.py,
test_notebooks_as_jupyter.py): `attnkit check` imports none of them, so they are left out here; the
Pythons share one pip cache, so a wheel that fits every Python is fetched once.
The Pythons are found with pyenv, or named in $ATTNKIT_TEST_PYTHONS (paths, space-separated).
"""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

KIT = Path(__file__).resolve().parents[1]
VERSIONS = ("3.10", "3.11", "3.12", "3.13")
NUMPY_EXERCISES = ("hand_computation", "attention", "causal_mask", "scaling")
# What one venv of the kit's dependencies (torch aside) takes while pip installs it, with margin.
VENV_ROOM = 1200 << 20
# The instructor's side (a Jupyter kernel, nbgrader and what it pulls in: JupyterLab, a server), which
# a student's check does not import, and torch (above).
NOT_FOR_A_STUDENT = ("torch", "nbgrader", "nbclient", "ipykernel", "latex2mathml")


def _pyenv_python(version: str) -> str | None:
    if not shutil.which("pyenv"):
        return None
    bare = subprocess.run(["pyenv", "versions", "--bare"], capture_output=True, text=True).stdout.split()
    found = sorted((v for v in bare if v.startswith(version + ".")), key=lambda v: [int(p) for p in v.split(".")
                                                                                     if p.isdigit()])
    if not found:
        return None
    which = subprocess.run(["pyenv", "which", "python"], env=dict(os.environ, PYENV_VERSION=found[-1]),
                           capture_output=True, text=True)
    return which.stdout.strip() or None


def _pythons() -> dict[str, str]:
    named = os.environ.get("ATTNKIT_TEST_PYTHONS", "").split()
    found = {}
    for path in named:
        out = subprocess.run([path, "-c", "import sys; print('%d.%d' % sys.version_info[:2])"],
                             capture_output=True, text=True)
        if out.returncode == 0:
            found[out.stdout.strip()] = path
    for version in VERSIONS:
        if version not in found:
            path = _pyenv_python(version)
            if path:
                found[version] = path
    return found


PYTHONS = _pythons()


@pytest.mark.slow
@pytest.mark.parametrize("version", [v for v in VERSIONS if v != "%d.%d" % sys.version_info[:2]])
def test_a_standard_venv_on_each_python(version, tmp_path, pip_cache):
    python = PYTHONS.get(version)
    if python is None:
        pytest.skip(f"no Python {version} here (pyenv, or $ATTNKIT_TEST_PYTHONS)")
    free = shutil.disk_usage(tmp_path).free
    if free < VENV_ROOM:
        pytest.skip(f"{free >> 20} MB free under {tmp_path}; a venv of the kit's dependencies for Python {version} "
                    f"needs about {VENV_ROOM >> 20} MB while pip installs it")
    venv = tmp_path / f"venv {version}"
    try:
        _check_in_a_venv(python, venv, tmp_path, pip_cache)
    finally:
        shutil.rmtree(venv, ignore_errors=True)     # one venv at a time on the disk, not one per Python


@pytest.fixture(scope="module")
def pip_cache(tmp_path_factory) -> Path:
    """One pip cache for every Python's venv: a pure-Python wheel is downloaded once."""
    return tmp_path_factory.mktemp("pip-cache")


def _student_dependencies() -> list[str]:
    named = {re.split(r"[^A-Za-z0-9_.-]", d, maxsplit=1)[0].lower(): d for d in _dependencies()}
    assert set(NOT_FOR_A_STUDENT) <= set(named), "pyproject.toml renamed one: update NOT_FOR_A_STUDENT"
    return [d for name, d in named.items() if name not in NOT_FOR_A_STUDENT]


def _check_in_a_venv(python: str, venv: Path, tmp_path: Path, pip_cache: Path) -> None:
    subprocess.run([python, "-m", "venv", str(venv)], check=True, capture_output=True)
    bin_python = venv / "bin" / "python"
    deps = _student_dependencies()
    # pyproject.toml's ranges, as a user's pip resolves them for this Python (CI's pins are for its own)
    env = {k: v for k, v in os.environ.items() if k not in ("PIP_CONSTRAINT", "PIP_NO_CACHE_DIR")}
    env["PIP_CACHE_DIR"] = str(pip_cache)
    # --no-compile: Python compiles what the check imports when it imports it; compiling every
    # installed module up front took half of the install's time
    install = subprocess.run([str(bin_python), "-m", "pip", "install", "-q", "--no-compile", *deps],
                             capture_output=True, text=True, timeout=1500, env=env)
    assert install.returncode == 0, install.stderr[-3000:]
    kit = subprocess.run([str(bin_python), "-m", "pip", "install", "-q", "--no-deps", str(KIT)], capture_output=True,
                         text=True, timeout=900, env=env)
    assert kit.returncode == 0, kit.stderr[-3000:]
    out = tmp_path / "results.json"
    args = [arg for stem in NUMPY_EXERCISES for arg in ("--exercise", stem)]
    run = subprocess.run([str(bin_python), "-m", "autograder.cli", "check", "--submission", str(KIT / "solutions"),
                          *args, "--json", str(out)], cwd=tmp_path, capture_output=True, text=True, timeout=900)
    result = json.loads(out.read_text())
    lost = [(t["name"], t.get("output", "")[:200]) for t in result["tests"] if t["score"] < t["max_score"]]
    assert not lost and result["score"] > 0, (lost, run.stdout[-2000:], run.stderr[-2000:])
    torch = subprocess.run([str(bin_python), "-m", "autograder.cli", "check", "--submission", str(KIT / "solutions"),
                            "--exercise", "multihead"], cwd=tmp_path, capture_output=True, text=True, timeout=900)
    said = torch.stdout + torch.stderr
    assert "torch is not installed" in said and "download.pytorch.org/whl/cpu" in said and "Traceback" not in said


def _dependencies() -> list[str]:
    try:
        import tomllib
    except ModuleNotFoundError:     # Python 3.10
        pytest.skip("reading pyproject.toml needs Python 3.11's tomllib")
    data = tomllib.loads((KIT / "pyproject.toml").read_text(encoding="utf-8"))
    return list(data["project"]["dependencies"])
