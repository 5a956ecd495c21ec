"""Loads the grader plugin for `pytest autograder --submission DIR`."""

from autograder.frontends.pytest_plugin import (  # noqa: F401  (pytest finds hooks and fixtures by name)
    graded,
    pytest_addoption,
    pytest_configure,
    pytest_terminal_summary,
    pytest_unconfigure,
)
