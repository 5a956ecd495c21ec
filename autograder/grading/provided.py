"""The reference's functions as a submission may call them (`from attention import softmax` in
`causal_mask.py`), each priced from its arguments' shapes before it runs.

The sandbox answers such calls in the grader's process (autograder/sandbox/provided.py) and
refuses one whose largest array or work is above its bounds, so a price must count every array
the reference makes on the way (the scores of attention, not only its output). Sizes must be
real integers: a float, a bool or a 0-d array is refused with "expected an int" before anything
is allocated. A provided function without a price here is priced by the old rule of thumb
(inputs, and integer arguments up to `MAX_INT`); give a new exercise's functions their own.
"""

from __future__ import annotations

import importlib
import inspect
import math
from functools import lru_cache
from typing import Any, Callable

import numpy as np

from autograder.checks.contract import PROVIDED, RETURNS
from autograder.sandbox.provided import Cost, Provided

MAX_INT = 4096          # the rule of thumb's largest integer argument (a size n may make n x n)


def provided_for(stem: str) -> dict[str, dict[str, Provided]]:
    """The stems a submission file may import, as the reference's own functions with their
    prices: the sandbox answers the child's calls of them, so no reference code reaches a child."""
    return {other: {name: Provided(fn, _priced(other, name, fn)) for name, fn in _functions(other).items()}
            for other in PROVIDED[stem]}


@lru_cache(maxsize=None)
def _functions(stem: str) -> dict[str, Callable]:
    module = importlib.import_module(f"reference.{stem}")
    return {name: getattr(module, name) for name in RETURNS[stem]
            if callable(getattr(module, name, None)) and not isinstance(getattr(module, name), type)}


def _priced(stem: str, name: str, fn: Callable) -> Callable[..., Cost]:
    price = PRICES.get((stem, name), _rule_of_thumb)
    signature = inspect.signature(fn)

    def cost(*args, **kwargs) -> Cost:
        bound = signature.bind(*args, **kwargs)    # TypeError for arguments the function does not take
        bound.apply_defaults()
        return price(**bound.arguments)

    return cost


# ---------------------------------------------------------------------- prices

def _shape(value: Any, name: str) -> tuple[int, ...]:
    shape = np.shape(value)
    if len(shape) < 2:
        raise ValueError(f"{name} must have at least 2 dimensions (..., n, d), got shape {shape}")
    return shape


def _batch(*shapes: tuple[int, ...]) -> tuple[int, ...]:
    try:
        return np.broadcast_shapes(*shapes)
    except ValueError:
        raise ValueError(f"the batch dimensions {', '.join(map(str, shapes))} do not broadcast") from None


def _attention(Q, K, V, mask=None) -> Cost:
    """Q K^T (scores, then as many arrays of that shape for scaling, masking and softmax), then
    weights V, whose batch dimensions V may broadcast further."""
    q, k, v = _shape(Q, "Q"), _shape(K, "K"), _shape(V, "V")
    n_q, d_k, n_k, d_v = q[-2], q[-1], k[-2], v[-1]
    scores_batch = _batch(q[:-2], k[:-2])
    out_batch = _batch(scores_batch, v[:-2])
    scores = math.prod(scores_batch) * n_q * n_k
    output = math.prod(out_batch) * n_q * d_v
    work = scores * d_k + math.prod(out_batch) * n_q * n_k * d_v
    if scores >= output:
        return Cost(scores, work, f"scores of shape {(*scores_batch, n_q, n_k)}")
    return Cost(output, work, f"an output of shape {(*out_batch, n_q, d_v)}")


def _size(value: Any, name: str) -> int:
    """A size argument as an int: numpy integers pass, floats, bools and arrays do not."""
    if isinstance(value, (bool, np.bool_)) or not isinstance(value, (int, np.integer)):
        what = f"a {np.ndim(value)}-d array" if isinstance(value, np.ndarray) else type(value).__name__
        raise TypeError(f"{name} expected an int, got {what} ({str(value)[:40]}); pass int({name})")
    return int(value)


def _causal_mask(seq_len) -> Cost:
    n = max(_size(seq_len, "seq_len"), 0)
    return Cost(n * n, n * n, f"a mask of shape ({n}, {n})")


def _causal_attention(Q, K, V) -> Cost:
    n = _shape(Q, "Q")[-2]
    return max(_attention(Q, K, V), _causal_mask(n), key=lambda c: (c.largest, c.work))


def _softmax(x, axis=-1) -> Cost:
    n = int(np.size(x))
    return Cost(n, n, f"an array of shape {np.shape(x)}")


def _rule_of_thumb(**arguments) -> Cost:
    values = list(arguments.values())
    big = [v for v in values if isinstance(v, int) and not isinstance(v, bool) and abs(v) > MAX_INT]
    if big:
        return Cost(big[0] * big[0], big[0] * big[0], f"a size of {big[0]} (at most {MAX_INT} here)")
    n = sum(int(np.size(v)) for v in values if isinstance(v, (np.ndarray, list, tuple)))
    return Cost(n, n, f"{n} numbers")


PRICES: dict[tuple[str, str], Callable[..., Cost]] = {
    ("attention", "softmax"): _softmax,
    ("attention", "scaled_dot_product_attention"): _attention,
    ("causal_mask", "create_causal_mask"): _causal_mask,
    ("causal_mask", "causal_attention"): _causal_attention,
}
