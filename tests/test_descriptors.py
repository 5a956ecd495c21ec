"""The exercise descriptors hold together: every name they give points at something real, so a
typo in a new catalogue entry, observer or picture fails here rather than silently never firing."""

from __future__ import annotations

import dataclasses
import pytest

from autograder.checks import EXERCISES
from autograder.checks.contract import PROVIDED, RETURNS, STEMS
from autograder.checks import all_misconceptions
from autograder.checks.exercise import Exercise
from reference import STEMS as REFERENCE_STEMS


def test_every_reference_module_has_a_descriptor_and_the_contract_derives_from_them():
    assert set(EXERCISES) == set(REFERENCE_STEMS) == set(STEMS)
    assert [e.order for e in EXERCISES.values()] == sorted(e.order for e in EXERCISES.values())
    for stem, exercise in EXERCISES.items():
        assert RETURNS[stem] == exercise.returns and PROVIDED[stem] == exercise.provided
        assert set(exercise.provided) <= set(EXERCISES) - {stem}


@pytest.mark.parametrize("stem", list(EXERCISES))
def test_each_catalogue_entry_names_checks_and_graded_names_of_its_exercise(stem):
    exercise = EXERCISES[stem]
    ids = [c.id for c in exercise.checks]
    assert exercise.misconceptions, f"{stem} names no misconception"
    for mis in exercise.misconceptions:
        assert mis.stem == stem
        dangling = [p for p in mis.checks if not any(i.startswith(p) for i in ids)]
        assert not dangling, f"{mis.id} ({stem}) applies to {dangling}, which name no check of {stem}"
        for overrides in mis.variants():
            unknown = set(overrides) - set(exercise.returns) - set(exercise.hooks)
            assert not unknown, f"{mis.id} ({stem}) replaces {unknown}, which {stem} does not grade"


def test_all_misconceptions_is_every_exercise_s_entries_once():
    import importlib

    catalogues = {e.catalogue for e in EXERCISES.values()}
    every = [m for name in catalogues for m in importlib.import_module(name).CATALOGUE]
    assert sorted(map(id, all_misconceptions())) == sorted(map(id, every))


def test_a_descriptor_refuses_names_that_point_nowhere():
    check = EXERCISES["attention"].checks[0]
    base = dict(stem="attention", title="t", order=9, returns={"softmax": "array"}, checks=[check])
    Exercise(**base, observe={"softmax": lambda *a: None}, pictures={"softmax.rows": "weights"})
    with pytest.raises(ValueError, match="observers for"):
        Exercise(**base, observe={"sofmax": lambda *a: None})
    with pytest.raises(ValueError, match="pictures for"):
        Exercise(**base, pictures={"softmax.row": "weights"})
    with pytest.raises(ValueError, match="does not belong"):
        Exercise(**(base | {"stem": "causal_mask"}))


def test_the_hand_observer_counts_a_row_off_by_the_course_s_tolerance():
    """A row within the course's hand tolerance is 'right' in the observation, as in the grade."""
    import numpy as np

    from autograder.checks.base import Context, ReferenceImplementation
    from autograder.config import DEFAULT_COURSE, load_course
    from autograder.diagnosis.observations import observe

    check = next(c for c in EXERCISES["hand_computation"].checks if c.id == "hand_computation.part_b.scores")
    expected = check.run(ReferenceImplementation("hand_computation"), {})
    answer = expected.copy()
    answer[0] += 0.01           # within a loose course's tolerance, outside the default one
    answer[1] += 0.05
    course = load_course(DEFAULT_COURSE)
    loose = dataclasses.replace(course, tolerances=dataclasses.replace(course.tolerances, hand=0.02))
    strict_seen = observe(check, {}, answer, expected, Context(course, {}))
    loose_seen = observe(check, {}, answer, expected, Context(loose, {}))
    assert strict_seen.startswith("rows 0, 1 of CSM_SCORES are off"), strict_seen
    assert loose_seen.startswith("row 1 of CSM_SCORES is off") and "row" in loose_seen.split("while")[1], loose_seen
    assert np.shape(expected)[0] > 2


@pytest.mark.parametrize("stem", list(EXERCISES))
def test_an_exercise_is_held_in_one_place(stem):
    """Its catalogue (and so its mutants and recognisers) sits beside its checks, and names their
    checks by the check objects of its exercise, never by ids spelled again as strings."""
    import ast
    import importlib
    from pathlib import Path

    exercise = EXERCISES[stem]
    checks_module = importlib.import_module(f"autograder.checks.{stem}")
    catalogue = importlib.import_module(exercise.catalogue)
    home = Path(checks_module.__file__).parent
    assert Path(catalogue.__file__).parent == home, f"{stem}'s catalogue is not beside its checks"
    tree = ast.parse(Path(catalogue.__file__).read_text(encoding="utf-8"))
    spelled = [node.value for node in ast.walk(tree) if isinstance(node, ast.Constant) and isinstance(node.value, str)
               and any(node.value.startswith(f"{s}.") for s in EXERCISES)]
    assert not spelled, f"{exercise.catalogue} spells check ids: {spelled}"


def test_reference_holds_the_references_only():
    from pathlib import Path

    import reference

    modules = sorted(p.stem for p in Path(reference.__file__).parent.glob("*.py") if p.stem != "__init__")
    assert modules == sorted(EXERCISES)
