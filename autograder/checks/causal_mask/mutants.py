"""Wrong implementations of the causal mask exercise, each one mistake away from the reference:
the mask's triangle of another kind, and causal attention built on attention's mutants."""

from __future__ import annotations

from functools import partial

import numpy as np

from autograder.checks.attention.mutants import attention


def tri_mask(seq_len: int, kind: str = "lower") -> np.ndarray:
    """A triangular boolean mask: lower (right), upper (the future), strict_lower (no diagonal), strict_upper,
    next (off by one: the diagonal above the main one allowed too)."""
    ones = np.ones((int(seq_len), int(seq_len)), dtype=bool)
    return {"lower": np.tril(ones), "upper": np.triu(ones), "strict_lower": np.tril(ones, -1),
            "strict_upper": np.triu(ones, 1), "next": np.tril(ones, 1)}[kind]


def additive_causal_mask(seq_len: int) -> np.ndarray:
    """The causal mask in additive form: 0 where a query may attend, -inf above the diagonal."""
    return np.where(tri_mask(seq_len), 0.0, -np.inf)


def causal(Q, K, V, *, kind="lower", **options):
    """causal_attention with the mask of `kind` and `options` switched (see `attention`)."""
    Q = np.asarray(Q)
    return attention(Q, K, V, mask=tri_mask(Q.shape[-2], kind), **options)


def causal_fn(**options):
    """causal_attention with `options` switched (see `causal`)."""
    return partial(causal, **options)


def mask_fn(kind: str):
    """create_causal_mask that builds the triangle of `kind` (see `tri_mask`)."""
    return partial(tri_mask, kind=kind)
