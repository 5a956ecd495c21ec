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
# # Exercise 3 - The causal mask
#
# A language model is trained to predict the next token from the ones before it. For
# speed, training feeds it a whole sentence at once and asks for all the predictions
# in parallel: position 0 predicts token 1, position 1 predicts token 2, and so on. If
# plain self-attention were used, position 1 could simply *look* at token 2 and copy
# it - the model would learn to cheat, and at generation time, when the future does not
# exist yet, it would be lost.
#
# The **causal mask** forbids this: position $i$ may attend to positions $0, \dots, i$
# (itself and the past) and never to $i+1, \dots$ (the future). As a matrix with queries
# as rows and keys as columns, the allowed entries form the lower triangle, diagonal
# included:
#
# $$M = \begin{pmatrix} 1 & 0 & 0 & 0\\ 1 & 1 & 0 & 0\\ 1 & 1 & 1 & 0\\ 1 & 1 & 1 & 1 \end{pmatrix}$$
#
# Masking happens on the scores, **before** the softmax: a blocked score becomes $-\infty$
# (or a very negative number), its exponential is 0, and the softmax spreads all the
# weight over the allowed keys, so every row still sums to 1. Zeroing weights *after* the
# softmax would leave rows that sum to less than 1.
#
# This exercise stands alone: write the softmax inline (a few lines, remember to subtract
# the row maximum) or import it from your `attention.py` once that works - the grader
# supplies a correct `attention` module for that import, so an error there does not cost
# you points here. You may use numpy, torch, matplotlib, math and the standard library.
#
# **How this notebook works.** Replace each `TODO(...)` and its `raise NotImplementedError`
# line with your code. Cells starting with `if __name__ == "__main__":` are demos; the
# grader does not run them.

# %%
import math

import numpy as np

# %% [markdown]
# ## 1. The mask
#
# `create_causal_mask(seq_len)` returns the `(seq_len, seq_len)` matrix above: 1/True on
# and below the diagonal, 0/False above it. Entry `[i, j]` answers "may query $i$ look at
# key $j$?", which is yes exactly when $j \le i$.
#
# **Check yourself.** Row 0 has a single allowed entry (a token can always see itself);
# the last row is all allowed; the mask has $T(T+1)/2$ allowed entries. Two classic slips:
# the *upper* triangle (that lets every token see the future instead of the past) and a
# strict lower triangle that leaves out the diagonal (a token then cannot see itself, and
# row 0 has nothing to attend to at all).

# %%
def create_causal_mask(seq_len: int) -> np.ndarray:
    """The causal (look-back-only) mask for a sequence of ``seq_len`` positions.

    mask[i, j] = 1/True  if j <= i   (key j is at or before query i: allowed)
    mask[i, j] = 0/False if j >  i   (key j is in the future: blocked)

    Args:
        seq_len: number of positions T.

    Returns:
        An array of shape (T, T), lower-triangular including the diagonal.
    """
    # TODO(causal_mask.create_causal_mask): replace this comment and the raise below with your code.
    raise NotImplementedError("causal_mask.create_causal_mask: not implemented yet in causal_mask.py; work done in causal_mask.ipynb is imported only once downloaded as causal_mask.py")


# %%
if __name__ == "__main__":
    import matplotlib.pyplot as plt  # only the demos draw: graded code does not load matplotlib
    try:
        mask = create_causal_mask(6)
        print(np.asarray(mask).astype(int))
        fig, ax = plt.subplots(figsize=(3.6, 3.6))
        ax.imshow(np.asarray(mask).astype(float), cmap="Greys_r", vmin=0, vmax=1)
        ax.set_xlabel("key position j")
        ax.set_ylabel("query position i")
        ax.set_title("causal mask (white = may attend)")
        plt.show()
    except NotImplementedError as err:
        print(f"not implemented yet: {err}")

# %% [markdown]
# ## 2. Causal attention
#
# `causal_attention(Q, K, V)` is scaled dot-product attention with the causal mask:
#
# $$S = \frac{Q K^\top}{\sqrt{d}},\qquad S_{ij} \leftarrow -\infty \text{ where } j > i,
#   \qquad A = \operatorname{softmax}_{\text{row}}(S),\qquad O = A V .$$
#
# Using $-\infty$ is safe here because the diagonal is always allowed, so no row is
# blocked entirely (a fully blocked row would be $-\infty$ everywhere, and its softmax
# $0/0$). A large negative number such as $-10^9$ works as well.
#
# Shapes: `Q`, `K`, `V` are `(..., T, d)`; the output is `(..., T, d)` and the weights
# `(..., T, T)`. The `(T, T)` mask broadcasts over any leading batch dimensions.
#
# **Check yourself.**
# * Every weight above the diagonal is exactly 0, and every row sums to 1.
# * Row 0 of the weights is `[1, 0, 0, ...]`: the first token can only attend to itself,
#   so output row 0 equals `V[0]`.
# * *The future must not change the past:* change the last row of `V` (or `K`) and every
#   output row except the last must stay the same. The demo below tests exactly this.

# %%
def causal_attention(Q: np.ndarray, K: np.ndarray, V: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Scaled dot-product attention in which position i attends only to positions <= i.

    scores  = Q @ K^T / sqrt(d)                        (..., T, T)
    scores  = -inf where j > i (the causal mask)       before the softmax
    weights = softmax(scores) over the key axis         (..., T, T), zero above the diagonal
    output  = weights @ V                               (..., T, d_v)

    Args:
        Q: queries, shape (..., T, d).
        K: keys, shape (..., T, d).
        V: values, shape (..., T, d_v).

    Returns:
        (output, weights): output (..., T, d_v); weights (..., T, T), rows summing to 1
        and exactly 0 above the diagonal.
    """
    # TODO(causal_mask.causal_attention): replace this comment and the raise below with your code.
    raise NotImplementedError("causal_mask.causal_attention: not implemented yet in causal_mask.py; work done in causal_mask.ipynb is imported only once downloaded as causal_mask.py")


# %%
if __name__ == "__main__":
    import matplotlib.pyplot as plt  # only the demos draw: graded code does not load matplotlib
    rng = np.random.default_rng(3)
    T, d = 6, 4
    Q, K, V = (rng.normal(size=(T, d)) for _ in range(3))  # each (T, d)
    try:
        out, w = causal_attention(Q, K, V)
        print("output:", out.shape, " weights:", w.shape)
        print("largest weight above the diagonal:", float(np.abs(np.triu(w, k=1)).max()))
        print("row sums:", w.sum(axis=-1).round(6))
        V_changed = V.copy()
        V_changed[-1] += 10.0  # rewrite the future
        out_changed, _ = causal_attention(Q, K, V_changed)
        same_past = np.allclose(out[:-1], out_changed[:-1])
        print("past outputs unchanged when the last value changes:", bool(same_past))
        fig, ax = plt.subplots(figsize=(4.2, 3.6))
        image = ax.imshow(w, cmap="viridis", vmin=0, vmax=1)
        ax.set_xlabel("key position j")
        ax.set_ylabel("query position i")
        ax.set_title("causal attention weights")
        fig.colorbar(image, ax=ax)
        plt.show()
    except NotImplementedError as err:
        print(f"not implemented yet: {err}")
