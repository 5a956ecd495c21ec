"""scripts/handout_agreement.py: which differences between check.py and the grader it reports."""
from __future__ import annotations

import pytest

from scripts.handout_agreement import differences, handed_in_stems, parse_args


def check(status="passed", score=1.0, hint=""):
    return {"status": status, "score": score, "hint": hint}


def test_agreeing_checks_give_no_difference():
    both = {"attention.softmax.rows": check(), "attention.softmax.axis": check("failed", 0, "an axis")}
    grader = {k: dict(v, message="the grader's own words") for k, v in both.items()}
    assert differences(both, grader, {"attention"}) == (2, [])


def test_status_score_and_hint_are_each_reported():
    mine = {"attention.softmax.rows": check("error", 0, "raised")}
    theirs = {"attention.softmax.rows": check("failed", 0.5, "")}
    count, found = differences(mine, theirs, {"attention"})
    assert count == 1
    assert [(i, field) for i, field, _ in found] == [
        ("attention.softmax.rows", "status"), ("attention.softmax.rows", "score"), ("attention.softmax.rows", "hint")]
    assert "check.py 'error' | grader 'failed'" in found[0][2]


def test_a_check_on_one_side_only_is_a_difference():
    count, found = differences({"multihead.split_heads.values": check()}, {}, {"multihead"})
    assert (count, found) == (1, [("multihead.split_heads.values", "presence", "only in check.py")])


def test_exercises_not_handed_in_are_left_out():
    # check.py checks the handout's stub where the grader says "missing": not a disagreement
    mine = {"scaling.plot_scaling.figure": check("not_implemented", 0)}
    theirs = {"scaling.plot_scaling.figure": check("missing", 0)}
    assert differences(mine, theirs, {"attention"}) == (0, [])


def test_handed_in_stems_reads_both_forms(tmp_path):
    for name in ("attention.py", "causal_mask.ipynb", "notes.txt", "check.py"):
        (tmp_path / name).write_text("")
    assert handed_in_stems(tmp_path) == {"attention", "causal_mask"}


def test_clear_errors_for_bad_folders(tmp_path, capsys):
    with pytest.raises(SystemExit):
        parse_args([str(tmp_path / "nobody")])
    assert "not a folder" in capsys.readouterr().err
    for parent in ("a", "b"):
        (tmp_path / parent / "same").mkdir(parents=True)
    with pytest.raises(SystemExit):
        parse_args([str(tmp_path / "a" / "same"), str(tmp_path / "b" / "same")])
    assert "share a name" in capsys.readouterr().err
