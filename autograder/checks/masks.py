"""Masks for the checks: random patterns, padding and per-batch masks, never all causal.

A check that only ever passes causal masks cannot tell "applies the mask" from "applies a
causal mask whatever it is given"; one that only passes 2-D masks cannot tell "handles the
broadcast shapes" from "applies the mask when it is 2-D". Every mask here leaves each query
at least one key (a fully blocked row is defined differently by -inf and -1e9 fills) and
blocks at least one key somewhere.
"""

from __future__ import annotations

import numpy as np


def random_mask(rng, n_q: int, n_k: int, batch: tuple[int, ...] = ()) -> np.ndarray:
    """Each query may attend to a random subset of the keys: never none of them, never all."""
    mask = rng.random((*batch, n_q, n_k)) < 0.6                    # (..., n_q, n_k)
    allowed = rng.integers(0, n_k, size=(*batch, n_q, 1))
    np.put_along_axis(mask, allowed, True, axis=-1)
    np.put_along_axis(mask, (allowed + 1) % n_k, False, axis=-1)
    return mask


def padding_mask(rng, batch: int, n_k: int) -> np.ndarray:
    """(batch, 1, 1, n_k): sequence b has a random length >= 1; the keys past it are padding.

    At least one sequence is padded, and two sequences differ, so a mask applied to the
    wrong batch entry or ignored shows.
    """
    lengths = rng.integers(1, n_k, size=batch)                     # every sequence padded by >= 1
    lengths[0] = n_k - 1
    if batch > 1:
        lengths[1] = max(1, n_k // 2)
    keep = np.arange(n_k)[None, :] < lengths[:, None]              # (batch, n_k)
    return keep[:, None, None, :]                                   # (batch, 1, 1, n_k)
