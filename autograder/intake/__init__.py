"""Intake: which files of a student's upload are graded, and their source read without running it (archives, LMS downloads, rosters, notebooks' cells as Jupyter runs them)."""

# The forms an exercise file takes, <stem>.py or <stem>.ipynb (docs/contract.md). Kept here, in the
# package's own module, so that the command line reads it cheaply.
SOURCE_SUFFIXES = (".py", ".ipynb")
