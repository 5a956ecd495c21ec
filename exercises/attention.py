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
# # Exercise 2 - Softmax and scaled dot-product attention
#
# Self-attention lets each position of a sequence rebuild itself out of the others.
# Every position plays three parts at once:
#
# * its **query** $q$ asks: *what am I looking for?*
# * its **key** $k$ advertises: *this is what I can offer*;
# * its **value** $v$ carries the content that is handed over to whoever is interested.
#
# How well a query matches a key is their dot product $q \cdot k$: large when the two
# point the same way, negative when they disagree. A softmax turns one query's row of
# matches into weights that are positive and add up to 1, and the query receives the
# weighted average of the values:
#
# $$\operatorname{Attention}(Q, K, V) = \operatorname{softmax}\!\left(\frac{Q K^\top}{\sqrt{d_k}}\right) V .$$
#
# Here you write the two building blocks, `softmax` and `scaled_dot_product_attention`.
# Why we divide by $\sqrt{d_k}$ is the subject of the scaling exercise; for now, just do it.
#
# **How this notebook works.** In every function, replace the `TODO(...)` comment and the
# `raise NotImplementedError(...)` line with your code. Cells that start with
# `if __name__ == "__main__":` are demos and self-checks: they run here, but the grader
# imports your file without running them, so everything graded must live in the
# functions. You may use numpy, torch, matplotlib, math and the standard library.

# %%
import math

import numpy as np

# %% [markdown]
# ## 1. A softmax that does not overflow
#
# For a vector $x$, $\operatorname{softmax}(x)_i = e^{x_i} / \sum_j e^{x_j}$.
#
# Taken literally this breaks on large inputs: `np.exp(1000.0)` is `inf`, and
# `inf / inf` is `nan`. The cure rests on one observation: adding the same constant $c$
# to every entry changes nothing, since $e^{x_i - c} / \sum_j e^{x_j - c}$ is the same
# fraction with $e^{-c}$ cancelled above and below the line. Take $c = \max_j x_j$. Then
# the largest exponential is exactly $e^0 = 1$: nothing can overflow, and the sum is at
# least 1, so nothing is divided by zero.
#
# `softmax(x, axis)` works on an array of any shape and normalises along one axis, the
# last by default. For attention scores of shape `(..., n_q, n_k)` the last axis is the
# axis of the keys: each query's weights over the keys sum to 1.
#
# **Check yourself.**
# * The result has exactly the shape of `x`; every slice along `axis` sums to 1.
# * `softmax(np.array([1e4, 0.0]))` is finite - practically `[1, 0]`.
# * Take the maximum *along `axis`*, keeping that axis (as length 1) so that it lines up
#   with `x` when you subtract. Dropping the axis can broadcast the maxima across the wrong
#   dimension - and on a square matrix that is silently wrong instead of an error.
# * One maximum of the whole array is not enough: a row far below it underflows to all zeros.
# * Keep the dtype of a floating-point input (float32 in, float32 out).

# %%
def softmax(x: np.ndarray, axis: int = -1) -> np.ndarray:
    """Numerically stable softmax of ``x`` along ``axis``.

    softmax(x)_i = exp(x_i - m) / sum_j exp(x_j - m),  with m = max_j x_j along ``axis``;
    subtracting m leaves the result unchanged and keeps every exp() at most 1.

    Args:
        x: array of any shape (floats).
        axis: the axis to normalise over; -1, the last axis, by default.

    Returns:
        An array of the same shape as ``x`` whose slices along ``axis`` are positive
        and sum to 1. Finite for inputs as large as 1e4.
    """
    # TODO(attention.softmax): replace this comment and the raise below with your code.
    raise NotImplementedError("attention.softmax: not implemented yet in attention.py; work done in attention.ipynb is imported only once downloaded as attention.py")


# %%
if __name__ == "__main__":
    try:
        x = np.array([[1.0, 2.0, 3.0],
                      [1000.0, 1000.0, 1000.0],
                      [1e4, 0.0, -1e4]])
        p = softmax(x)
        print("softmax of each row:\n", p.round(4))
        print("row sums:", p.sum(axis=-1))
        print("all finite:", bool(np.isfinite(p).all()))
        print("columns instead (axis=0) sum to:", softmax(x, axis=0).sum(axis=0))
    except NotImplementedError as err:
        print(f"not implemented yet: {err}")

# %% [markdown]
# ## 2. Scaled dot-product attention
#
# Take $n_q$ queries and $n_k$ keys of dimension $d_k$, and $n_k$ values of dimension $d_v$
# (one value per key):
#
# 1. **Scores.** $S = Q K^\top / \sqrt{d_k}$, shape $(n_q, n_k)$. $S_{ij}$ says how well
#    query $i$ matches key $j$.
# 2. **Mask (optional).** `mask` is 1/True where query $i$ *may* look at key $j$ and
#    0/False where it may not. Replace a blocked score by a very negative number (such as
#    $-10^9$) *before* the softmax: its weight comes out as 0 and the weights that remain
#    still sum to 1. Masks hide padding (the filler tokens that make sentences of
#    different lengths fit in one batch) and, in the next exercise, the future.
# 3. **Weights.** $A = \operatorname{softmax}(S)$ over the key axis, shape $(n_q, n_k)$.
# 4. **Output.** $O = A V$, shape $(n_q, d_v)$: row $i$ mixes the value rows in the
#    proportions of row $i$ of $A$.
#
# Nothing requires $n_q = n_k$ (a decoder's queries may attend to an encoder's keys) or
# $d_v = d_k$.
#
# **Leading dimensions.** The same function must accept `Q` of shape `(n_q, d_k)`,
# `(B, n_q, d_k)` or `(B, h, n_q, d_k)`. Make every step act on the last two axes only:
# the matrix product `@` multiplies the last two axes and broadcasts all the others, so
# transposing `K` must swap just its last two axes (`.T` reverses *all* of them). The mask
# broadcasts too: a mask of shape `(1, n_k)` hides the same keys from every query.

# %%
def scaled_dot_product_attention(
    Q: np.ndarray,
    K: np.ndarray,
    V: np.ndarray,
    mask: np.ndarray | None = None,
) -> tuple[np.ndarray, np.ndarray]:
    """Scaled dot-product attention: softmax(Q K^T / sqrt(d_k)) V.

    scores  = Q @ K^T / sqrt(d_k)                       (..., n_q, n_k)
    scores  = where(mask, scores, -1e9)  if mask given  (blocked entries before softmax)
    weights = softmax(scores) over the key axis          (..., n_q, n_k), rows sum to 1
    output  = weights @ V                                (..., n_q, d_v)

    Args:
        Q: queries, shape (..., n_q, d_k).
        K: keys, shape (..., n_k, d_k).
        V: values, shape (..., n_k, d_v).
        mask: None, or an array broadcastable to (..., n_q, n_k) holding 1/True where a
            query may attend to a key and 0/False where it is blocked.

    Returns:
        (output, weights) with output of shape (..., n_q, d_v) and weights of shape
        (..., n_q, n_k). Leading batch dimensions are optional and arbitrary.
    """
    # TODO(attention.scaled_dot_product_attention): replace this comment and the raise below with your code.
    raise NotImplementedError("attention.scaled_dot_product_attention: not implemented yet in attention.py; work done in attention.ipynb is imported only once downloaded as attention.py")


# %% [markdown]
# **Check yourself.**
# * Shapes: with `Q (2, 5, 8)`, `K (2, 7, 8)` and `V (2, 7, 3)` you get output `(2, 5, 3)`
#   and weights `(2, 5, 7)`.
# * Every row of `weights` sums to 1, with or without a mask, and a blocked entry has
#   weight 0 (up to about $10^{-300}$).
# * Common mistakes: `Q @ K` instead of `Q @ K^T` (it only runs when the shapes happen to
#   be square); dividing by $d_k$ instead of $\sqrt{d_k}$; normalising over the query axis
#   so that columns sum to 1; zeroing weights *after* the softmax, so rows no longer sum
#   to 1; reading the mask backwards (1 means *allowed*).
#
# The demo below gives six made-up tokens random 8-dimensional vectors and lets each
# attend to all of them with $Q = K = V$. A vector's score with itself, $q \cdot q = |q|^2$,
# is always positive and usually larger than its score with an unrelated vector, so the
# diagonal tends to light up. On the right, the last two tokens are padding: the mask
# hides them as keys, so no query attends to them.

# %%
if __name__ == "__main__":
    import matplotlib.pyplot as plt  # only the demos draw: graded code does not load matplotlib
    tokens = ["the", "cat", "sat", "down", "<pad>", "<pad>"]
    rng = np.random.default_rng(7)
    X = rng.normal(size=(len(tokens), 8))  # (T, d)
    padding = np.array([[1, 1, 1, 1, 0, 0]])  # (1, T): one row, broadcast to every query
    try:
        out, w = scaled_dot_product_attention(X, X, X)
        out_masked, w_masked = scaled_dot_product_attention(X, X, X, mask=padding)
        print("output:", out.shape, " weights:", w.shape)
        print("row sums:", w.sum(axis=-1).round(6))
        print("weight on padding keys, masked:", float(w_masked[:, 4:].max()))
        fig, axes = plt.subplots(1, 2, figsize=(10, 4.2), constrained_layout=True)
        for ax, weights, title in [(axes[0], w, "no mask"), (axes[1], w_masked, "padding masked")]:
            image = ax.imshow(weights, cmap="viridis", vmin=0, vmax=1)
            ax.set_xticks(range(len(tokens)), tokens, rotation=45)
            ax.set_yticks(range(len(tokens)), tokens)
            ax.set_xlabel("key (attended to)")
            ax.set_title(f"attention weights, {title}")
        axes[0].set_ylabel("query (attending)")
        fig.colorbar(image, ax=axes, shrink=0.8)
        plt.show()
    except NotImplementedError as err:
        print(f"not implemented yet: {err}")
