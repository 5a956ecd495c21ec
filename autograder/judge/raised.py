"""Which known mistakes explain an error the student's code raised: the grader's rule and check.py's.

A mistake explains a raised error when it recognises the error's own words (`if mask:` on an array,
`K.T` on a batch: the recognisers below, by the names the check data gives them), or else when
one of its mutants, given the same inputs, raised the same error in the same kind of operation:
the same exception type and message, or, when exactly one mistake fits that way, the same message
with its numbers masked ("(size # is different from #)"). The grader runs the mutants
(autograder/diagnosis/explain.py); check.py reads what they raised on the visible inputs from its
check data. Both decide with `explaining`. The standard library only.

An error is anything with `type`, `text` and `operation` (the line that raised, "" unknown).
"""

from __future__ import annotations

import re
from typing import Callable, Iterable, Sequence, TypeVar

from .hints import ALL_AXES_REVERSED_WRITTEN

Entry = TypeVar("Entry")

# ---------------------------------------------------------------- errors recognised by their text

SHAPE_ERRORS = ("mismatch in its core dimension", "must match the size of tensor", "could not be broadcast",
                "cannot be multiplied", "Expected size for first two dimensions", "shapes cannot be",
                "not aligned")                                       # np.dot's words


def truth_value_of_array(error) -> bool:
    """`if mask:` on an array or tensor of more than one element (numpy's and torch's words)."""
    return error.type in ("ValueError", "RuntimeError") and (
        "truth value of an array with more than one element is ambiguous" in error.text
        or "Boolean value of Tensor with more than one value is ambiguous" in error.text)


# `.T`, `.transpose()` and `np.transpose(K)` with no axes reverse every axis of a batch
REVERSES_ALL_AXES = re.compile(ALL_AXES_REVERSED_WRITTEN)


def transpose_all_axes(error) -> bool:
    """A shape error raised on a line that reverses every axis of an array (`.T`, `.transpose()`)."""
    return bool(REVERSES_ALL_AXES.search(error.operation)) and any(words in error.text for words in SHAPE_ERRORS)


# axes counted from the front: .transpose(1, 2), swapaxes(K, 1, 2), .transpose(0, 2, 1), .permute(0, 2, 1)
FRONT_AXES = re.compile(r"(\.transpose|\.permute|swapaxes|\.swapdims|\.movedim)\((\s*[A-Za-z_][\w.]*\s*,)?\s*\d+\s*,\s*\d+\s*"
                        r"(,\s*\d+\s*)?\)")
AXIS_ERRORS = SHAPE_ERRORS + ("Dimension out of range", "axes don't match array", "out of bounds for array")


def transpose_fixed_axes(error) -> bool:
    """A shape or axis error raised on a line that swaps axes counted from the front (1 and 2),
    the last two only for a 3-D array."""
    return bool(FRONT_AXES.search(error.operation)) and any(words in error.text for words in AXIS_ERRORS)


def boolean_index_error(error) -> bool:
    """Indexing the scores with a boolean mask of another shape (numpy's and torch's words)."""
    return error.type == "IndexError" and ("boolean index did not match indexed array" in error.text
                                           or ("The shape of the mask" in error.text
                                               and "does not match the shape of the indexed tensor" in error.text))


def invert_error(error) -> bool:
    """`~` on a float mask (numpy's and torch's words)."""
    return error.type == "TypeError" and ("ufunc 'invert' not supported" in error.text
                                          or "(operator.invert) is only implemented on integer and Boolean" in error.text)


def low_precision_error(error) -> bool:
    """An operation refused to mix a 16-bit float with another dtype."""
    return any(word in error.text for word in ("Half", "float16", "BFloat16", "bfloat16"))


# What numpy, torch and Python say when asked to stack, average or index no trial at all
EMPTY_WORDS = ("division by zero", "need at least one array", "zero-size array", "empty sequence", "with size 0",
               "mean of empty", "of 0 elements", "non-empty list of Tensors", "empty tensor")


def no_trial_error(error) -> bool:
    """An error about nothing to work on (a division by zero, an empty stack, mean or index), as when
    the scaling experiment's number of trials, one short, is 0 for n_trials=1."""
    return error.type == "ZeroDivisionError" or any(words in error.text for words in EMPTY_WORDS)


def read_only_write(error) -> bool:
    """A write into a read-only array (numpy's words): an argument changed in place, handed read-only."""
    return error.type == "ValueError" and ("is read-only" in error.text or "not writeable" in error.text)


# The names the check data gives them by.
RECOGNISERS = {f.__name__: f for f in (truth_value_of_array, transpose_all_axes, transpose_fixed_axes,
                                        boolean_index_error, invert_error, low_precision_error, no_trial_error,
                                        read_only_write)}


# ---------------------------------------------------------------- the same error as a mutant's

# A product of arrays (a matrix product, einsum, dot) versus any other operation: torch words a
# broadcasting failure of `q @ k` and of `e / e.sum(-1)` the same, so the words alone do not say
# which operation failed; the line that raised does.
_PRODUCT = re.compile(r"@|\b(matmul|bmm|einsum|dot|tensordot|inner|mm)\b")
PRODUCT, OTHER = "product", "other"


def operation_kind(line: str) -> str:
    """PRODUCT or OTHER for the line that raised; "" when it is not known."""
    return "" if not line else (PRODUCT if _PRODUCT.search(line) else OTHER)


def same_operation(student: str, mutant: str) -> bool:
    """Whether two kinds of operation (`operation_kind`) are the same (unknown on either side: yes)."""
    return not student or not mutant or student == mutant


def masked(text: str) -> str:
    """A message with its numbers masked: "(size 5 is different from 4)" -> "(size # is different from #)"."""
    return re.sub(r"\d+", "#", " ".join(text.split()))


def explaining(error, entries: Sequence[Entry], recognises: Callable[[Entry, object], bool],
               raised_by: Callable[[Entry, bool], Iterable[tuple[str, str, str]] | None]) -> list[Entry]:
    """The entries that explain `error`, in their order: those that recognise its words
    (`recognises(entry, error)`) if any does, else those one of whose mutants raised the very same
    error, else the one (only if one) whose mutant's error is the same with its numbers masked.
    `raised_by(entry, torch)`: what the entry's mutants raised on the check's inputs, each as (type,
    message, `operation_kind`), the torch-written ones too when `torch` (torch says a failed product
    or broadcast with a RuntimeError: another error is explained without them); None for an entry
    told by its answer, which no raised error explains."""
    by_text = [entry for entry in entries if _safe(recognises, entry, error)]
    if by_text:     # the error's own words (or the line that raised) say which: the most specific evidence
        return by_text
    torch = error.type == "RuntimeError"
    kind, words = operation_kind(error.operation), " ".join(error.text.split())
    exact, shaped = [], []
    for entry in entries:
        same_type = [text for raised_type, text, their_kind in (raised_by(entry, torch) or ())
                     if raised_type == error.type and same_operation(kind, their_kind)]
        if any(" ".join(text.split()) == words for text in same_type):
            exact.append(entry)
        elif any(masked(text) == masked(error.text) for text in same_type):
            shaped.append(entry)
    return exact or (shaped if len(shaped) == 1 else [])


def _safe(recognises, entry, error) -> bool:
    try:
        return bool(recognises(entry, error))
    except Exception:  # noqa: BLE001 - a recogniser that cannot read this error does not recognise it
        return False
