"""Intake: which files of a student's upload are graded, and their source read without running it (archives, LMS downloads, rosters, notebooks' cells as Jupyter runs them)."""

# The forms an exercise file takes, <stem>.py or <stem>.ipynb (docs/contract.md): the judge's.
from autograder.judge.forms import SUFFIXES as SOURCE_SUFFIXES  # noqa: F401
