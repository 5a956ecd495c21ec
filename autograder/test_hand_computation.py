"""Grades hand_computation.py (or .ipynb): one test per check of course.yml."""

import pytest

from autograder.pytest_plugin import assert_check, check_params

pytestmark = pytest.mark.exercise("hand_computation")


@pytest.mark.parametrize("check_id", check_params("hand_computation"))
def test_check(check_id, graded):
    assert_check(graded, check_id)
