"""One switch turns every optional speed-up off (autograder/speedups.py), and the grades do not
change: the same folders graded with ATTNKIT_FAST=0 and with every speed-up on give the same
scores, statuses and messages, through `check` and through `grade`."""

from __future__ import annotations

import csv
import json
import os
import shutil
import socket
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


def test_a_zygote_started_with_its_speedup_off_is_told_so():
    """zygote_imports_without_gc reaches the zygote in its configuration (the switch is not in its
    environment): off, it imports with the collector on."""
    from autograder.sandbox import zygote_process

    told = {}

    def popen(cmd, **kwargs):
        told[os.environ[SWITCH]] = json.loads(cmd[-1])["imports_without_gc"]
        raise OSError("not started: the test only reads how")

    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(zygote_process.subprocess, "Popen", popen)
        for fast in ("1", "0", "-zygote_imports_without_gc", "-course_cache"):
            patch.setenv(SWITCH, fast)
            with pytest.raises(OSError, match="not started"), socket.socket() as ctrl:
                zygote_process.start_zygote_script({}, ctrl, None)
    assert told == {"1": True, "0": False, "-zygote_imports_without_gc": False, "-course_cache": True}
