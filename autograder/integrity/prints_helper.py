"""What the similarity pass's children do (autograder/sandbox/helper_process.py runs them): a student's
graded files read as grading read them and fingerprinted (integrity/class_code.py,
`prints_here`), besides everything the parse helper's children do (autograder/intake/parse_helper.py),
which reading a submission needs."""

from __future__ import annotations

from autograder.intake import parse_helper
from autograder.integrity import class_code

OPS = {**parse_helper.OPS, "prints": parse_helper.charged(class_code.prints_here)}


def warm() -> None:
    parse_helper.warm()
