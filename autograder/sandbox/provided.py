"""Grader side: answering a child's call of a provided function (`from attention import softmax`
in `causal_mask.py`) with the grader's own implementation, bounded like the child's own code.

What a student asks the grader to compute is untrusted like the student's code: a call is
priced from its arguments' shapes before anything is allocated (`Provided.cost`), and one that
would make an array larger than `MAX_ELEMENTS` or do more than `MAX_WORK` multiply-adds is
refused: the child loses the call it was in (`ProvidedRefused`), nothing is computed. The time
the grader spends answering counts against the call's limits and the submission's budget
(exchange.py). `session_provided` checks what a session is given to provide.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Callable

import numpy as np

from autograder.sandbox.inside import protocol
from autograder.sandbox.inside.protocol import ProtocolError, TensorArg

MAX_INPUT_ELEMENTS = 1 << 22   # a provided call's inputs, all arrays together
MAX_ELEMENTS = 1 << 20         # the largest array one call may make, intermediates included (8 MB of float64)
MAX_WORK = 1 << 27             # multiply-adds of one call (a fraction of a second)


@dataclass(frozen=True)
class Cost:
    """What one call of a provided function would allocate and compute, known before it runs."""
    largest: int                 # elements of its largest array (result or intermediate)
    work: int                    # multiply-adds (or elementwise operations)
    what: str                    # that largest array, in words: "scores of shape (40000, 40000)"


@dataclass(frozen=True)
class Provided:
    """A function the grader computes for a child, with the price of a call. `cost` takes the
    call's arguments; it raises TypeError or ValueError for arguments the function refuses
    anyway (the student gets that error, as from the function itself)."""
    function: Callable
    cost: Callable[..., Cost]

    def __call__(self, *args, **kwargs):
        return self.function(*args, **kwargs)


class ProvidedRefused(Exception):
    """A child asked for more than the grader computes for it, or did not read its answers: it
    loses the call it was in (docs/security.md)."""


def answer_provided(header: dict, blobs: list, provided: dict[str, dict[str, Callable]]) -> bytes:
    """The grader's answer to a child's call of a provided function: its own implementation,
    applied to the child's (validated, numeric) arrays. Tensors in, tensors out. Raises
    ProvidedRefused for a call above the bounds."""
    stem, name = header.get("stem"), header.get("name")
    fn = provided.get(stem, {}).get(name) if isinstance(stem, str) and isinstance(name, str) else None
    if not callable(fn):
        return protocol.pack({"status": "raised", "type": "RuntimeError", "message": f"{stem}.{name} is not provided"})
    tensors: list[str] = []

    def as_array(array, dtype):
        tensors.append(dtype)
        return array

    try:
        args = protocol.decode(header.get("args", []), blobs, as_array)
        kwargs = protocol.decode(header.get("kwargs", {}), blobs, as_array)
        if not isinstance(args, list) or not isinstance(kwargs, dict):
            raise ProtocolError("malformed arguments")
        _check_inputs(list(args) + list(kwargs.values()))
        if isinstance(fn, Provided):
            _check_cost(f"{stem}.{name}", fn.cost(*args, **kwargs))
        value = fn(*args, **kwargs)
        if tensors:
            value = _as_tensors(value, tensors[0])
        return protocol.message({"status": "ok"}, {"value": value})
    except ProvidedRefused:
        raise
    except Exception as err:  # noqa: BLE001 - the student's arguments made the reference raise: tell them
        return protocol.pack({"status": "raised", "type": type(err).__name__, "message": str(err)[:500]})


def _check_inputs(values: list) -> None:
    arrays = [np.asarray(v) for v in values if isinstance(v, (np.ndarray, list, tuple))]
    total = sum(a.size for a in arrays if a.dtype != object)
    if total > MAX_INPUT_ELEMENTS:
        raise ValueError(f"the arguments hold {total} numbers; the kit-provided functions take at most "
                         f"{MAX_INPUT_ELEMENTS} here")


def _check_cost(function: str, cost: Cost) -> None:
    if cost.largest > MAX_ELEMENTS:
        raise ProvidedRefused(f"it asked the kit-provided {function} for {cost.what} ({cost.largest:.3g} numbers; "
                              f"the grader computes at most {MAX_ELEMENTS} per array)")
    if cost.work > MAX_WORK:
        raise ProvidedRefused(f"it asked the kit-provided {function} for {cost.work:.3g} multiply-adds ({cost.what}; "
                              f"the grader does at most {MAX_WORK:.3g} per call)")


def _as_tensors(value: Any, dtype: str) -> Any:
    if isinstance(value, np.ndarray) and value.dtype.kind in "biuf":
        return TensorArg(value, dtype if value.dtype.kind == "f" else None)
    if isinstance(value, tuple):
        return tuple(_as_tensors(v, dtype) for v in value)
    if isinstance(value, list):
        return [_as_tensors(v, dtype) for v in value]
    return value


def session_provided(provided: dict) -> dict[str, dict[str, Any]]:
    """A session's provided stems as given to `Sandbox.session`: stem -> {name: grader-side
    callable or plain value}, checked and copied (source text is never accepted)."""
    out = {}
    for stem, names in provided.items():
        if not isinstance(names, dict):
            raise TypeError(f"provided[{stem!r}] must map names to grader-side callables or values, "
                            f"not {type(names).__name__} (source text is never sent to a child)")
        out[str(stem)] = dict(names)
    return out
