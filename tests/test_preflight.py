"""The preflight: before a class is graded, the kit's solutions are graded in the same
sandbox; a sandbox in which they lose points stops the run before any student is graded, and
says which checks lost what. A pass is remembered; `--no-preflight` is said in the summary."""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
import yaml

from autograder.grading.local_grading import grade_class
from autograder.config import DEFAULT_COURSE, KIT_ROOT
from autograder.grading.preflight import PreflightFailed, PreflightStatus, run_preflight
from autograder.sandbox import Sandbox

SOLUTIONS = KIT_ROOT / "solutions"


@pytest.fixture
def cache(tmp_path, monkeypatch):
    monkeypatch.setenv("ATTNKIT_CACHE_DIR", str(tmp_path / "cache"))
    return tmp_path / "cache"


def course_file(tmp_path: Path, **limits) -> Path:
    data = yaml.safe_load(DEFAULT_COURSE.read_text())
    data["limits"].update(limits)
    path = tmp_path / "course.yml"
    path.write_text(yaml.safe_dump(data, sort_keys=False))
    return path


def one_student_class(tmp_path: Path) -> Path:
    klass = tmp_path / "class"
    shutil.copytree(SOLUTIONS, klass / "zoe")
    return klass


def test_a_sandbox_that_loses_points_on_the_solutions_stops_the_run(course_at, tmp_path, cache):
    # A budget too small for correct code on any machine (forking one child takes longer): checks
    # of a right answer time out. Without the preflight, every student would lose those points and
    # the run exit 0.
    course = course_at(course_file(tmp_path, submission_timeout=0.001))
    klass, out = one_student_class(tmp_path), tmp_path / "out"
    with pytest.raises(PreflightFailed) as caught:
        grade_class(klass, out, course, jobs=1)
    message = str(caught.value)
    assert "no grade was written" in message and "--no-preflight" in message
    assert "time budget of 0.001 s" in message
    assert all(check_id in message for check_id, _ in caught.value.lost[:1])
    assert not (out / "results" / "zoe.json").exists()
    assert caught.value.score < caught.value.max_score


def test_the_command_says_why_and_exits_2(tmp_path, cache):
    path = course_file(tmp_path, submission_timeout=0.001)
    klass = one_student_class(tmp_path)
    run = subprocess.run([sys.executable, "-m", "autograder.cli", "--course", str(path), "grade", str(klass),
                          "--out", str(tmp_path / "out"), "--jobs", "1"], capture_output=True, text=True,
                         timeout=600, env={**os.environ, "ATTNKIT_CACHE_DIR": str(cache)})
    assert run.returncode == 2, run.stdout + run.stderr
    assert "preflight failed" in run.stderr and "time budget" in run.stderr


def test_a_pass_is_remembered_and_said_in_the_summary(course, tmp_path, cache):
    with Sandbox(course.limits) as sandbox:
        first = run_preflight(course, sandbox)
        second = run_preflight(course, sandbox)
    assert first.status is PreflightStatus.PASSED
    assert second.status is PreflightStatus.PASSED_BEFORE
    klass, out = one_student_class(tmp_path), tmp_path / "out"
    grade_class(klass, out, course, jobs=1)
    summary = json.loads((out / "summary.json").read_text())
    assert summary["preflight"]["status"] == "passed before"
    assert "preflight" in (out / "report.html").read_text()


def test_the_report_says_the_preflight_the_terminal_says(course, tmp_path, cache):
    """Graded beside the first students (nothing remembered), the preflight the terminal reports
    is the one summary.json and report.html give, not "not needed"."""
    seen = []
    klass, out = one_student_class(tmp_path), tmp_path / "out"
    grade_class(klass, out, course, jobs=1, on_preflight=seen.append)
    summary = json.loads((out / "summary.json").read_text())
    assert [p.status for p in seen] == [PreflightStatus.PASSED]
    assert summary["preflight"]["status"] == "passed" and summary["preflight"]["says"] == seen[0].describe()


def test_no_preflight_is_never_silent(course_at, tmp_path, cache):
    course = course_at(course_file(tmp_path, submission_timeout=0.001))
    klass, out = one_student_class(tmp_path), tmp_path / "out"
    grade_class(klass, out, course, jobs=1, preflight=False)
    summary = json.loads((out / "summary.json").read_text())
    assert summary["preflight"]["status"] == "skipped"
    assert "--no-preflight" in summary["preflight"]["says"]
    assert "--no-preflight" in (out / "report.html").read_text()


def test_a_kit_without_solutions_says_so(course, tmp_path, cache):
    with Sandbox(course.limits) as sandbox:
        checked = run_preflight(course, sandbox, solutions=tmp_path / "nowhere")
    assert checked.status is PreflightStatus.NO_SOLUTIONS and "no solutions" in checked.describe()


# A Python built without zlib (a source build missing its headers) has no gzip module: every honest
# .tar.gz would be refused as "not an archive that can be read", the student's fault.
NO_GZIP = 'raise ImportError("this Python was built without zlib")\n'


def test_a_grader_that_cannot_unpack_an_archive_stops_before_any_student(tmp_path, cache):
    """The preflight packs the solutions as a .tar.gz and a .zip and unpacks them as a student's upload
    is; where that fails, `attnkit grade` says why and writes no grade, and `attnkit doctor` marks it."""
    import tarfile

    klass = one_student_class(tmp_path)
    (klass / "yan").mkdir()
    with tarfile.open(klass / "yan" / "work.tar.gz", "w:gz") as tar:
        for path in sorted(SOLUTIONS.glob("*.py")):
            tar.add(path, arcname=path.name)
    shim = tmp_path / "no-gzip"
    shim.mkdir()
    (shim / "gzip.py").write_text(NO_GZIP)
    env = {**os.environ, "ATTNKIT_CACHE_DIR": str(cache),
           "PYTHONPATH": os.pathsep.join(filter(None, [str(shim), str(KIT_ROOT), os.environ.get("PYTHONPATH")]))}
    out = tmp_path / "out"
    run = subprocess.run([sys.executable, "-m", "autograder.cli", "grade", str(klass), "--out", str(out), "--jobs",
                          "1"], capture_output=True, text=True, timeout=600, env=env, cwd=str(tmp_path))
    assert run.returncode == 2, run.stdout + run.stderr
    assert "cannot unpack an archive of the course's own solutions (solutions.tar.gz: gzip module is not " \
           "available)" in run.stderr, run.stderr
    assert run.stderr.count("preflight failed") == 1
    assert not (out / "results").is_dir() or not any((out / "results").iterdir())
    doctor = subprocess.run([sys.executable, "-m", "autograder.cli", "doctor"], capture_output=True, text=True,
                            timeout=600, env=env, cwd=str(tmp_path))
    assert doctor.returncode == 1, doctor.stdout + doctor.stderr
    assert re.search(r"!! archives\s+a \.tar\.gz or \.zip of the solutions does not unpack here", doctor.stdout)


def test_the_preflight_and_doctor_unpack_the_solutions_archives_where_python_can(course):
    from autograder.frontends.doctor import _archives
    from autograder.grading.preflight import archives_unpack

    assert archives_unpack(course).startswith(("tarfile's data filter", "the kit's data filter"))
    found = _archives(course)
    assert found.ok and "a .tar.gz and a .zip of the solutions unpack" in found.text
