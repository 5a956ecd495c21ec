"""What the similarity pass's children do (autograder/sandbox/helper_process.py runs them): a student's
graded files read as grading read them and fingerprinted (integrity/class_code.py,
`prints_here`), besides everything the parse helper's children do (autograder/intake/parse_helper.py),
which reading a submission needs."""

from __future__ import annotations

from autograder.intake import parse_helper
from autograder.integrity import class_code

OPS = {**parse_helper.OPS, "prints": parse_helper.charged(class_code.prints_here),
       "read_prints": parse_helper.charged(class_code.read_prints_here)}


def warm() -> None:
    """The parse helper's warm-up, and what the kit's stubs give every student, made here once
    (made.stub_given): each child, a fork of this process, finds them made."""
    from autograder.config import KIT_DATA
    from autograder.integrity.made import stub_given

    parse_helper.warm()
    for path in sorted((KIT_DATA / "exercises").glob("*.py")):
        try:
            stub_given(path.read_text(encoding="utf-8"))
        except (OSError, UnicodeDecodeError):
            continue        # a child makes it, if it is asked for
