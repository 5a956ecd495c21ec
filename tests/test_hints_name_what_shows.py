"""A hint names only what the student's code and results show, on both sides: the words a
student reads from check.py (run as a student runs it: a Python without the kit) and from the
grader, for files written as students write them.

- a softmax along another axis leaves a blocked key with weight: the padding mask is not blamed;
- weights not divided by their row's sum are named for that, not for a slip early on;
- a figure whose lines only lack labels is told to label them, with counts that add up;
- entropies in bits are one mistake with one hint on every check they fail;
- "follows from rounded values" only of a step computed from a rounded earlier one;
- a hint that quotes a construct (`.T`, `if mask:`, a fixed axis, `~`) only where the file holds it.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
from pathlib import Path

import numpy as np
import pytest

from autograder.checks import check_ids
from autograder.config import KIT_ROOT, load_course
from autograder.handout.write import write_handout

COURSE = load_course(known_checks=check_ids())
SOLUTIONS = KIT_ROOT / "solutions"


@pytest.fixture(scope="module")
def handout(tmp_path_factory) -> Path:
    out = tmp_path_factory.mktemp("handout") / "lab"
    write_handout(out, COURSE)
    return out


@pytest.fixture(scope="module")
def session():
    from autograder.grading.course_session import GradingSession

    with GradingSession(COURSE) as graded:
        yield graded


def _student(handout: Path, tmp_path: Path, files: dict[str, str]) -> Path:
    folder = tmp_path / "student"
    shutil.copytree(handout, folder)
    for name, text in files.items():
        (folder / name).write_text(text, encoding="utf-8")
    return folder


def _check_py(python: Path, folder: Path, stem: str) -> tuple[str, dict]:
    """What check.py printed for `stem`, and its checks by id (--json)."""
    env = {k: v for k, v in os.environ.items() if k != "PYTHONPATH"}
    done = subprocess.run([str(python), "check.py", stem, "--json", "results.json"], cwd=folder,
                          capture_output=True, text=True, timeout=900, env=env)
    assert done.returncode in (0, 1), done.stdout + done.stderr
    written = json.loads((folder / "results.json").read_text())["exercises"][stem]["checks"]
    return done.stdout, {c["id"]: c for c in written}


def _grader(session, folder: Path, stem: str) -> dict:
    (graded,) = session.grade(folder, stems=(stem,), student="sam").exercises
    return {c.check_id: c for c in graded.checks}


def _both(session, python, folder: Path, stem: str) -> tuple[str, dict, dict]:
    printed, mine = _check_py(python, folder, stem)
    return printed, mine, _grader(session, folder, stem)


# ---------------------------------------------------------------- the softmax axis, not the mask

SDPA_ON_AXIS = '''import numpy as np


def softmax(x, axis=-1):
    e = np.exp(x - x.max(axis=axis, keepdims=True))
    return e / e.sum(axis=axis, keepdims=True)


def scaled_dot_product_attention(Q, K, V, mask=None):
    scores = Q @ np.swapaxes(K, -1, -2) / np.sqrt(Q.shape[-1])
    if mask is not None:
        scores = np.where(mask, scores, -1e9)     # the padding mask, applied right
    weights = softmax(scores, axis={axis})
    return weights @ V, weights
'''
PADDING = "attention.scaled_dot_product_attention.padding_mask"


@pytest.mark.parametrize("axis,seen", [
    ("0", "along axis 0 (the batch) adds up to 1"),
    ("1", "along axis 1 (a batch or head axis) adds up to 1"),
    ("-2", "each column of your weights adds up to 1"),
])
def test_a_softmax_on_another_axis_is_not_told_as_a_mask_that_blocks_nothing(handout, session, kit_free_python,
                                                                               tmp_path, axis, seen):
    """softmax(scores, axis=0) with a right padding mask: a key every batch entry blocks gets 1/3 of
    the batch's weight. The student is told where the weights do add up to 1, never that the
    mask lets a blocked key through."""
    folder = _student(handout, tmp_path, {"attention.py": SDPA_ON_AXIS.format(axis=axis)})
    printed, mine, graded = _both(session, kit_free_python, folder, "attention")
    hints = [c["hint"] for c in mine.values()] + [c.hint for c in graded.values()]
    assert not any("mask blocks" in h or "mask allows" in h for h in hints), hints
    assert "mask blocks" not in printed, printed
    assert not graded[PADDING].passed and mine[PADDING]["status"] == "failed"
    for hint in (graded[PADDING].hint, mine[PADDING]["hint"]):
        assert seen in hint.lower(), hint
    # named as the batched checks are: one mistake
    assert graded[PADDING].misconceptions == graded["attention.scaled_dot_product_attention.batched"].misconceptions
