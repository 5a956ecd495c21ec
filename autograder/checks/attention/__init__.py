"""The attention exercise (attention.py): softmax and scaled dot-product attention.

Its checks and descriptor are here; beside them, the mistakes it recognises: misconceptions.py
(the catalogue), mutants.py (the wrong implementations diagnosis runs), recognisers.py (mistakes
told by a property of the answer).
"""

from __future__ import annotations

import numpy as np

from autograder.checks.arguments import arguments_check
from autograder.checks.base import Check, compare_arrays
from autograder.checks.masks import padding_mask, random_mask as _random_mask
from autograder.judge import observations
from autograder.checks.exercise import PAIR, Exercise

_pair = compare_arrays("output", "weights")
_probs = compare_arrays("softmax", weights=("softmax",))


def _qkv(rng, batch: tuple[int, ...], n_q: int, n_k: int, d_k: int, d_v: int, dtype=np.float64):
    return {
        "Q": rng.normal(size=(*batch, n_q, d_k)).astype(dtype),   # (..., n_q, d_k)
        "K": rng.normal(size=(*batch, n_k, d_k)).astype(dtype),   # (..., n_k, d_k)
        "V": rng.normal(size=(*batch, n_k, d_v)).astype(dtype),   # (..., n_k, d_v)
    }


def _sdpa(impl, i):
    if "mask" in i:
        return impl.scaled_dot_product_attention(i["Q"], i["K"], i["V"], mask=i["mask"])
    return impl.scaled_dot_product_attention(i["Q"], i["K"], i["V"])


def _softmax_along(axis: int):
    def run(impl, i):
        return impl.softmax(i["x"], axis=axis)
    return run


SOFTMAX_ROWS = Check(
    "attention.softmax.rows", "softmax of a (4, 6) array sums to 1 along the last axis",
    inputs=lambda rng: {"x": rng.normal(scale=3.0, size=(4, 6))},
    run=lambda impl, i: impl.softmax(i["x"]), compare=_probs)
SOFTMAX_AXIS = Check(
    "attention.softmax.axis", "softmax(x, axis=0) normalises down the columns",
    inputs=lambda rng: {"x": rng.normal(scale=2.0, size=(5, 3))},
    run=_softmax_along(0), compare=compare_arrays("softmax"))
SOFTMAX_STABLE = Check(
    "attention.softmax.stable", "softmax stays finite for scores as large as 1e4",
    inputs=lambda rng: {"x": np.array([[1e4, 1e4 - 1.0, 0.0], [-1e4, 5e3, 1e4], [800.0, 799.0, -800.0]])},
    run=lambda impl, i: impl.softmax(i["x"]), compare=_probs, random=False)
# Square on purpose (n_q = n_k = d_k): Q @ K without the transpose runs here, so it can be recognised.
SDPA_SINGLE = Check(
    "attention.scaled_dot_product_attention.single", "one sequence: 4 queries, 4 keys, d_k = 4",
    inputs=lambda rng: _qkv(rng, (), 4, 4, 4, 4), run=_sdpa, compare=_pair)
SDPA_RECTANGULAR = Check(
    "attention.scaled_dot_product_attention.rectangular",
    "n_q = 3 queries against n_k = 5 keys, d_k = 4, d_v = 6",
    inputs=lambda rng: _qkv(rng, (), 3, 5, 4, 6), run=_sdpa, compare=_pair)
SDPA_BATCHED = Check(
    "attention.scaled_dot_product_attention.batched", "leading batch dimensions (2, 3, n_q, d_k)",
    inputs=lambda rng: _qkv(rng, (2, 3), 4, 5, 8, 3), run=_sdpa, compare=_pair)
SDPA_FLOAT32 = Check(
    "attention.scaled_dot_product_attention.float32", "float32 inputs (compared with rtol=1e-4)",
    inputs=lambda rng: _qkv(rng, (2,), 4, 6, 16, 5, np.float32), run=_sdpa, compare=_pair)
SDPA_BOOL_MASK = Check(
    "attention.scaled_dot_product_attention.bool_mask",
    "a boolean mask (True = may attend) of shape (n_q, n_k)",
    inputs=lambda rng: _qkv(rng, (), 4, 5, 4, 3) | {"mask": _random_mask(rng, 4, 5)},
    run=_sdpa, compare=_pair)
SDPA_BINARY_MASK = Check(
    "attention.scaled_dot_product_attention.binary_mask", "a 0/1 float mask (1 = may attend), batched",
    inputs=lambda rng: _qkv(rng, (2,), 4, 5, 4, 3) | {"mask": _random_mask(rng, 4, 5, (2,)).astype(np.float64)},
    run=_sdpa, compare=_pair,
    advice="try a mask of 0.0/1.0 floats with a batch axis, a different pattern for each batch entry")
SDPA_BROADCAST_MASK = Check(
    "attention.scaled_dot_product_attention.broadcast_mask",
    "a (n_q, n_k) mask broadcast over a batch of 3",
    inputs=lambda rng: _qkv(rng, (3,), 5, 4, 6, 2) | {"mask": _random_mask(rng, 5, 4).astype(np.int64)},
    run=_sdpa, compare=_pair,
    advice="try one (n_q, n_k) mask of 0/1 integers with batched Q, K, V: it must broadcast over the batch")
SDPA_PADDING_MASK = Check(
    "attention.scaled_dot_product_attention.padding_mask",
    "a padding mask of shape (batch, 1, 1, n_k) on inputs (batch, heads, n, d_k)",
    # d_k = 6: no leading size (3, 2) nor n_k (5) has a square root that is d_k's or its fourth root
    inputs=lambda rng: _qkv(rng, (3, 2), 5, 5, 6, 3) | {"mask": padding_mask(rng, 3, 5).astype(np.float64)},
    run=_sdpa, compare=_pair,
    advice="try a mask of shape (batch, 1, 1, n_k), 0/1 floats, on 4-D inputs: it must broadcast over "
           "heads and queries, and each batch entry has its own padding")

SOFTMAX_ARGUMENTS = arguments_check("attention", "softmax", lambda rng: {"x": rng.normal(scale=3.0, size=(3, 5))},
                                    ("x",))
SDPA_ARGUMENTS = arguments_check(
    "attention", "scaled_dot_product_attention",
    lambda rng: _qkv(rng, (), 4, 5, 4, 3) | {"X": rng.normal(size=(5, 4))}, ("Q", "K", "V"), alias=("Q", "K", "V"))


# The checks of each task, in the order they are graded (the catalogue names them by these).
SOFTMAX = (SOFTMAX_ROWS, SOFTMAX_AXIS, SOFTMAX_STABLE)
SDPA = (SDPA_SINGLE, SDPA_RECTANGULAR, SDPA_BATCHED, SDPA_FLOAT32, SDPA_BOOL_MASK, SDPA_BINARY_MASK,
        SDPA_BROADCAST_MASK, SDPA_PADDING_MASK)
# Graded last, and named by their own catalogue entry only: what a function does to its arguments.
ARGUMENTS = (SOFTMAX_ARGUMENTS, SDPA_ARGUMENTS)
CHECKS = [*SOFTMAX, *SDPA, *ARGUMENTS]


EXERCISE = Exercise(
    stem="attention", title="Softmax and scaled dot-product attention", order=2,
    returns={"softmax": "array", "scaled_dot_product_attention": PAIR},
    provided=(),
    checks=CHECKS,
    observe={"softmax": observations.probabilities("softmax"),
             "scaled_dot_product_attention": observations.attention()},
    pictures={"scaled_dot_product_attention": "weights"},
    catalogue=f"{__name__}.misconceptions",
)
