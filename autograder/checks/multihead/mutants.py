"""Wrong implementations of multi-head attention, each one mistake away from the reference: the
heads split or merged wrong, the scale, W_o, the projections, and attention's own mistakes
(autograder/checks/attention/mutants.py) inside every head; the torch module the same way."""

from __future__ import annotations

import math
from functools import partial

import numpy as np

from autograder.checks.attention.mutants import attention
from reference.attention import MASK_FILL

# ---------------------------------------------------------------- multi-head: reshapes


def split_bare(x, num_heads):
    """split_heads as a bare reshape to (batch, heads, seq, d_head), with no transpose."""
    x = np.asarray(x)
    B, T, D = x.shape
    return x.reshape(B, num_heads, T, D // num_heads)


def split_reshapes_in_place(x, num_heads):
    """split_heads that sets its argument's shape in place (x.shape = ...) before the transpose."""
    B, T, D = x.shape
    x.shape = (B, T, num_heads, D // num_heads)
    return x.transpose(0, 2, 1, 3)


def split_interleaved(x, num_heads):
    """split_heads that deals features out in turn: head h gets features h, h + heads, h + 2 heads, ..."""
    x = np.asarray(x)
    B, T, D = x.shape
    return x.reshape(B, T, D // num_heads, num_heads).transpose(0, 3, 1, 2)


def split_right(x, num_heads):
    """The reference split: (B, T, D) -> (B, T, h, d_head) -> (B, h, T, d_head)."""
    x = np.asarray(x)
    B, T, D = x.shape
    return x.reshape(B, T, num_heads, D // num_heads).transpose(0, 2, 1, 3)


def merge_bare(x):
    """merge_heads as a bare reshape to (batch, seq, d_model), with no transpose."""
    x = np.asarray(x)
    B, h, T, d = x.shape
    return x.reshape(B, T, h * d)


def merge_right(x):
    """The reference merge: (B, h, T, d_head) -> (B, T, h, d_head) -> (B, T, D)."""
    x = np.asarray(x)
    B, h, T, d = x.shape
    return x.transpose(0, 2, 1, 3).reshape(B, T, h * d)


def merge_interleaved(x):
    """The inverse of split_interleaved: feature i * heads + h of the output comes from head h."""
    x = np.asarray(x)
    B, h, T, d = x.shape
    return x.transpose(0, 2, 3, 1).reshape(B, T, h * d)


SPLITS = {"right": split_right, "bare": split_bare, "interleaved": split_interleaved}
MERGES = {"right": merge_right, "bare": merge_bare, "interleaved": merge_interleaved}


def _heads(q, k, v, num_heads, mask, *, split="right", merge="right", scale="head", heads_shape="heads",
           **options):
    """Attention over heads of projected q, k, v (B, T, D): (merged (B, T, D), weights)."""
    D = q.shape[-1]
    d_head = D // num_heads
    divisor = {"head": math.sqrt(d_head), "model": math.sqrt(D), "none": 1.0, "dk": float(d_head)}[scale]
    if split == "none":                                   # one attention over all features
        out, w = attention(q, k, v, mask=_flat_mask(mask), scale=divisor, **options)   # (B, T, D), (B, T, T)
        if heads_shape == "heads":
            w = np.repeat(w[:, None], num_heads, axis=1)  # (B, h, T, T), every head the same
        return out, w
    qh, kh, vh = (SPLITS[split](a, num_heads) for a in (q, k, v))                     # (B, h, T, d_head)
    out, w = attention(qh, kh, vh, mask=mask, scale=divisor, **options)
    if heads_shape == "mean":
        w = w.mean(axis=1)                                # (B, T, T): torch's average_attn_weights=True
    return MERGES[merge](out), w


def _flat_mask(mask):
    """A mask broadcastable to (B, h, T, T) used for one attention over (B, T, T): drop the head axis."""
    if mask is None:
        return None
    m = np.asarray(mask)
    return m[:, 0] if m.ndim == 4 else m


def mha(X, W_q, W_k, W_v, W_o, num_heads, mask=None, *, project=True, transposed=False, **options):
    """multi_head_attention with one option switched: reshapes, scale, W_o, X @ W.T (transposed: True for
    every W, "out" for W_o alone), attention options."""
    X = np.asarray(X, dtype=np.float64)
    Ws = [np.asarray(W, dtype=np.float64) for W in (W_q, W_k, W_v, W_o)]
    if transposed:
        Ws = [W.T if transposed is True or n == 3 else W for n, W in enumerate(Ws)]
    q, k, v = (X @ W for W in Ws[:3])                                     # (B, T, D)
    merged, weights = _heads(q, k, v, int(num_heads), mask, **options)
    out = merged @ Ws[3] if project else merged
    return out.astype(merged.dtype), weights                       # a float16 computation stays float16


def mha_fn(**options):
    """multi_head_attention with `options` switched (see `mha`)."""
    return partial(mha, **options)


# ---------------------------------------------------------------- multi-head: the torch module


def module_class(linear="right", project=True, linear_out=None, **options):
    """A MultiHeadAttention whose forward has one option switched (computed in float64 numpy).

    linear: right (x W^T + b) | no_bias (x W^T) | transposed (x W + b), for every layer, or for W_q, W_k,
    W_v only when linear_out is "right" (the output layer called as it should be).

    Its forward is numpy, so the grader runs it as `numpy_forward` from the layers' parameters, like
    the reference's (reference.multihead.NUMPY_FORWARD): explaining a wrong module answer imports no
    torch. The torch class (for a test that instantiates the mutant) is made when first called.
    """
    def apply(W, b, x, how):
        if how == "no_bias":
            return x @ W.T
        return x @ (W if how == "transposed" else W.T) + b

    def forward(x, mask, num_heads, parameter):
        """(output, weights) from x (B, T, D) and `parameter(layer, "weight" | "bias")` as float64 arrays."""
        q, k, v = (apply(parameter(layer, "weight"), parameter(layer, "bias"), x, linear)
                   for layer in ("W_q", "W_k", "W_v"))                        # (B, T, D)
        merged, weights = _heads(q, k, v, num_heads, mask, **options)
        out = apply(parameter("W_o", "weight"), parameter("W_o", "bias"), merged, linear_out or linear) \
            if project else merged
        return out, weights

    def numpy_forward(d_model, num_heads, state, x, mask=None):
        x = np.asarray(x, dtype=np.float64)
        m = None if mask is None else np.asarray(mask)
        return forward(x, m, int(num_heads),
                       lambda layer, name: np.asarray(state[f"{layer}.{name}"], dtype=np.float64))

    def torch_class():
        import torch

        from reference.multihead import MultiHeadAttention

        class MutantMultiHeadAttention(MultiHeadAttention):
            """The reference module with one mistake in forward."""

            def forward(self, x, mask=None):
                x = torch.as_tensor(x).detach().double().numpy()              # (B, T, D)
                m = None if mask is None else torch.as_tensor(mask).numpy()
                out, weights = forward(x, m, self.num_heads,
                                       lambda layer, name: getattr(getattr(self, layer), name).detach().double().numpy())
                return torch.from_numpy(np.ascontiguousarray(out)), torch.from_numpy(np.ascontiguousarray(weights))

        return MutantMultiHeadAttention

    return NumpyTwinModule(torch_class, numpy_forward)


class NumpyTwinModule:
    """A mutant module class made only when called (torch imported then), with its forward in
    numpy beside it (`numpy_forward(d_model, num_heads, state, x, mask)`), which the grader uses;
    None where only torch shows the mistake (a change made to the caller's tensors)."""

    def __init__(self, make_class, numpy_forward):
        self._make_class, self.numpy_forward = make_class, numpy_forward
        self._cls = None

    def __call__(self, *args, **kwargs):
        if self._cls is None:
            self._cls = self._make_class()
        return self._cls(*args, **kwargs)


def module_flips_mask_in_place():
    """The reference module that finds the blocked scores by flipping the mask in place
    (`mask.bool().logical_not_()`): of a boolean mask, `.bool()` is the caller's tensor itself."""
    def torch_class():
        import torch

        from reference.multihead import MultiHeadAttention

        class FlipsMaskInPlace(MultiHeadAttention):
            """The reference module, its boolean mask flipped in place first."""

            def forward(self, x, mask=None):
                if mask is not None:
                    mask = ~torch.as_tensor(mask).bool().logical_not_()
                return super().forward(x, mask)

        return FlipsMaskInPlace

    return NumpyTwinModule(torch_class, None)


def module_torch_keys():
    """A MultiHeadAttention computing q @ k without the transpose in torch: torch's own error."""
    import torch

    from reference.multihead import MultiHeadAttention

    class KeysNotTransposed(MultiHeadAttention):
        """The reference module with the keys not transposed, in torch."""

        def forward(self, x, mask=None):
            x = torch.as_tensor(x, dtype=self.W_q.weight.dtype)
            q, k, v = (self._split(layer(x)) for layer in (self.W_q, self.W_k, self.W_v))   # (B, h, T, d_head)
            scores = q @ k / math.sqrt(self.d_head)
            if mask is not None:
                scores = scores.masked_fill(torch.as_tensor(mask) == 0, MASK_FILL)
            weights = torch.softmax(scores, dim=-1)
            merged = (weights @ v).transpose(1, 2).reshape(x.shape)
            return self.W_o(merged), weights

    return KeysNotTransposed
