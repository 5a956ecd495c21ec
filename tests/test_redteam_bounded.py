"""Red team: what a submission asks the grader to compute is bounded like its own code.

A class of an honest student and the attacks of tests/hostile/provided_* and remembers_hidden
is graded by `attnkit grade` in a subprocess under a 2 GiB memory cap (tests/memory_capped.py),
so a bound that fails costs this test, never the machine. Each attack must cost its author the
checks it was in, with the reason, and nothing else: the run finishes, the honest student keeps
full marks, the report names who hit a bound.
"""

from __future__ import annotations

import csv
import io
import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
import yaml

from autograder.checks import CHECKS
from autograder.checks.base import rng_for
from autograder.config import KIT_ROOT
from autograder.results import CheckResult, SubmissionResult
from tests.memory_capped import run_capped
from tests.test_classroom import DEMO, SOLUTIONS, _hostile, _student, small_course

CAP_MB = 2048
# case -> the stem its file is for
CASES = {"provided_bomb": "causal_mask", "provided_loop": "causal_mask", "provided_unread": "causal_mask",
         "remembers_hidden": "causal_mask", "provided_float_size": "multihead", "provided_0d_size": "multihead"}
HIDDEN_TOO = "causal_mask.causal_attention.weights"    # graded before the visible output check, if in order


def build_class(root: Path, cases: dict[str, str]) -> tuple[Path, Path, Path, int]:
    """(class folder, OUT, course.yml, seed): ada and one student per case, in the small course
    of tests/test_classroom.py with one more hidden check."""
    class_dir, out = root / "class", root / "out"
    course_path = small_course(root)
    data = yaml.safe_load(course_path.read_text(encoding="utf-8"))
    data["exercises"]["causal_mask"]["checks"][HIDDEN_TOO] = {"points": 2, "hidden": True}
    course_path.write_text(yaml.safe_dump(data, sort_keys=False), encoding="utf-8")
    witness = {"hand_computation.py": SOLUTIONS / "hand_computation.py"}
    _student(class_dir, "ada", {p.name: p for p in (DEMO / "ada").iterdir()})
    for case, stem in cases.items():
        _student(class_dir, case, witness | {f"{stem}.py": _hostile(case, stem, {})})
    return class_dir, out, course_path, data["seed"]


def _kit_env() -> dict:
    return dict(os.environ, PYTHONPATH=os.pathsep.join(filter(None, [str(KIT_ROOT), os.environ.get("PYTHONPATH")])))


class Graded:
    def __init__(self, root: Path):
        self.class_dir, self.out, self.course_path, self.seed = build_class(root, CASES)
        self.run = run_capped([sys.executable, "-m", "autograder.cli", "--course", str(self.course_path), "grade",
                               str(self.class_dir), "--out", str(self.out), "--jobs", "2"],
                              memory_mb=CAP_MB, timeout=900, env=_kit_env(), cwd=str(root))

    def results(self, student: str) -> SubmissionResult:
        data = json.loads((self.out / "results" / f"{student}.json").read_text(encoding="utf-8"))
        return SubmissionResult.from_dict(data["extra_data"]["result"])

    def checks(self, student: str) -> dict[str, CheckResult]:
        return {c.check_id: c for c in self.results(student).checks}


@pytest.fixture(scope="module")
def graded(tmp_path_factory) -> Graded:
    return Graded(tmp_path_factory.mktemp("bounded"))


def test_the_run_finishes_within_its_memory_cap_and_honest_students_keep_full_marks(graded):
    run = graded.run
    assert run.returncode == 0 and not run.out_of_memory, (run.capped_by, run.returncode, run.stderr[-3000:])
    rows = {r["student"]: r for r in csv.DictReader(io.StringIO((graded.out / "grades.csv").read_text()))}
    assert sorted(rows) == sorted(["ada", *CASES])
    assert float(rows["ada"]["total"]) == float(rows["ada"]["max_total"]) == 60
    for case in CASES:
        assert float(rows[case]["hand_computation"]) == 7, case      # the witness exercise is graded


@pytest.mark.parametrize("case, function", [("provided_bomb", "create_causal_mask"),
                                            ("provided_unread", "create_causal_mask")])
def test_a_provided_call_above_the_bounds_costs_the_calling_checks_only(graded, case, function):
    checks = graded.checks(case)
    for check_id, c in checks.items():
        if check_id.startswith(f"causal_mask.{function}."):
            assert c.status == "error" and c.reason == "refused" and c.score == 0, (check_id, c)
        elif check_id.startswith("causal_mask."):
            assert c.passed, (check_id, c)
    first = checks[f"causal_mask.{function}.values"].message
    if case == "provided_bomb":
        assert "scaled_dot_product_attention for scores of shape (40000, 40000, 1, 1)" in first, first
    else:       # refused at once, not after a 30 s wait for the child to read
        assert "without reading the answer" in first, first


def test_the_grader_time_spent_answering_counts_against_the_call(graded):
    """A loop of allowed provided calls is stopped by the call's own limit (2 s here, counted on
    the grader's answering time), not by the submission's budget (60 s) at the end."""
    c = graded.checks("provided_loop")["causal_mask.create_causal_mask.values"]
    assert c.status == "error" and c.reason == "timeout", c
    assert "stopped after 2 s" in c.message and "budget" not in c.message, c.message
    # the hand computation, and causal_attention's visible checks (its arguments check among them)
    checks = graded.checks("provided_loop")
    assert checks["causal_mask.causal_attention.arguments"].status == "passed", checks
    assert graded.results("provided_loop").score == 7 + 6


@pytest.mark.parametrize("case, what", [("provided_float_size", "got float (60000.0)"),
                                        ("provided_0d_size", "got a 0-d array (60000)")])
def test_a_size_must_be_an_int(graded, case, what):
    c = graded.checks(case)["multihead.split_heads.values"]
    assert c.status == "error" and c.reason == "raised", c
    assert f"TypeError: seq_len expected an int, {what}" in c.message, c.message


def test_a_hidden_checks_inputs_never_reach_a_visible_message(graded):
    checks = graded.checks("remembers_hidden")
    visible = [c for c in checks.values() if not c.hidden]
    told = checks["causal_mask.causal_attention.output"].message
    assert "SEEN (5, 5):" in told, told                 # the channel works on what it may see
    for check in CHECKS["causal_mask"]:
        if checks[check.id].hidden:
            Q = check.inputs(rng_for(graded.seed, check.id))["Q"]
            secret = f"{Q.shape}:{float(Q.ravel()[0]):.6f}"
            for c in visible:
                assert secret not in c.message + c.hint, (check.id, c.check_id)
            assert secret not in (graded.out / "feedback" / "remembers_hidden.md").read_text(encoding="utf-8")


def test_the_report_names_who_hit_a_bound_and_why(graded):
    trouble = json.loads((graded.out / "summary.json").read_text(encoding="utf-8"))["trouble"]
    by_student = {t["student"]: t for t in trouble}
    for case in ("provided_bomb", "provided_unread"):
        assert by_student[case]["kind"] == "refused", by_student.get(case)
        assert "kit-provided" in by_student[case]["message"]
    assert by_student["provided_loop"]["kind"] == "timed out"
    html = (graded.out / "report.html").read_text(encoding="utf-8")
    assert "provided_bomb" in html and "(40000, 40000, 1, 1)" in html


# ---------------------------------------------------------------------- under `nbgrader autograde`

@pytest.mark.slow
def test_under_nbgrader_autograde_the_run_finishes_and_the_honest_student_keeps_full_marks(tmp_path):
    """The same attacks as cells of a submitted notebook: `nbgrader autograde` (the kit grading in
    nbgrader's own process) runs under the memory cap and finishes; each attack costs its checks."""
    from autograder.config import DEFAULT_COURSE
    from tests.nbgrader_capped import CappedNbgraderCourse

    data = yaml.safe_load(DEFAULT_COURSE.read_text(encoding="utf-8"))
    data["exercises"] = {"causal_mask": data["exercises"]["causal_mask"]}
    data["limits"].update(call_timeout=2, import_timeout=3, memory_mb=1024)
    course_file = tmp_path / "course.yml"
    course_file.write_text(yaml.safe_dump(data, sort_keys=False), encoding="utf-8")
    course = CappedNbgraderCourse(tmp_path, course_file, _kit_env(), CAP_MB, 900)
    course.release()
    for student, case in (("honest", None), ("provided_bomb", "provided_bomb"), ("provided_unread", "provided_unread")):
        nb = course.released("causal_mask")
        if case is not None:     # the solution cell of create_causal_mask becomes the attack
            cell = next(c for c in nb.cells if c.source.startswith("def create_causal_mask"))
            cell.source = _hostile(case, "causal_mask", {})
        course.submit(student, "causal_mask", nb)
    rows = course.autograde_and_export()
    assert rows["honest"] == sum(float(v if not isinstance(v, dict) else v["points"])
                                 for v in data["exercises"]["causal_mask"]["checks"].values()), rows
    # the solution's causal_attention calls the student's own create_causal_mask: every check does
    assert rows["provided_bomb"] == rows["provided_unread"] == 0, rows
    for case, words in (("provided_bomb", "for scores of shape (40000, 40000, 1, 1)"),
                        ("provided_unread", "without reading the answer")):
        told = course.told(case, "causal_mask")
        # the stop, and its cause told once for every check it cost
        assert "create_causal_mask was stopped" in told
        assert f"it {'asked' if case == 'provided_bomb' else 'called'}" in told
        assert words in told, told[-2000:]


# ---------------------------------------------------------------------- on a Dask worker

@pytest.mark.slow
def test_on_a_dask_worker_under_the_cap_the_run_finishes_and_honest_students_keep_full_marks(tmp_path):
    """The worker (which answers the provided calls) runs under the memory cap; the scheduler
    and `attnkit grade --scheduler` beside it."""
    pytest.importorskip("distributed")
    from tests.dask_capped import capped_worker
    from tests.test_distributed import _env

    cases = {c: CASES[c] for c in ("provided_bomb", "provided_unread", "provided_float_size")}
    class_dir, out, course_path, _seed = build_class(tmp_path, cases)
    env = _env()
    with capped_worker(tmp_path, env, CAP_MB) as (address, cap, procs):
        run = subprocess.run([sys.executable, "-m", "autograder.cli", "--course", str(course_path), "grade",
                              str(class_dir), "--out", str(out), "--scheduler", address],
                             env=env, capture_output=True, text=True, timeout=900, cwd=str(tmp_path))
        assert run.returncode == 0 and not cap.out_of_memory(), (cap.capped_by, run.stdout[-2000:],
                                                                 run.stderr[-3000:])
        assert procs[-1].poll() is None            # the worker is alive after the class
    rows = {r["student"]: r for r in csv.DictReader(io.StringIO((out / "grades.csv").read_text()))}
    assert float(rows["ada"]["total"]) == float(rows["ada"]["max_total"]) == 60
    results = {r: SubmissionResult.from_dict(json.loads((out / "results" / f"{r}.json").read_text())
                                             ["extra_data"]["result"]) for r in cases}
    for case in ("provided_bomb", "provided_unread"):
        check = next(c for c in results[case].checks if c.check_id == "causal_mask.create_causal_mask.values")
        assert check.reason == "refused", check
        assert results[case].exercise("hand_computation").score == 7
    check = next(c for c in results["provided_float_size"].checks if c.check_id == "multihead.split_heads.values")
    assert "seq_len expected an int, got float" in check.message, check
