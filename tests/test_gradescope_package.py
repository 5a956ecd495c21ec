"""`attnkit gradescope OUT.zip`: the zip unpacked into a temporary root laid out like
Gradescope's (source/, submission/, results/), its setup.sh run with the network install
skipped (this environment has the dependencies), and its real run_autograder run on a correct,
a buggy, an empty and a hostile submission; results.json is checked against Gradescope's
schema (written here from Gradescope's specification, not from the kit's output).
"""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import sys
import zipfile
from pathlib import Path

import jsonschema
import pytest
import yaml

from autograder.build.exercises import to_notebook
from autograder.config import KIT_ROOT

SOLUTIONS = KIT_ROOT / "solutions"
BUGGY = KIT_ROOT / "tests" / "corpus" / "attention" / "buggy" / "no_scaling.py"
STEMS = ("hand_computation", "attention", "causal_mask", "scaling", "multihead")

VISIBILITY = {"enum": ["hidden", "after_due_date", "after_published", "visible"]}
# Gradescope's results.json (gradescope-autograders.readthedocs.io, "Autograder Specifications").
SCHEMA = {
    "type": "object",
    "required": ["tests"],
    "properties": {
        "score": {"type": "number"},
        "execution_time": {"type": "number"},
        "output": {"type": "string"},
        "output_format": {"enum": ["text", "html", "simple_format", "md", "ansi"]},
        "test_output_format": {"enum": ["text", "html", "simple_format", "md", "ansi"]},
        "visibility": VISIBILITY,
        "stdout_visibility": VISIBILITY,
        "extra_data": {"type": "object"},
        "tests": {"type": "array", "items": {
            "type": "object",
            "required": ["score", "max_score", "name"],
            "properties": {
                "score": {"type": "number"}, "max_score": {"type": "number"},
                "status": {"enum": ["passed", "failed"]}, "name": {"type": "string"},
                "number": {"type": "string"}, "output": {"type": "string"},
                "output_format": {"enum": ["text", "html", "simple_format", "md", "ansi"]},
                "tags": {"type": "array", "items": {"type": "string"}},
                "visibility": VISIBILITY, "extra_data": {"type": "object"},
            }}},
        "leaderboard": {"type": "array", "items": {
            "type": "object", "required": ["name", "value"],
            "properties": {"name": {"type": "string"}, "value": {"type": ["number", "string"]},
                           "order": {"enum": ["asc", "desc"]}}}},
    },
}

HOSTILE = '''
import os, sys
ROOT = "@ROOT@"
# Forge the grade, read the kit and the course, flood the log.
for target in (ROOT + "/results/results.json", ROOT + "/results/forged.json"):
    try:
        with open(target, "w") as fh:
            fh.write('{"score": 1000, "tests": []}')
    except OSError:
        pass
LEAKED = []
for secret in (ROOT + "/source/attnkit/reference/attention.py", ROOT + "/source/course.yml",
               ROOT + "/submission/causal_mask.py"):
    try:
        with open(secret) as fh:
            LEAKED.append(secret + fh.read(10))
    except OSError:
        pass
sys.stdout.write("spam " * 2_000_000)
''' + (SOLUTIONS / "causal_mask.py").read_text(encoding="utf-8") + '''

_right = create_causal_mask


def create_causal_mask(seq_len):
    if LEAKED:
        raise RuntimeError("leaked: " + "; ".join(LEAKED))
    return _right(seq_len)
'''


def _course_points() -> float:
    """Every check's points in the kit's course.yml (what a correct submission scores)."""
    data = yaml.safe_load((KIT_ROOT / "course.yml").read_text(encoding="utf-8"))
    checks = [c for ex in data["exercises"].values() for c in ex["checks"].values()]
    return sum(c["points"] if isinstance(c, dict) else c for c in checks)


def _small_course(tmp: Path, **changes) -> Path:
    data = yaml.safe_load((KIT_ROOT / "course.yml").read_text(encoding="utf-8"))
    data["limits"].update(call_timeout=3, import_timeout=5, memory_mb=1024, cpu_seconds=20)
    data.update(changes)
    data["exercises"]["attention"]["checks"]["attention.softmax.rows"] = {"points": 1, "hidden": True}
    path = tmp / "course.yml"
    path.write_text(yaml.safe_dump(data, sort_keys=False), encoding="utf-8")
    return path


def _attnkit(*args: str, cwd: Path = KIT_ROOT) -> subprocess.CompletedProcess:
    env = dict(os.environ, PYTHONPATH=str(KIT_ROOT))
    return subprocess.run([sys.executable, "-m", "autograder.cli", *args], cwd=cwd, env=env,
                          capture_output=True, text=True, timeout=300)


@pytest.fixture(scope="module")
def autograder_zip(tmp_path_factory) -> Path:
    tmp = tmp_path_factory.mktemp("gs")
    course = _small_course(tmp)
    target = tmp / "autograder.zip"
    run = _attnkit("--course", str(course), "gradescope", str(target), "--leaderboard")
    assert run.returncode == 0, run.stderr + run.stdout
    return target


def _root(tmp_path: Path, zip_path: Path, points: float | None = None) -> Path:
    """A folder laid out as Gradescope's /autograder after setup.sh; `points`: the zip's course's
    full marks (the kit's course.yml's by default)."""
    root = tmp_path / "autograder"
    for sub in ("source", "submission", "results"):
        (root / sub).mkdir(parents=True)
    with zipfile.ZipFile(zip_path) as zf:
        zf.extractall(root / "source")
    for script in ("setup.sh", "run_autograder"):
        os.chmod(root / "source" / script, 0o755)
    env = _env(root)
    for script in ("setup.sh", "run_autograder"):
        check = subprocess.run(["bash", "-n", str(root / "source" / script)], capture_output=True, text=True)
        assert check.returncode == 0, check.stderr
    setup = subprocess.run(["bash", str(root / "source" / "setup.sh")], cwd=root / "source", env=env,
                           capture_output=True, text=True, timeout=300)
    assert setup.returncode == 0 and "attnkit autograder ready" in setup.stdout, setup.stderr
    # ready only once the zip's own kit has graded the solutions, at full marks
    full = _course_points() if points is None else points
    assert re.search(rf"^ok\s+solutions\s+{full:g}/{full:g} in the sandbox", setup.stdout, re.M), setup.stdout
    shutil.copy2(root / "source" / "run_autograder", root / "run_autograder")   # as Gradescope does
    return root


def _env(root: Path) -> dict:
    env = {k: v for k, v in os.environ.items() if k != "PYTHONPATH"}
    return env | {"ATTNKIT_GRADESCOPE_ROOT": str(root), "ATTNKIT_SKIP_INSTALL": "1", "ATTNKIT_PYTHON": sys.executable}


def _grade(root: Path) -> tuple[dict, subprocess.CompletedProcess]:
    run = subprocess.run([str(root / "run_autograder")], cwd=root, env=_env(root), capture_output=True,
                         timeout=600)
    results = json.loads((root / "results" / "results.json").read_text(encoding="utf-8"))
    jsonschema.validate(results, SCHEMA)
    assert results["score"] == sum(t["score"] for t in results["tests"])
    return results, run


def _by_id(results: dict) -> dict[str, dict]:
    return {t["extra_data"]["check_id"]: t for t in results["tests"]}


def test_the_zip_holds_the_scripts_the_kit_the_course_and_exact_pins(autograder_zip):
    with zipfile.ZipFile(autograder_zip) as zf:
        names = set(zf.namelist())
        modes = {i.filename: (i.external_attr >> 16) & 0o777 for i in zf.infolist()}
        pins = zf.read("requirements.txt").decode().splitlines()
        setup = zf.read("setup.sh").decode()
    assert {"setup.sh", "run_autograder", "course.yml", "gradescope.json", "requirements.txt",
            "attnkit/autograder/grading/submission.py", "attnkit/reference/attention.py"} <= names
    assert modes["setup.sh"] == modes["run_autograder"] == 0o755
    assert not any("__pycache__" in n for n in names)
    # setup.sh's doctor and the runner's preflight grade the kit's solutions, where the unpacked kit
    # looks for them (no course.yml at its root, as an installed kit: autograder/data/solutions).
    assert {f"attnkit/autograder/data/solutions/{stem}.py" for stem in STEMS} <= names
    assert not any(n.startswith("attnkit/solutions/") for n in names)
    import numpy
    import pydantic

    assert f"numpy=={numpy.__version__}" in pins and f"pydantic=={pydantic.VERSION}" in pins
    assert all("==" in p for p in pins if not p.startswith("#")) and not any(p.startswith("torch==") for p in pins)
    assert "download.pytorch.org/whl/cpu" in setup and "torch==" in setup


@pytest.mark.slow
def test_correct_buggy_empty_and_hostile_submissions(tmp_path, autograder_zip):
    root = _root(tmp_path, autograder_zip)
    submission = root / "submission"

    # correct, as nbgrader-named notebooks in one folder (a zip of the released assignment folder)
    folder = submission / "self_attention"
    folder.mkdir()
    for stem in STEMS:
        text = (SOLUTIONS / f"{stem}.py").read_text(encoding="utf-8")
        (folder / f"{stem}.ipynb").write_text(to_notebook(text, stem), encoding="utf-8")
    results, _ = _grade(root)
    full = _course_points()
    assert results["score"] == sum(t["max_score"] for t in results["tests"]) == full
    assert "self_attention/" in results["output"]
    assert results["leaderboard"] == [{"name": "score", "value": float(full), "order": "desc"}]
    hidden = _by_id(results)["attention.softmax.rows"]
    assert hidden["visibility"] == "after_published" and hidden["status"] == "passed"

    # buggy: the solutions at the top, attention.py without the scaling
    shutil.rmtree(folder)
    for stem in STEMS:
        shutil.copy(SOLUTIONS / f"{stem}.py", submission)
    shutil.copy(BUGGY, submission / "attention.py")
    results, _ = _grade(root)
    tests = _by_id(results)
    assert 0 < results["score"] < full
    assert tests["attention.softmax.rows"]["status"] == "passed"
    unscaled = [t for t in tests.values() if "misconception:no_scaling" in t["tags"]]
    assert unscaled and all(t["score"] == 0 for t in unscaled)
    # one mistake, one hint: the first check it fails carries the hint, the others point to it
    assert sum("Hint:" in t["output"] for t in unscaled) == 1
    assert all("The same cause as" in t["output"] for t in unscaled if "Hint:" not in t["output"])

    # empty
    for path in submission.iterdir():
        path.unlink()
    results, _ = _grade(root)
    assert results["score"] == 0 and "no exercise files were found" in results["output"]
    assert all(t["status"] == "failed" for t in results["tests"])

    # hostile: tries to forge results.json, to read the kit and the course, and floods stdout
    (submission / "causal_mask.py").write_text(HOSTILE.replace("@ROOT@", str(root)), encoding="utf-8")
    shutil.copy(SOLUTIONS / "hand_computation.py", submission)
    results, run = _grade(root)
    tests = _by_id(results)
    causal = [t for cid, t in tests.items() if cid.startswith("causal_mask.")]
    assert all(t["status"] == "passed" for t in causal), [t["output"] for t in causal]
    assert results["score"] == 15
    assert not (root / "results" / "forged.json").exists()
    assert len(run.stdout) <= 64 * 1024 and b"spam spam" not in run.stdout


@pytest.mark.slow
def test_hidden_checks_follow_the_chosen_visibility(tmp_path):
    course = _small_course(tmp_path)
    target = tmp_path / "ag.zip"
    assert _attnkit("--course", str(course), "gradescope", str(target), "--hidden-visibility", "hidden").returncode == 0
    root = _root(tmp_path, target)
    shutil.copy(BUGGY, root / "submission" / "attention.py")
    results, _ = _grade(root)
    hidden = _by_id(results)["attention.softmax.rows"]
    assert hidden["visibility"] == "hidden"
    assert "leaderboard" not in results
    data = yaml.safe_load(course.read_text(encoding="utf-8"))
    hidden_ids = {cid for ex in data["exercises"].values() for cid, c in ex["checks"].items()
                  if isinstance(c, dict) and c.get("hidden")}
    assert {cid for cid, t in _by_id(results).items() if t["visibility"] != "visible"} == hidden_ids


def test_the_command_says_ready_only_once_the_zips_kit_graded_the_solutions(tmp_path):
    course = _small_course(tmp_path)
    run = _attnkit("--course", str(course), "gradescope", str(tmp_path / "ag.zip"))
    assert run.returncode == 0, run.stdout + run.stderr
    said = run.stdout.replace("\n", " ")
    full = f"{_course_points():g}"
    assert f"the zip's kit graded its course's solutions here: {full}/{full} in the sandbox" in said
    assert said.index(f"{full}/{full}") < said.index("Ready: upload")
    # solutions that lose points in the zip's sandbox (a limit too tight for right code): said, not ready
    (tmp_path / "tight").mkdir()
    tight = _small_course(tmp_path / "tight", limits={"submission_timeout": 0.001})
    run = _attnkit("--course", str(tight), "gradescope", str(tmp_path / "tight.zip"))
    assert run.returncode == 1 and "the autograder is NOT ready" in run.stdout + run.stderr, run.stdout
    assert "solutions" in run.stdout + run.stderr and "Ready: upload" not in run.stdout


def test_setup_sh_is_not_ready_without_the_solutions(tmp_path, autograder_zip):
    root = tmp_path / "autograder"
    (root / "source").mkdir(parents=True)
    with zipfile.ZipFile(autograder_zip) as zf:
        zf.extractall(root / "source")
    shutil.rmtree(root / "source" / "attnkit" / "autograder" / "data" / "solutions")
    setup = subprocess.run(["bash", str(root / "source" / "setup.sh")], cwd=root / "source", env=_env(root),
                           capture_output=True, text=True, timeout=300)
    assert setup.returncode == 1 and "ready" not in setup.stdout
    assert "holds no solutions to grade; the autograder is NOT ready" in setup.stderr


def test_a_course_with_a_mistake_makes_no_zip(tmp_path):
    course = _small_course(tmp_path, seed=-1)
    run = _attnkit("--course", str(course), "gradescope", str(tmp_path / "ag.zip"))
    assert run.returncode == 2 and "seed" in run.stderr + run.stdout
    assert not (tmp_path / "ag.zip").exists()


def _clean_env(home: Path, **extra: str) -> dict:
    """What Gradescope's image gives a script: root, a plain PATH, nothing of this session's but
    the machine's own certificate store (a network that inspects TLS signs with a local CA)."""
    import ssl

    env = {"PATH": "/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin", "HOME": str(home),
           "LANG": "C.UTF-8", **extra}
    store = ssl.get_default_verify_paths().openssl_cafile
    if store and os.path.isfile(store):
        env["SSL_CERT_FILE"] = store
    return env


def _torch_wheels(folder: Path) -> Path:
    """torch's CPU wheel in a folder, fetched as pip is configured here (PyPI's CPU index searched
    too, since the default index's Linux wheel is the CUDA build)."""
    import torch

    version = torch.__version__.split("+", 1)[0]
    env = dict(os.environ, PIP_RETRIES="0")
    run = subprocess.run([sys.executable, "-m", "pip", "download", "-q", "--no-deps", "-d", str(folder),
                          f"torch=={version}", "--extra-index-url", "https://download.pytorch.org/whl/cpu"],
                         env=env, capture_output=True, text=True, timeout=900)
    if run.returncode != 0:
        pytest.skip(f"torch's wheel cannot be fetched here: {run.stderr[-300:]}")
    return folder


@pytest.mark.slow
@pytest.mark.skipif(os.geteuid() != 0, reason="Gradescope runs setup.sh as root")
def test_setup_sh_installs_for_real_then_grades_every_kind_of_upload(tmp_path, autograder_zip):
    """The zip as Gradescope runs it: unpacked into source/, setup.sh run as root from a clean
    environment (its own uv venv, requirements.txt and torch's CPU wheel installed, doctor run),
    then run_autograder on a correct, a buggy, a notebook-with-magics and a hostile upload."""
    root = tmp_path / "autograder"
    for sub in ("source", "submission", "results"):
        (root / sub).mkdir(parents=True)
    with zipfile.ZipFile(autograder_zip) as zf:
        zf.extractall(root / "source")
    for script in ("setup.sh", "run_autograder"):
        os.chmod(root / "source" / script, 0o755)
    shutil.copy2(root / "source" / "run_autograder", root / "run_autograder")
    venv = tmp_path / "opt" / "venv"
    # uv's cache in tmp_path goes with it: under HOME, every run would add a copy of torch.
    env = _clean_env(Path.home(), ATTNKIT_GRADESCOPE_ROOT=str(root), ATTNKIT_VENV=str(venv),
                     ATTNKIT_WHEELS=str(_torch_wheels(tmp_path / "wheels")), UV_CACHE_DIR=str(tmp_path / "uv-cache"))
    setup = subprocess.run(["bash", str(root / "source" / "setup.sh")], cwd=root / "source", env=env,
                           capture_output=True, text=True, timeout=1500)
    if setup.returncode != 0 and "uv" in setup.stderr and "No matching distribution" in setup.stderr:
        pytest.skip("uv cannot be installed here (no package index)")
    assert setup.returncode == 0, setup.stdout[-3000:] + setup.stderr[-3000:]
    assert "ready to grade" in setup.stdout and "attnkit autograder ready" in setup.stdout
    # The venv is a standard one (no system site-packages): everything came from requirements.txt.
    assert "include-system-site-packages = false" in (venv / "pyvenv.cfg").read_text()

    def grade() -> tuple[dict, subprocess.CompletedProcess]:
        run = subprocess.run([str(root / "run_autograder")], cwd=root, env=env, capture_output=True, timeout=600)
        data = json.loads((root / "results" / "results.json").read_text(encoding="utf-8"))
        jsonschema.validate(data, SCHEMA)
        return data, run

    def fresh_upload() -> Path:
        for path in (root / "submission").iterdir():
            shutil.rmtree(path) if path.is_dir() else path.unlink()
        return root / "submission"

    full = _course_points()
    upload = fresh_upload()
    for stem in STEMS:
        shutil.copy(SOLUTIONS / f"{stem}.py", upload)
    data, _ = grade()
    assert data["score"] == full, [t["output"][:300] for t in data["tests"] if t["status"] != "passed"]

    upload = fresh_upload()
    for stem in STEMS:
        shutil.copy(SOLUTIONS / f"{stem}.py", upload)
    shutil.copy(BUGGY, upload / "attention.py")
    data, _ = grade()
    unscaled = [t for t in data["tests"] if "misconception:no_scaling" in t["tags"]]
    assert 0 < data["score"] < full and unscaled and all(t["score"] == 0 for t in unscaled)
    assert sum("Hint:" in t["output"] for t in unscaled) == 1

    upload = fresh_upload()
    for stem in STEMS:
        text = (SOLUTIONS / f"{stem}.py").read_text(encoding="utf-8")
        nb = json.loads(to_notebook(text, stem))
        magic = {"cell_type": "code", "metadata": {}, "execution_count": None, "outputs": [],
                 "source": "%matplotlib inline\n%load_ext autoreload\nimport numpy as np\nnp.exp?"}
        nb["cells"].insert(1, magic)
        (upload / f"{stem}.ipynb").write_text(json.dumps(nb), encoding="utf-8")
    data, _ = grade()
    assert data["score"] == full, [t["output"][:300] for t in data["tests"] if t["status"] != "passed"]

    upload = fresh_upload()
    (upload / "causal_mask.py").write_text(HOSTILE.replace("@ROOT@", str(root)), encoding="utf-8")
    shutil.copy(SOLUTIONS / "hand_computation.py", upload)
    data, run = grade()
    causal = [t for t in data["tests"] if t["extra_data"]["check_id"].startswith("causal_mask.")]
    assert all(t["status"] == "passed" for t in causal), [t["output"] for t in causal]
    assert not (root / "results" / "forged.json").exists()
    assert len(run.stdout) <= 64 * 1024 and b"spam spam" not in run.stdout
