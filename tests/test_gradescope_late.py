"""course.yml's late policy applied by the Gradescope runner to Gradescope's own submission time
(submission_metadata.json `created_at`): raw score, penalty and final score in results.json's top
text; course.yml's due date wins over Gradescope's; without a policy, nothing is said or taken."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tests.lms_downloads import HAND, RIGHT
from tests.test_lms_roundtrip import _course

POLICY = {"penalty": 10, "per": "day"}


def _root(tmp_path: Path, late: dict | None, created_at: str, due_date: str = "2026-03-02T23:59:00.000000-05:00",
          own_due: str | None = None) -> Path:
    (tmp_path / "source").mkdir()
    _course(tmp_path / "source", **({"late": late} if late is not None else {}))
    (tmp_path / "submission").mkdir()
    (tmp_path / "submission" / f"{HAND}.py").write_bytes(RIGHT)
    (tmp_path / "results").mkdir()
    user = {"email": "ada@uni.edu", "id": 1, "name": "Ada Lovelace", "sid": "S1"}
    if own_due is not None:
        user["assignment"] = {"due_date": own_due, "late_due_date": None}
    meta = {"id": 99, "created_at": created_at, "users": [user],
            "assignment": {"due_date": due_date, "late_due_date": "2026-03-09T23:59:00.000000-05:00",
                           "title": "Self-Attention Lab", "total_points": "7.0"}}
    (tmp_path / "submission_metadata.json").write_text(json.dumps(meta), encoding="utf-8")
    return tmp_path


def _run(root: Path) -> dict:
    from autograder.gradescope.run import run

    data = run(root)
    assert json.loads((root / "results" / "results.json").read_text(encoding="utf-8"))["score"] == data["score"]
    return data


def test_a_late_submission_loses_the_policys_penalty_against_course_yml_due_date(tmp_path):
    # Gradescope's due date is a week later: course.yml's own wins.
    data = _run(_root(tmp_path, {"due": "2026-03-02T23:59:00-05:00", **POLICY}, "2026-03-04T10:00:00.000000-05:00",
                      due_date="2026-03-09T23:59:00.000000-05:00"))
    # the checks keep what they earned; a row of its own takes the penalty off: the rows add up to the total
    assert data["score"] == 5.6 and sum(t["score"] for t in data["tests"] if t["name"] != "late penalty") == 7
    assert [t["score"] for t in data["tests"] if t["name"] == "late penalty"] == [-1.4]
    assert round(sum(t["score"] for t in data["tests"]), 2) == data["score"]
    assert "Score 7 - 1.4 late penalty = 5.6 / 7" in data["output"]
    assert "20% off" in data["output"] and "due date from course.yml" in data["output"]


def test_without_a_due_date_in_course_yml_gradescopes_own_is_used_with_the_students_extension(tmp_path):
    data = _run(_root(tmp_path, POLICY, "2026-03-03T10:00:00.000000-05:00",
                      own_due="2026-03-03T23:59:00.000000-05:00"))     # an extension granted in Gradescope
    assert data["score"] == 7 and "on time" in data["output"] and "due date from Gradescope" in data["output"]


def test_an_unknown_submission_time_is_said_and_costs_nothing(tmp_path):
    data = _run(_root(tmp_path, {"due": "2026-03-02T23:59:00-05:00", **POLICY}, ""))
    assert data["score"] == 7 and "submission time unknown" in data["output"]


def test_without_a_late_policy_the_runner_says_nothing_and_leaves_late_work_to_gradescope(tmp_path):
    data = _run(_root(tmp_path, None, "2026-03-20T10:00:00.000000-05:00"))
    assert data["score"] == 7
    assert "late" not in data["output"].lower() and "due date" not in data["output"].lower()


def test_a_course_with_a_late_policy_but_no_due_date_is_refused_for_a_local_run(tmp_path, capsys):
    from autograder.cli import main

    course = _course(tmp_path, late=POLICY)
    (tmp_path / "class" / "ada").mkdir(parents=True)
    (tmp_path / "class" / "ada" / f"{HAND}.py").write_bytes(RIGHT)
    assert main(["--course", str(course), "grade", str(tmp_path / "class"), "--out", str(tmp_path / "out")]) == 2
    assert "has no `due:`" in capsys.readouterr().err
    assert not (tmp_path / "out").exists()
