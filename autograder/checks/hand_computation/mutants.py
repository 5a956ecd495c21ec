"""Wrong hand computations (the entries of misconceptions.py here): every
answer of the exercise, computed with one step done wrong, or typed a little off."""

from __future__ import annotations

import math

import numpy as np

from reference.attention import softmax
from reference.hand_computation import K_A, Q_A, V_A, X_CSM

# Inputs copied in another order: (part, how) -> the inputs of that part as the student used them.
# Part A: rows of Q or of K swapped, K used for Q; part B: the words of "cat sat mat" in another order.
HAND_REORDERED = (("A", lambda Q, K, V: (Q[::-1], K, V)), ("A", lambda Q, K, V: (Q, K[::-1], V)),
                  ("A", lambda Q, K, V: (K, K, V)), ("A", lambda Q, K, V: (Q, K[::-1], V[::-1])),
                  *(("B", (lambda p: lambda Q, K, V: (Q[list(p)], K[list(p)], V[list(p)]))(order))
                    for order in ((0, 2, 1), (1, 0, 2), (1, 2, 0), (2, 0, 1), (2, 1, 0))))


COURSE_INPUTS = {"Q": Q_A, "K": K_A, "V": V_A, "X": X_CSM}


def hand_values(scale="sqrt", axis=-1, reordered: int | None = None, normalised: bool = True) -> dict:
    """Every answer of the hand computation, computed with one step done wrong: the scores divided
    by sqrt(d_k) (right), 1 ("none"), d_k ("dk") or the square root of the number of rows ("rows":
    the words of Part B counted for d_k), the softmax along `axis`, the softmax's exponentials never
    divided by their row's sum (not `normalised`), or the right steps on the inputs of one part
    reordered (HAND_REORDERED[reordered]). The course's numbers by name, and under `hand_answers` the
    same mistake on a student's variant (reference.hand_computation.hand_answers)."""
    def on(inputs: dict) -> dict[str, np.ndarray]:
        return {k: np.asarray(v) for k, v in wrong_values(inputs, scale, axis, reordered, normalised).items()}
    return wrong_values(COURSE_INPUTS, scale, axis, reordered, normalised) | {"hand_answers": on}


def wrong_values(inputs: dict, scale="sqrt", axis=-1, reordered: int | None = None,
                 normalised: bool = True) -> dict[str, list]:
    """hand_values's mistake on these inputs (Q, K, V, X)."""
    part, reorder = HAND_REORDERED[reordered] if reordered is not None else ("", None)
    values = {}
    for prefix, (Q, K, V) in (("", (inputs["Q"], inputs["K"], inputs["V"])),
                              ("CSM_", (inputs["X"], inputs["X"], inputs["X"]))):
        Q, K, V = (np.asarray(a) for a in (Q, K, V))
        if reorder is not None and (part == "A") == (not prefix):
            Q, K, V = reorder(Q, K, V)
        scores = Q @ K.T
        d_k = Q.shape[-1]
        scaled = scores / {"sqrt": math.sqrt(d_k), "none": 1.0, "dk": float(d_k), "rows": math.sqrt(len(Q))}[scale]
        weights = softmax(scaled, axis=axis) if normalised else np.exp(scaled)
        values |= {f"{prefix}SCORES": scores, f"{prefix}WEIGHTS": weights, f"{prefix}OUTPUT": weights @ V}
        if not prefix:
            values["SCALED_SCORES"] = scaled
    return {k: v.tolist() for k, v in values.items()}


def hand_offset(delta: float = 0.012) -> dict[str, list]:
    """Every hand answer shifted by `delta`: the example of an answer that is close but not close enough."""
    return {k: (np.asarray(v) + delta).tolist() for k, v in wrong_values(COURSE_INPUTS).items()}


def hand_slip() -> dict[str, list]:
    """One dot product of each part wrong (q_1 . k_0, and cat . sat), carried through the later steps."""
    values = {}
    for prefix, (Q, K, V), d_k, (i, j), wrong in (("", (Q_A, K_A, V_A), 2, (1, 0), 0.0),
                                                   ("CSM_", (X_CSM, X_CSM, X_CSM), 4, (0, 1), 2.29)):
        Q, K, V = (np.asarray(a) for a in (Q, K, V))
        scores = Q @ K.T
        scores[i, j] = wrong
        if prefix:
            scores[j, i] = wrong                          # the symmetric entry, copied
        scaled = scores / math.sqrt(d_k)
        weights = softmax(scaled)
        values |= {f"{prefix}SCORES": scores, f"{prefix}WEIGHTS": weights, f"{prefix}OUTPUT": weights @ V}
        if not prefix:
            values["SCALED_SCORES"] = scaled
    return {k: v.tolist() for k, v in values.items()}
