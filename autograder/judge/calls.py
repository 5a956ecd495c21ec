"""What a check's status is when one of its calls of your code gave no answer: the grader's rule,
and the handout's check.py's.

A graded name your file does not define, or an answer that is not what the check can read, fails
the check; a function that raised or did not return is an error; one that raises
NotImplementedError, or a stub (forms.is_stub) that returns None, is "not implemented yet".
An answer the comparison cannot take apart fails the check with a sentence, never stops a run.

Kit-free (the standard library only): the grader (autograder/grading/submission.py,
student_implementation.py) and the handout's check.py decide with this one module.
"""

from __future__ import annotations

from typing import Collection

# a call's outcome (the sandbox's statuses, and check.py's child's) -> the check's status
_CHECK_STATUS = {"not_implemented": "not_implemented", "bad_return": "failed", "missing": "failed"}

# what the comparison of a returned value raises when its structure is not the expected one
COMPARISON_ERRORS = (TypeError, ValueError, KeyError, IndexError)


def check_status(call_status: str) -> str:
    """The check's status after a call that gave no answer (its outcome: missing, bad_return,
    not_implemented, raised, timeout, ...)."""
    return _CHECK_STATUS.get(call_status, "error")


def stub_returned_none(name: str, returned_type: str, stubs: Collection[str]) -> str | None:
    """The "not implemented yet" sentence for a call that returned None from a stub (`stubs`:
    forms.stub_names of the file), else None: a function with work that returns None fails."""
    if returned_type == "NoneType" and name in stubs:
        return f"not implemented yet: {name} does nothing yet (its body is only pass, ..., a docstring or return None)"
    return None


def missing(filename: str, name: str, skipped_cell: int | None = None) -> str:
    """Why a check of a name the file does not define fails (`skipped_cell`: a notebook's cell that
    defines it, skipped because it raised)."""
    return f"{filename} defines no {name}" + (
        f": cell {skipped_cell}, which defines it, was skipped (see the note)" if skipped_cell is not None else "")


def not_comparable(err: BaseException) -> str:
    """Why an answer whose structure the comparison could not take apart fails."""
    return f"the returned value could not be compared: {type(err).__name__}: {err}"
