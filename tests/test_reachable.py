"""Each misconception id is reachable from the mistake it describes.

For every catalogue entry, a student-style file with exactly that mistake (the solution with one
edit, tests/mistakes_by_edit.py) is graded by the full pipeline, grading.submission.grade_submission in a
real Sandbox, and the id must be among the tags of its failed checks (CheckResult.misconceptions,
what results.json and summary.json carry), with the hint shown where the id is tagged.
"""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(Path(__file__).resolve().parent))

from mistakes_by_edit import HAND, MISTAKES, source_with  # noqa: E402

from autograder.config import load_course  # noqa: E402
from autograder.checks import all_misconceptions  # noqa: E402

COURSE = load_course(ROOT / "course.yml")


def original(stem: str) -> str:
    return HAND if stem == "hand_computation" else (ROOT / "solutions" / f"{stem}.py").read_text(encoding="utf-8")


@pytest.fixture(scope="module")
def sandbox():
    from autograder.sandbox import Sandbox

    with Sandbox(COURSE.limits) as sb:
        yield sb


def grade(sandbox, tmp_path: Path, stem: str, source: str):
    from autograder.grading.submission import grade_submission

    (tmp_path / f"{stem}.py").write_text(source, encoding="utf-8")
    return grade_submission(tmp_path, COURSE, sandbox, stems=(stem,)).exercises[0]


def test_every_catalogue_entry_has_a_mistake_to_grade():
    entries = {(m.stem, m.id) for m in all_misconceptions()}
    covered = {(stem, mis_id) for stem, mis_id, _ in MISTAKES}
    assert entries <= covered, sorted(entries - covered)


@pytest.mark.parametrize("stem", sorted({stem for stem, _, _ in MISTAKES}))
def test_the_unedited_files_get_full_marks(sandbox, tmp_path, stem):
    """The files the mistakes are made in are right: a lost point is the edit's doing."""
    result = grade(sandbox, tmp_path, stem, original(stem))
    assert result.score == result.max_score, [(c.check_id, c.message) for c in result.checks if not c.passed]


@pytest.mark.parametrize("stem,mis_id,variant", sorted(MISTAKES),
                         ids=[f"{s}:{m}{':' + v if v else ''}" for s, m, v in sorted(MISTAKES)])
def test_the_mistake_is_named_through_the_full_grade(sandbox, tmp_path, stem, mis_id, variant):
    result = grade(sandbox, tmp_path, stem, source_with(stem, original(stem), MISTAKES[(stem, mis_id, variant)]))
    failed = [c for c in result.checks if not c.passed]
    assert result.score < result.max_score
    tagged = {m for c in failed for m in c.misconceptions}
    assert mis_id in tagged, [(c.check_id, c.status, c.misconceptions, c.message[:160], c.hint[:160]) for c in failed]


def test_an_explanation_the_students_passing_checks_rule_out_is_not_offered(sandbox, tmp_path):
    """merge_heads alone cannot tell a merge with the axes in the wrong order from the inverse of an
    interleaved split; a student whose split_heads passes did not interleave it."""
    result = grade(sandbox, tmp_path, "multihead",
                   source_with("multihead", original("multihead"), MISTAKES[("multihead", "merge_wrong_axes", "numpy")]))
    by_id = {c.check_id: c for c in result.checks}
    assert all(by_id[i].passed for i in ("multihead.split_heads.values", "multihead.split_heads.layout"))
    merge = by_id["multihead.merge_heads.values"]
    assert merge.misconceptions == ("merge_wrong_axes",), merge.misconceptions
    assert "explanations fit" not in merge.hint and "interleaved" in merge.hint


def test_the_same_merge_is_explained_by_the_split_when_the_split_is_wrong_too(sandbox, tmp_path):
    """The counterpart of the test above (the rule weighs the student's results, not the merge
    alone): the very same merge_heads, in a file whose split_heads interleaves as well (a round trip
    that holds, a split that fails), is the interleaved split undone, and a merge with the axes in
    the wrong order is what the passing round trip rules out."""
    both = (MISTAKES[("multihead", "split_interleaved", "numpy")]
            + MISTAKES[("multihead", "merge_wrong_axes", "numpy")])
    result = grade(sandbox, tmp_path, "multihead", source_with("multihead", original("multihead"), both))
    by_id = {c.check_id: c for c in result.checks}
    assert not by_id["multihead.split_heads.values"].passed and by_id["multihead.merge_heads.round_trip"].passed
    merge = by_id["multihead.merge_heads.values"]
    assert not merge.passed and merge.misconceptions == ("split_interleaved",), merge.misconceptions
    assert "explanations fit" not in merge.hint and "dealt the features in turn" in merge.hint


def test_a_hint_that_quotes_a_construct_is_not_given_to_a_file_without_it(sandbox, tmp_path):
    """`(1 - mask) * -np.inf` gives nan where `~` on a 0/1 mask gives nan too; its author wrote no
    `~` and is not told about one (the entry quotes `~`: judge/quoted.py)."""
    source = source_with("attention", original("attention"),
                         [("scores = np.where(allowed, scores, -1e9)",
                           "scores = scores + (1 - np.asarray(mask)) * -np.inf")])
    assert "~" not in source
    result = grade(sandbox, tmp_path, "attention", source)
    failed = [c for c in result.checks if not c.passed]
    assert failed
    assert all("mask_bitwise_not" not in c.misconceptions and "`~`" not in c.hint for c in failed), \
        [(c.check_id, c.misconceptions, c.hint) for c in failed]


def test_a_right_mask_used_the_wrong_way_round_is_told_where_it_is_used(sandbox, tmp_path):
    """create_causal_mask is np.tril (its checks pass); causal_attention blocks where it is 1. The
    hint speaks of causal_attention's use of the mask, not of a mask the wrong way round."""
    edit = MISTAKES[("causal_mask", "mask_read_inverted", "")]
    result = grade(sandbox, tmp_path, "causal_mask", source_with("causal_mask", original("causal_mask"), edit))
    by_id = {c.check_id: c for c in result.checks}
    assert all(c.passed for cid, c in by_id.items() if ".create_causal_mask." in cid)
    failed = [c for c in result.checks if not c.passed]
    assert failed and all(".causal_attention." in c.check_id for c in failed)
    told = [c for c in failed if c.hint and not c.hidden]
    assert told, [(c.check_id, c.hint) for c in failed]
    for c in failed:
        assert "mask_inverted" not in c.misconceptions, (c.check_id, c.misconceptions, c.hint)
        assert "The causal mask is the wrong way round" not in c.hint, (c.check_id, c.hint)
    assert any("mask_read_inverted" in c.misconceptions and "causal_attention" in c.hint for c in told), \
        [(c.check_id, c.misconceptions, c.hint) for c in told]
