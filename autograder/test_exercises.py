"""Grades every exercise of the submission: one test per check of course.yml, for every
exercise the kit describes (autograder/checks/exercise.py), so a new exercise needs no test module."""

import pytest

from autograder.checks import CHECKS
from autograder.frontends.pytest_plugin import assert_check


@pytest.mark.parametrize("check_id", [pytest.param(c.id, id=c.id, marks=(pytest.mark.check(c.id),
                                                                          pytest.mark.exercise(stem)))
                                      for stem, checks in CHECKS.items() for c in checks])
def test_check(check_id, graded):
    assert_check(graded, check_id)
