"""Red team, on the other ways a class is graded: the uploads of tests/test_intake_budget_attacks.py
(one small archive under sixty names, thousands of sparse files beside an honest archive) graded on
a Dask worker under a memory cap, and one attacker's upload graded by Gradescope's run_autograder
from the zip. Each attack costs its author alone: the run finishes, every student has a row, the
honest keep full marks, the attacker's witness (hand_computation.py) is graded and the feedback
says what was left out and why.
"""

from __future__ import annotations

import csv
import io
import json
import shutil

import pytest

from autograder.config.limits import IntakeLimits
from tests.test_hostile_uploads import HONEST
from tests.test_intake_budget_attacks import (NAMES, RUN_TIMEOUT, build_class, course_with_low_reading_limits,
                                              full_marks, points)

CAP_MB = 3072


@pytest.mark.slow
def test_on_a_dask_worker_the_reading_totals_are_each_students(tmp_path):
    pytest.importorskip("distributed")
    from tests.dask_capped import grade_on_capped_worker
    from tests.test_distributed import _env

    class_dir = build_class(tmp_path)
    shutil.rmtree(class_dir / "dense_notebook")      # the per-item limits on a worker: test_hostile_uploads
    course = course_with_low_reading_limits(tmp_path)
    (tmp_path / "tmp").mkdir()
    env = _env() | {"TMPDIR": str(tmp_path / "tmp")}
    run, out_of_memory, out = grade_on_capped_worker(tmp_path, class_dir, course, env, CAP_MB, RUN_TIMEOUT)
    assert run.returncode == 0 and not out_of_memory, (run.returncode, run.stderr[-3000:])
    rows = {r["student"]: r for r in csv.DictReader(io.StringIO((out / "grades.csv").read_text(encoding="utf-8")))}
    assert sorted(rows) == sorted([*HONEST, "many_names", "sparse_files"])
    for name in HONEST:
        assert float(rows[name]["total"]) == full_marks(course), rows[name]
    for name in ("many_names", "sparse_files"):
        assert float(rows[name]["hand_computation"]) == 7, rows[name]
        told = (out / "results" / f"{name}.json").read_text(encoding="utf-8")
        assert "was not read" in told and "a submission may use" in told, (name, told[:3000])
    assert float(rows["sparse_files"]["attention"]) == points(course, "attention"), rows["sparse_files"]


@pytest.mark.slow
def test_on_gradescope_an_archive_under_sixty_names_costs_its_author_points_only(tmp_path):
    from tests.test_gradescope_package import _attnkit, _grade, _root

    course = course_with_low_reading_limits(tmp_path)
    made = _attnkit("--course", str(course), "gradescope", str(tmp_path / "autograder.zip"))
    assert made.returncode == 0, made.stderr + made.stdout
    root = _root(tmp_path, tmp_path / "autograder.zip", full_marks(course))
    attacker = build_class(tmp_path) / "many_names"
    for path in attacker.iterdir():
        shutil.copy2(path, root / "submission" / path.name)
    results, run = _grade(root)       # Gradescope's results.json, checked against its schema
    assert run.returncode == 0, run.stderr[-3000:]
    by_stem: dict[str, float] = {}
    for test in results["tests"]:
        stem = test["extra_data"]["check_id"].split(".")[0]
        by_stem[stem] = by_stem.get(stem, 0) + test["score"]
    assert by_stem["hand_computation"] == 7, results["tests"]
    told = json.dumps(results)
    assert "was not read" in told and "archives opened a submission may use" in told, told[:3000]
    assert f"and {NAMES - IntakeLimits().archives - 5} more" in told, told[:3000]


def test_on_dask_a_student_whose_packing_runs_past_their_totals_is_told_and_the_run_goes_on(tmp_path, monkeypatch):
    """Packing for a worker runs in a bounded child charged to the student: past their totals, the
    student is sent as an empty folder with the reason, never an exception out of the class loop."""
    from autograder.cluster import client as cluster_client
    from autograder.config import load_course
    from autograder.intake import bounded
    from autograder.intake.students import Student

    def spent(*_args, **_kwargs):
        raise bounded.OverLimit("reading it needs more than 12 s of CPU time")

    sent = []

    class Executor:
        def submit(self, *args):
            sent.append(args)
            return "future"

    monkeypatch.setattr(cluster_client.packing, "packed", spent)
    grading = cluster_client.ClusterGrading(None, load_course(), owned=False, in_flight=1, task=print,
                                            isolation=True, preflight=False)
    grading.executor = Executor()
    (tmp_path / "mallory").mkdir()
    assert grading.submit(Student("mallory", tmp_path / "mallory")) == "future"
    assert sent[0][1:3] == ("mallory", cluster_client.EMPTY_SUBMISSION)
    notes, uploaded = grading._staged["mallory"]
    assert notes == ("your submission was not read: reading it needs more than 12 s of CPU time; nothing of it "
                     "was graded",) and uploaded == ()
    assert grading.accounts.of("mallory").left_out
