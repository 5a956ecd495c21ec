"""What a mutant of the reference raises on a check's inputs: the error a misconception makes,
compared with the one a student's code raised. Used in the grader (explain) and in the torch
helper's own process (torch_raised_server), so both describe an error the same way."""

from __future__ import annotations

import linecache
import warnings

import numpy as np

from autograder.checks.base import Check, ReferenceImplementation


def raised_at(check: Check, overrides: dict, inputs: dict) -> tuple[str, str, str] | None:
    """(type, message, the source line that raised) for a mutant on these inputs, or None."""
    make = check.expected_run or check.run
    try:
        with warnings.catch_warnings(), np.errstate(all="ignore"):
            warnings.simplefilter("ignore")
            make(ReferenceImplementation(check.exercise, overrides), inputs)
    except Exception as err:
        tb, line = err.__traceback__, ""
        while tb is not None:          # the innermost frame with source: the mutant's own line
            text = linecache.getline(tb.tb_frame.f_code.co_filename, tb.tb_lineno).strip()
            line = text or line
            tb = tb.tb_next
        return type(err).__name__, str(err), line
    return None
