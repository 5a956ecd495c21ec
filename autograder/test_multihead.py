"""Grades multihead.py (or .ipynb): one test per check of course.yml."""

import pytest

from autograder.pytest_plugin import assert_check, check_params

pytestmark = pytest.mark.exercise("multihead")


@pytest.mark.parametrize("check_id", check_params("multihead"))
def test_check(check_id, graded):
    assert_check(graded, check_id)
