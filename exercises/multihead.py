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
# # Exercise 5 - Multi-head attention
#
# One attention gives each query a single distribution over the keys. But a token
# usually has several reasons to look elsewhere at once: the verb that governs it, the
# word just before it, the noun a pronoun stands for. A single softmax has to squeeze all
# of these relations into one set of weights, and they blur.
#
# **Several heads** run several attentions side by side. Each head projects the tokens
# into its own smaller subspace of $d_\text{head} = d_\text{model} / h$ features, with its
# own queries and keys, so each can specialise in a different relation. The heads'
# outputs are concatenated back to $d_\text{model}$ features and mixed by one more
# projection $W_O$. Since $h \cdot d_\text{head} = d_\text{model}$, this costs about as
# much as one full-width head.
#
# The shapes, which are most of the work (B = batch, T = sequence length, h = heads):
#
# ```
# X                   (B, T, d_model)
# X @ W_q, W_k, W_v   (B, T, d_model)        three projections
# split_heads         (B, h, T, d_head)      each head gets its own slice of features
# scores, weights     (B, h, T, T)           one attention per head, scaled by sqrt(d_head)
# weights @ V         (B, h, T, d_head)
# merge_heads         (B, T, d_model)        heads side by side again
# ... @ W_o           (B, T, d_model)
# ```
#
# This exercise stands alone: write the attention arithmetic inline, or import
# `softmax` / `scaled_dot_product_attention` from your `attention.py` - the grader
# supplies a correct `attention` module for that import. You may use numpy, torch,
# matplotlib, math and the standard library. Replace each `TODO(...)` and its
# `raise NotImplementedError` line; cells starting with `if __name__ == "__main__":` are
# demos that the grader does not run.

# %%
import math

import numpy as np
import torch
from torch import nn

# %% [markdown]
# ## 1. Splitting and merging heads
#
# `split_heads(x, num_heads)` turns `(B, T, d_model)` into `(B, h, T, d_head)`, where head
# $h$ holds features $h \cdot d_\text{head}, \dots, (h+1) \cdot d_\text{head} - 1$ of every
# position. It takes two steps: first cut the last axis into `(h, d_head)`, giving
# `(B, T, h, d_head)`; then move the head axis in front of the sequence axis.
#
# The trap: a single reshape straight to `(B, h, T, d_head)` also yields the right shape,
# but reshaping never moves data - it only re-reads the same memory in order. The
# "head 0" you get then holds the first `T * d_head` numbers of the sequence, which
# are whole positions' features jumbled together, not feature slice 0 of every position.
#
# `merge_heads(x)` is the inverse: `(B, h, T, d_head)` back to `(B, T, h * d_head)`. Move
# the head axis back behind the sequence axis first, then join the last two axes. The
# same trap applies in reverse.
#
# **Check yourself.** With `x[b, t, f] = 100 * t + f`, `d_model = 8` and 2 heads,
# `split_heads(x, 2)[0, 1]` must be rows `[4, 5, 6, 7]`, `[104, 105, 106, 107]`, ... - head 1
# holds features 4..7 of every position. `merge_heads(split_heads(x, h))` gives back `x`
# exactly, for every `h` that divides `d_model`.

# %%
def split_heads(x: np.ndarray, num_heads: int) -> np.ndarray:
    """Split the feature axis into heads.

    (B, T, d_model) -> reshape -> (B, T, h, d_head) -> swap axes 1 and 2 -> (B, h, T, d_head),
    with d_head = d_model // h; head k holds features k*d_head ... (k+1)*d_head - 1.

    Args:
        x: array of shape (batch, seq, d_model); d_model divisible by num_heads.
        num_heads: number of heads h.

    Returns:
        Array of shape (batch, num_heads, seq, d_model // num_heads).
    """
    # TODO(multihead.split_heads): replace this comment and the raise below with your code.
    raise NotImplementedError("multihead.split_heads: not implemented yet in multihead.py; work done in multihead.ipynb is imported only once downloaded as multihead.py")


def merge_heads(x: np.ndarray) -> np.ndarray:
    """Undo ``split_heads``: put the heads side by side again.

    (B, h, T, d_head) -> swap axes 1 and 2 -> (B, T, h, d_head) -> reshape -> (B, T, h * d_head).

    Args:
        x: array of shape (batch, num_heads, seq, d_head).

    Returns:
        Array of shape (batch, seq, num_heads * d_head).
    """
    # TODO(multihead.merge_heads): replace this comment and the raise below with your code.
    raise NotImplementedError("multihead.merge_heads: not implemented yet in multihead.py; work done in multihead.ipynb is imported only once downloaded as multihead.py")


# %%
if __name__ == "__main__":
    B, T, d_model = 1, 3, 8
    x = (100 * np.arange(T)[:, None] + np.arange(d_model)[None, :])[None].astype(float)  # (1, T, d_model)
    try:
        heads = split_heads(x, 2)
        print("split:", heads.shape, "\nhead 1 of batch 0:\n", heads[0, 1])
        print("round trip exact:", bool(np.array_equal(merge_heads(heads), x)))
    except NotImplementedError as err:
        print(f"not implemented yet: {err}")

# %% [markdown]
# ## 2. Multi-head attention in numpy
#
# `multi_head_attention(X, W_q, W_k, W_v, W_o, num_heads, mask=None)`, every `W` of shape
# `(d_model, d_model)` and applied on the right (`X @ W`, no bias):
#
# 1. project: $Q = X W_q$, $K = X W_k$, $V = X W_v$, each `(B, T, d_model)`;
# 2. split each into heads: `(B, h, T, d_head)`;
# 3. per head, scaled dot-product attention, scaled by $\sqrt{d_\text{head}}$ - the length of
#    the vectors that are actually multiplied, **not** $\sqrt{d_\text{model}}$; with the
#    optional mask (1 = may attend) applied to the scores before the softmax. The mask
#    broadcasts to `(B, h, T, T)`: a `(T, T)` causal mask applies to every batch and head;
# 4. merge the heads: `(B, T, d_model)`;
# 5. mix them: output $= \text{merged}\; W_o$.
#
# Return `(output, weights)`, with the weights of every head: `(B, h, T, T)`.
#
# **Check yourself.** The weights have shape `(B, h, T, T)` and every row sums to 1. With
# `num_heads=1` the result is plain single-head attention of the projections. Mistakes
# that the grader recognises: no split at all (one attention over all features),
# scaling by $\sqrt{d_\text{model}}$, forgetting $W_o$, and the bare-reshape trap above.

# %%
def multi_head_attention(
    X: np.ndarray,
    W_q: np.ndarray,
    W_k: np.ndarray,
    W_v: np.ndarray,
    W_o: np.ndarray,
    num_heads: int,
    mask: np.ndarray | None = None,
) -> tuple[np.ndarray, np.ndarray]:
    """Multi-head self-attention with projection matrices applied as X @ W.

    Q, K, V = X W_q, X W_k, X W_v                     (B, T, d_model) each
    split into heads                                  (B, h, T, d_head), d_head = d_model // h
    weights = softmax(Q_h K_h^T / sqrt(d_head))       (B, h, T, T), masked entries -> -1e9 first
    heads   = weights @ V_h                           (B, h, T, d_head)
    output  = merge(heads) @ W_o                      (B, T, d_model)

    Args:
        X: input, shape (batch, seq, d_model).
        W_q, W_k, W_v, W_o: projections, each (d_model, d_model).
        num_heads: number of heads h; must divide d_model.
        mask: None, or broadcastable to (batch, num_heads, seq, seq); 1/True = may attend.

    Returns:
        (output, weights): output (batch, seq, d_model), weights (batch, num_heads, seq, seq).
    """
    # TODO(multihead.multi_head_attention): replace this comment and the raise below with your code.
    raise NotImplementedError("multihead.multi_head_attention: not implemented yet in multihead.py; work done in multihead.ipynb is imported only once downloaded as multihead.py")


# %%
if __name__ == "__main__":
    rng = np.random.default_rng(0)
    B, T, d_model, h = 2, 5, 8, 2
    X = rng.normal(size=(B, T, d_model))
    W_q, W_k, W_v, W_o = (rng.normal(size=(d_model, d_model)) / math.sqrt(d_model) for _ in range(4))
    causal = np.tril(np.ones((T, T), dtype=bool))  # (T, T), broadcasts over batch and heads
    try:
        out, w = multi_head_attention(X, W_q, W_k, W_v, W_o, h, mask=causal)
        print("output:", out.shape, " weights:", w.shape)
        print("rows sum to 1:", bool(np.allclose(w.sum(axis=-1), 1.0)))
        print("nothing above the diagonal:", bool(np.allclose(np.triu(w, k=1), 0.0)))
    except NotImplementedError as err:
        print(f"not implemented yet: {err}")

# %% [markdown]
# ## 3. The same as a PyTorch module
#
# `MultiHeadAttention(d_model, num_heads)` is the trainable version. It owns four
# projections, `self.W_q`, `self.W_k`, `self.W_v`, `self.W_o`, each
# `nn.Linear(d_model, d_model)` **with** bias - these exact attribute names, and no other
# parameters, because the grader loads weights into them by name. `forward(x, mask=None)`
# takes `x` of shape `(B, T, d_model)` and returns `(output, weights)` of shapes
# `(B, T, d_model)` and `(B, h, T, T)`, following the same five steps in torch:
#
# * `nn.Linear` computes `x @ weight.T + bias`, so `self.W_q(x)` is the projection;
# * split and merge heads with `view`/`reshape` plus `transpose` (the same trap applies;
#   after a `transpose`, `reshape` works where `view` may complain);
# * `mask` is 1/True where attention is allowed, as everywhere in this kit, and broadcasts
#   to `(B, h, T, T)`; convert it with `torch.as_tensor` if someone passes a numpy array.
#
# `super().__init__()` is already written at the top of `__init__`: it must run before
# you assign any layer to `self`. Your code goes below it.
#
# **Check yourself.** With the same weights, your module must agree with PyTorch's own
# `torch.nn.MultiheadAttention(d_model, num_heads, batch_first=True)` called with
# `average_attn_weights=False`. The demo below copies your weights into one and compares.
# Note that PyTorch's boolean `attn_mask` means the opposite of ours: True = *blocked*.

# %%
class MultiHeadAttention(nn.Module):
    """Multi-head self-attention with learned projections W_q, W_k, W_v, W_o.

    Attributes:
        W_q, W_k, W_v, W_o: nn.Linear(d_model, d_model), with bias.

    forward(x, mask=None):
        q, k, v = W_q(x), W_k(x), W_v(x)            (B, T, d_model)
        split into heads                            (B, h, T, d_head)
        weights = softmax(q k^T / sqrt(d_head))     (B, h, T, T), blocked scores -> -1e9 first
        heads   = weights @ v                       (B, h, T, d_head)
        output  = W_o(merge(heads))                 (B, T, d_model)
        returns (output, weights)
    """

    def __init__(self, d_model: int, num_heads: int) -> None:
        super().__init__()
        # TODO(multihead.MultiHeadAttention): __init__ - replace this comment and the raise below with your code.
        raise NotImplementedError("multihead.MultiHeadAttention: not implemented yet in multihead.py; work done in multihead.ipynb is imported only once downloaded as multihead.py")

    def forward(self, x: torch.Tensor, mask: torch.Tensor | None = None) -> tuple[torch.Tensor, torch.Tensor]:
        """x: (B, T, d_model); mask: None or broadcastable to (B, h, T, T), 1/True = may attend.

        Returns (output (B, T, d_model), weights (B, h, T, T)).
        """
        # TODO(multihead.MultiHeadAttention): forward - replace this comment and the raise below with your code.
        raise NotImplementedError("multihead.MultiHeadAttention: not implemented yet in multihead.py; work done in multihead.ipynb is imported only once downloaded as multihead.py")


# %%
if __name__ == "__main__":
    import matplotlib.pyplot as plt  # only the demos draw: graded code does not load matplotlib
    torch.manual_seed(0)
    B, T, d_model, h = 2, 5, 8, 2
    x = 3 * torch.randn(B, T, d_model)  # larger inputs than usual, so the untrained heads are less uniform
    causal = torch.tril(torch.ones(T, T, dtype=torch.bool))  # (T, T), True = may attend
    try:
        mine = MultiHeadAttention(d_model, h)
        out, w = mine(x, mask=causal)
        print("output:", tuple(out.shape), " weights:", tuple(w.shape))

        theirs = nn.MultiheadAttention(d_model, h, batch_first=True)
        with torch.no_grad():
            theirs.in_proj_weight.copy_(torch.cat([mine.W_q.weight, mine.W_k.weight, mine.W_v.weight]))
            theirs.in_proj_bias.copy_(torch.cat([mine.W_q.bias, mine.W_k.bias, mine.W_v.bias]))
            theirs.out_proj.weight.copy_(mine.W_o.weight)
            theirs.out_proj.bias.copy_(mine.W_o.bias)
        ref_out, ref_w = theirs(x, x, x, attn_mask=~causal, average_attn_weights=False)  # torch: True = blocked
        print("output matches torch:", torch.allclose(out, ref_out, rtol=1e-4, atol=1e-5))
        print("weights match torch:", torch.allclose(w, ref_w, rtol=1e-4, atol=1e-5))

        fig, axes = plt.subplots(1, h, figsize=(4 * h, 3.6), constrained_layout=True)
        for head, ax in enumerate(np.atleast_1d(axes)):
            image = ax.imshow(w[0, head].detach().numpy(), cmap="viridis", vmin=0, vmax=1)
            ax.set_xlabel("key position")
            ax.set_title(f"head {head}")
        np.atleast_1d(axes)[0].set_ylabel("query position")
        fig.suptitle("each head weighs the past differently (causal mask, untrained weights)")
        fig.colorbar(image, ax=axes, shrink=0.8)
        plt.show()
    except NotImplementedError as err:
        print(f"not implemented yet: {err}")
