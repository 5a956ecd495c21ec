"""Grades causal_mask.py (or .ipynb): one test per check of course.yml."""

import pytest

from autograder.pytest_plugin import assert_check, check_params

pytestmark = pytest.mark.exercise("causal_mask")


@pytest.mark.parametrize("check_id", check_params("causal_mask"))
def test_check(check_id, graded):
    assert_check(graded, check_id)
