"""One switch turns every optional speed-up off (autograder/speedups.py), and the grades do not
change: the same folders graded with ATTNKIT_FAST=0 and with every speed-up on give the same
scores, statuses and messages, through `check` and through `grade`."""

from __future__ import annotations

import csv
import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from autograder.speedups import SPEEDUPS, SWITCH, UnknownSpeedup, _parse

KIT = Path(__file__).resolve().parents[1]
BUGGY = KIT / "tests" / "corpus" / "attention" / "buggy" / "no_scaling.py"


@pytest.mark.parametrize("value, expected", [
    ("", set(SPEEDUPS)), ("1", set(SPEEDUPS)), ("0", set()), ("off", set()),
    ("-course_cache", set(SPEEDUPS) - {"course_cache"}),
    ("course_cache", {"course_cache"}),
])
def test_the_switch_reads_all_none_or_named_speedups(value, expected):
    assert _parse(value) == expected


def test_a_misspelt_speedup_is_one_sentence_naming_the_choices():
    with pytest.raises(UnknownSpeedup, match="no speed-up 'course_cash'.*course_cache"):
        _parse("-course_cash")
    run = subprocess.run([sys.executable, "-m", "autograder.cli", "check"], env=dict(os.environ, **{SWITCH: "x"}),
                         capture_output=True, text=True, timeout=120, cwd=KIT)
    assert run.returncode == 2 and "no speed-up 'x'" in run.stderr and "Traceback" not in run.stderr


def _attnkit(args: list[str], fast: str, cwd: Path) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "autograder.cli", *args], env=dict(os.environ, **{SWITCH: fast}),
                          capture_output=True, text=True, timeout=900, cwd=cwd)


def _tests(path: Path) -> dict:
    data = json.loads(path.read_text())
    return {t["name"]: (t["score"], t["status"], t["output"]) for t in data["tests"]}


@pytest.mark.slow
def test_check_grades_the_same_with_every_speedup_off(tmp_path):
    folder = tmp_path / "sub"
    shutil.copytree(KIT / "solutions", folder)
    shutil.copy(BUGGY, folder / "attention.py")
    results = {}
    for fast in ("1", "0"):
        out = tmp_path / f"results-{fast}.json"
        run = _attnkit(["check", "--submission", str(folder), "--json", str(out)], fast, tmp_path)
        assert out.exists(), run.stdout + run.stderr
        results[fast] = _tests(out)
    assert results["1"] == results["0"]
    assert any(score == 0 for score, _, _ in results["0"].values())    # the bug is seen both ways


@pytest.mark.slow
def test_a_class_grades_the_same_with_every_speedup_off(tmp_path):
    grades = {}
    for fast in ("1", "0"):
        out = tmp_path / f"out-{fast}"
        run = _attnkit(["grade", str(KIT / "demo" / "class"), "--out", str(out), "--no-preflight"], fast, tmp_path)
        assert run.returncode == 0, run.stdout[-2000:] + run.stderr[-2000:]
        with (out / "grades.csv").open(newline="") as fh:
            grades[fast] = list(csv.DictReader(fh))
        results = {p.name: _tests(p) for p in (out / "results").glob("*.json")}
        grades[fast + "-results"] = results
    assert grades["1"] == grades["0"]
    assert grades["1-results"] == grades["0-results"]


def test_with_the_course_cache_off_a_course_is_validated_and_nothing_is_kept(tmp_path, monkeypatch):
    from autograder.config import load_course
    from autograder.config import course as course_module

    monkeypatch.setenv("ATTNKIT_CACHE_DIR", str(tmp_path / "cache"))
    monkeypatch.setenv(SWITCH, "-course_cache")
    validated = []
    real = course_module.course_from_data
    monkeypatch.setattr(course_module, "course_from_data", lambda data: validated.append(1) or real(data))
    load_course()
    load_course()
    assert len(validated) == 2
    assert not (tmp_path / "cache").exists() or not any((tmp_path / "cache").rglob("*.json"))



# The tunings that earned under 10% on their paths are gone (benchmarks/results/speedups.json):
# the plain path runs as Python and the libraries run it, on every door (a sandbox's child:
# tests/test_sandbox.py, test_the_child_collects_its_garbage_as_python_does).

def test_a_class_run_leaves_the_interpreter_as_it_found_it(tmp_path, monkeypatch):
    """Graded whole (`attnkit grade` on the demo class), the run freezes no object, changes no
    switch interval, gives back no memory by hand, and a Dask worker starts no warm-up thread."""
    import ctypes
    import gc

    from autograder.cluster import worker
    from autograder.config import load_course
    from autograder.grading.local_grading import grade_class

    seen = []
    monkeypatch.setattr(gc, "freeze", lambda: seen.append("gc.freeze"))
    monkeypatch.setattr(sys, "setswitchinterval", lambda value: seen.append("setswitchinterval"))
    real = ctypes.CDLL

    class Library:
        def __init__(self, *args, **kwargs):
            self._library = real(*args, **kwargs)

        def __getattr__(self, name):
            if name == "malloc_trim":
                seen.append(name)
            return getattr(self._library, name)

    monkeypatch.setattr(ctypes, "CDLL", Library)
    grade_class(KIT / "demo" / "class", tmp_path / "out", load_course(), jobs=1, regrade=True, preflight=False)
    assert (tmp_path / "out" / "grades.csv").is_file()
    assert seen == []
    assert not hasattr(worker, "warm_up")
