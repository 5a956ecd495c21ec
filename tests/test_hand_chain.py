"""The hand computation knows its slips: a mistake is named once, where it started,
and the steps computed from it share its words; answers exact for another scale are named with
that scale; "close but not close enough" is said only where every entry is off by rounding.

So one wrong product in row 1 is told once, not once per step, and the last step is not called
imprecise; Part B computed exactly with sqrt(3) for sqrt(4) is named so, not told to round later.
"""

from __future__ import annotations

import math

import numpy as np
import pytest

from autograder.checks import check_ids
from autograder.config import DEFAULT_COURSE, KIT_ROOT, load_course
from autograder.grading.course_session import GradingSession
from reference.attention import softmax
from reference.hand_computation import K_A, Q_A, V_A, X_CSM, answer_keys

CORPUS = KIT_ROOT / "tests" / "corpus" / "hand_computation" / "buggy"
IMPRECISE = "close but not close enough"
PART_A = ("scores", "scaled_scores", "weights", "output")


@pytest.fixture(scope="module")
def grade(tmp_path_factory):
    course = load_course(DEFAULT_COURSE, known_checks=check_ids())
    folder = tmp_path_factory.mktemp("hand")
    with GradingSession(course).start() as session:
        def graded(text: str) -> dict:
            (folder / "hand_computation.py").write_text(text, encoding="utf-8")
            result = session.grade(folder, stems=("hand_computation",), student="sam")
            return {c.check_id.split(".", 1)[1]: c for c in result.checks}
        yield graded


def _typed(values: dict, decimals: int) -> str:
    return "".join(f"{name} = {np.round(np.asarray(v, dtype=float), decimals).tolist()}\n" for name, v in values.items())


def _part_b(scale: float, decimals: int, order=(0, 1, 2)) -> dict:
    X = np.asarray(X_CSM)[list(order)]
    weights = np.round(softmax(X @ X.T / scale), decimals)
    return {"CSM_SCORES": X @ X.T, "CSM_WEIGHTS": weights, "CSM_OUTPUT": weights @ X}


def _part_a() -> dict:
    keys = answer_keys()
    return {name: keys[name] for name in ("SCORES", "SCALED_SCORES", "WEIGHTS", "OUTPUT")}


def test_a_slip_carried_through_the_steps_is_told_once_at_its_origin(grade):
    checks = grade((CORPUS / "hand_slip_carried.py").read_text(encoding="utf-8"))
    part_a = [checks[f"part_a.{step}"] for step in PART_A]
    assert all(not c.passed and c.misconceptions == ("hand_slip_carried",) for c in part_a)
    assert len({c.hint for c in part_a}) == 1             # the same words on every step: one cause
    hint = part_a[0].hint
    assert "SCORES[1, 0]" in hint and "q_1" in hint and "k_0" in hint      # which product
    assert "SCALED_SCORES, WEIGHTS and OUTPUT follow correctly" in hint
    assert IMPRECISE not in hint


def test_a_typo_in_one_entry_is_named_at_that_entry(grade):
    checks = grade((CORPUS / "hand_slip_carried__ho_typo_in_output.py").read_text(encoding="utf-8"))
    output = checks["part_b.output"]
    assert output.misconceptions == ("hand_slip_carried",) and "CSM_OUTPUT[2, 2] is 0.53" in output.hint
    assert IMPRECISE not in output.hint


@pytest.mark.parametrize("decimals", [4, 2])
def test_answers_exact_for_another_scale_are_named_with_that_scale(grade, decimals):
    checks = grade(_typed(_part_a(), 4) + _typed(_part_b(math.sqrt(3), decimals), decimals))
    weights, output = checks["part_b.weights"], checks["part_b.output"]
    for c in (weights, output):
        assert c.misconceptions == ("scaled_by_wrong_size",), c
        assert "sqrt(3)" in c.hint and "sqrt(4)" in c.hint and IMPRECISE not in c.hint
    assert weights.hint == output.hint


def test_answers_exact_for_inputs_in_another_order_are_named_so(grade):
    checks = grade(_typed(_part_a(), 4) + _typed(_part_b(2.0, 4, order=(1, 0, 2)), 4))
    failed = [c for name, c in checks.items() if name.startswith("part_b") and not c.passed]
    assert failed and all(c.misconceptions == ("hand_inputs_reordered",) for c in failed)
    assert all(IMPRECISE not in c.hint for c in failed)


def test_imprecise_only_where_every_entry_is_off_by_rounding(grade):
    Q, K, V = (np.asarray(a) for a in (Q_A, K_A, V_A))
    scores = Q @ K.T
    scaled = np.round(scores / math.sqrt(2), 1)          # 0.7 for 0.7071: rounded early
    weights = np.round(softmax(scaled), 2)
    values = {"SCORES": scores, "SCALED_SCORES": scaled, "WEIGHTS": weights, "OUTPUT": np.round(weights @ V, 2)}
    checks = grade(_typed(values, 4) + _typed(_part_b(2.0, 4), 4))
    assert checks["part_a.scaled_scores"].misconceptions == ("hand_imprecise",)
    assert IMPRECISE in checks["part_a.scaled_scores"].hint
