# ---
# jupyter:
#   jupytext:
#     text_representation:
#       extension: .py
#       format_name: percent
#       format_version: '1.3'
#   kernelspec:
#     display_name: Python 3
#     language: python
#     name: python3
# ---
# This file is yours: fill in every TODO.

# %% [markdown]
# # Exercise 1 - Attention by hand
#
# Before any code, compute one attention step with pencil and paper. Doing the
# arithmetic once makes every later shape and axis obvious.
#
# **The idea in one paragraph.** Every position of a sequence sends out three vectors.
# Its *query* asks a question ("what am I looking for?"), its *key* advertises what it
# offers ("this is what I am about"), and its *value* is the content it hands over.
# A query compares itself with every key by a dot product, the comparisons are turned
# into weights that are positive and sum to 1, and the position receives the weighted
# average of the values:
#
# $$\text{scores} = Q K^\top,\qquad
#   \text{scaled} = \frac{\text{scores}}{\sqrt{d_k}},\qquad
#   \text{weights} = \operatorname{softmax}_{\text{row}}(\text{scaled}),\qquad
#   \text{output} = \text{weights}\; V .$$
#
# Row $i$ of every matrix belongs to query $i$; column $j$ of the score and weight
# matrices belongs to key $j$. The row-wise softmax is
# $\operatorname{softmax}(s)_j = e^{s_j} / \sum_m e^{s_m}$.
#
# **What you hand in.** Type each matrix below as nested lists of floats, one inner list
# per row, with at least 2 decimals (3 or 4 are safer). An entry is accepted when it is
# within 0.006 of the exact value, so round only at the end - carry 4 or 5 decimals
# through the steps.
#
# **How this notebook works.** Replace every `None` marked `TODO(...)` with your numbers.
# Cells that start with `if __name__ == "__main__":` are self-checks: they run here,
# but the grader imports your file without running them.

# %%
import math

# %% [markdown]
# ## Part A - a two-token warm-up ($d_k = 2$)
#
# $$Q = \begin{pmatrix}1 & 0\\ 0 & 1\end{pmatrix},\quad
#   K = \begin{pmatrix}1 & 1\\ 1 & 0\end{pmatrix},\quad
#   V = \begin{pmatrix}2 & 1\\ 1 & 2\end{pmatrix}$$
#
# 1. `SCORES` $= Q K^\top$. Entry $(i, j)$ is the dot product of *row* $i$ of $Q$ with
#    *row* $j$ of $K$ (that is what the transpose does).
# 2. `SCALED_SCORES` $=$ `SCORES` $/ \sqrt{2}$.
# 3. `WEIGHTS`: the softmax of each row of `SCALED_SCORES`. Each row must sum to 1.
# 4. `OUTPUT` $=$ `WEIGHTS` $V$: row $i$ is a blend of the two rows of $V$.
#
# Two things to notice while you work: a row whose scaled scores are equal gives equal
# weights, and an output row always lies "between" the value rows, because it is an
# average of them.

# %%
Q = [[1.0, 0.0], [0.0, 1.0]]
K = [[1.0, 1.0], [1.0, 0.0]]
V = [[2.0, 1.0], [1.0, 2.0]]
D_K = 2

SCORES = None  # TODO(hand_computation.part_a): the 2x2 matrix Q @ K^T, as nested lists
SCALED_SCORES = None  # TODO(hand_computation.part_a): the 2x2 matrix SCORES / sqrt(d_k), as nested lists
WEIGHTS = None  # TODO(hand_computation.part_a): the 2x2 row-wise softmax of SCALED_SCORES, as nested lists
OUTPUT = None  # TODO(hand_computation.part_a): the 2x2 matrix WEIGHTS @ V, as nested lists

# %% [markdown]
# ## Part B - "cat sat mat" ($d_k = 4$)
#
# Three tokens with 4-dimensional embeddings, one row each. To keep the arithmetic
# about attention itself, the projections are the identity, $W_Q = W_K = W_V = I$, so
# $Q = K = V = X$:
#
# | token | embedding |
# |---|---|
# | cat | 1.0, 0.5, 0.2, 0.8 |
# | sat | 0.3, 0.9, 0.1, 0.4 |
# | mat | 0.6, 0.2, 0.7, 0.3 |
#
# 1. `CSM_SCORES` $= X X^\top$ (3x3). It is symmetric here, because queries and keys are
#    the same vectors - so you only need 6 dot products, not 9.
# 2. `CSM_WEIGHTS`: row-wise softmax of `CSM_SCORES` $/ \sqrt{4}$ (3x3).
# 3. `CSM_OUTPUT` $=$ `CSM_WEIGHTS` $X$ (3x4).
#
# This example circulates widely on the web, and not every copy has its arithmetic
# right. Compute every dot product yourself rather than trusting a number you have
# seen somewhere.

# %%
X = [
    [1.0, 0.5, 0.2, 0.8],  # cat
    [0.3, 0.9, 0.1, 0.4],  # sat
    [0.6, 0.2, 0.7, 0.3],  # mat
]
CSM_D_K = 4

CSM_SCORES = None  # TODO(hand_computation.part_b): the 3x3 matrix X @ X^T, as nested lists
CSM_WEIGHTS = None  # TODO(hand_computation.part_b): the 3x3 row-wise softmax of CSM_SCORES / sqrt(4), as nested lists
CSM_OUTPUT = None  # TODO(hand_computation.part_b): the 3x4 matrix CSM_WEIGHTS @ X, as nested lists

# %% [markdown]
# ## Check yourself
#
# The cell below tests that your answers are *consistent with each other*: the right
# shapes, rows of weights that sum to 1, each step following from your previous one.
# It cannot tell you whether your first step (the dot products) is right - recompute
# a couple of those a second time, in a different order.
#
# Typical slips: multiplying $Q$ by $K$ instead of by $K^\top$ (rows of $Q$ against
# *columns* of $K$), dividing by $d_k$ instead of $\sqrt{d_k}$, normalising columns
# instead of rows, and rounding to 2 decimals early so that the error piles up.

# %%
if __name__ == "__main__":

    def _matmul(a, b):
        return [[sum(x * y for x, y in zip(row, col)) for col in zip(*b)] for row in a]

    def _softmax_rows(m):
        out = []
        for row in m:
            top = max(row)
            e = [math.exp(v - top) for v in row]
            out.append([v / sum(e) for v in e])
        return out

    def _close(a, b, tol=0.006):
        return all(abs(x - y) <= tol for ra, rb in zip(a, b) for x, y in zip(ra, rb))

    def _shape_ok(name, m, rows, cols):
        if m is None:
            print(f"  {name}: not filled in yet")
            return False
        ok = len(m) == rows and all(len(r) == cols for r in m)
        print(f"  {name}: shape {'ok' if ok else f'wrong, expected {rows}x{cols}'}")
        return ok

    def _report(label, ok):
        print(f"  {label}: {'yes' if ok else 'NO - look again'}")

    print("Part A")
    a = [_shape_ok(n, m, 2, 2) for n, m in
         [("SCORES", SCORES), ("SCALED_SCORES", SCALED_SCORES), ("WEIGHTS", WEIGHTS), ("OUTPUT", OUTPUT)]]
    if a[0] and a[1]:
        _report("SCALED_SCORES = SCORES / sqrt(d_k)",
                _close(SCALED_SCORES, [[v / math.sqrt(D_K) for v in r] for r in SCORES]))
    if a[2]:
        _report("every row of WEIGHTS sums to 1", all(abs(sum(r) - 1) <= 0.01 for r in WEIGHTS))
    if a[1] and a[2]:
        _report("WEIGHTS = row softmax of SCALED_SCORES", _close(WEIGHTS, _softmax_rows(SCALED_SCORES)))
    if a[2] and a[3]:
        _report("OUTPUT = WEIGHTS @ V", _close(OUTPUT, _matmul(WEIGHTS, V)))

    print("Part B")
    b = [_shape_ok(n, m, r, c) for n, m, r, c in
         [("CSM_SCORES", CSM_SCORES, 3, 3), ("CSM_WEIGHTS", CSM_WEIGHTS, 3, 3), ("CSM_OUTPUT", CSM_OUTPUT, 3, 4)]]
    if b[0]:
        _report("CSM_SCORES is symmetric",
                all(abs(CSM_SCORES[i][j] - CSM_SCORES[j][i]) <= 1e-9 for i in range(3) for j in range(3)))
    if b[1]:
        _report("every row of CSM_WEIGHTS sums to 1", all(abs(sum(r) - 1) <= 0.01 for r in CSM_WEIGHTS))
    if b[0] and b[1]:
        scaled = [[v / math.sqrt(CSM_D_K) for v in r] for r in CSM_SCORES]
        _report("CSM_WEIGHTS = row softmax of CSM_SCORES / sqrt(4)", _close(CSM_WEIGHTS, _softmax_rows(scaled)))
    if b[1] and b[2]:
        _report("CSM_OUTPUT = CSM_WEIGHTS @ X", _close(CSM_OUTPUT, _matmul(CSM_WEIGHTS, X)))
