"""Answer keys for the hand computation (the reference for ``hand_computation.py``).

Only the inputs are typed in; every answer is computed with the reference
attention, so a slip of arithmetic cannot creep into the keys.
"""

from __future__ import annotations

import math

import numpy as np

from .attention import scaled_dot_product_attention

# Part A (d_k = 2)
Q_A = [[1.0, 0.0], [0.0, 1.0]]
K_A = [[1.0, 1.0], [1.0, 0.0]]
V_A = [[2.0, 1.0], [1.0, 2.0]]
D_K_A = 2

# Part B: "cat sat mat", W_Q = W_K = W_V = identity, so Q = K = V = X
X_CSM = [
    [1.0, 0.5, 0.2, 0.8],   # cat
    [0.3, 0.9, 0.1, 0.4],   # sat
    [0.6, 0.2, 0.7, 0.3],   # mat
]
D_K_CSM = 4


def _steps(Q, K, V, d_k: int) -> dict[str, np.ndarray]:
    """The four steps of attention by hand.

        scores = Q K^T,  scaled = scores / sqrt(d_k),  weights = softmax(scaled),  output = weights V
    """
    Q, K, V = (np.asarray(a, dtype=np.float64) for a in (Q, K, V))
    scores = Q @ K.T                                                     # (n_q, d_k) @ (d_k, n_k) -> (n_q, n_k)
    output, weights = scaled_dot_product_attention(Q, K, V)              # (n_q, d_v), (n_q, n_k)
    return {"scores": scores, "scaled_scores": scores / math.sqrt(d_k), "weights": weights, "output": output}


def answer_keys() -> dict[str, np.ndarray]:
    """Every answer of the hand computation by its contract name, as float64 arrays."""
    return keys_for(Q_A, K_A, V_A, X_CSM)


def hand_answers(inputs: dict) -> dict[str, np.ndarray]:
    """The answers for other numbers of the same shapes (a student's variant): `inputs` holds
    Q, K, V (Part A) and X (Part B)."""
    return keys_for(inputs["Q"], inputs["K"], inputs["V"], inputs["X"])


def keys_for(Q, K, V, X) -> dict[str, np.ndarray]:
    """Every answer of the hand computation for these inputs (d_k is their width)."""
    a = _steps(Q, K, V, np.shape(Q)[-1])
    b = _steps(X, X, X, np.shape(X)[-1])
    return {
        "SCORES": a["scores"],
        "SCALED_SCORES": a["scaled_scores"],
        "WEIGHTS": a["weights"],
        "OUTPUT": a["output"],
        "CSM_SCORES": b["scores"],
        "CSM_WEIGHTS": b["weights"],
        "CSM_OUTPUT": b["output"],
    }


_KEYS = {name: value.tolist() for name, value in answer_keys().items()}
SCORES = _KEYS["SCORES"]                 # (2, 2)
SCALED_SCORES = _KEYS["SCALED_SCORES"]   # (2, 2)
WEIGHTS = _KEYS["WEIGHTS"]               # (2, 2)
OUTPUT = _KEYS["OUTPUT"]                 # (2, 2)
CSM_SCORES = _KEYS["CSM_SCORES"]         # (3, 3)
CSM_WEIGHTS = _KEYS["CSM_WEIGHTS"]       # (3, 3)
CSM_OUTPUT = _KEYS["CSM_OUTPUT"]         # (3, 4)
