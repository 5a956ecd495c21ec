"""Multi-head attention: head reshapes, a numpy version and a torch module
(the reference for ``multihead.py``).

torch is imported when ``MultiHeadAttention`` is first looked up, not with this module: the
grader computes the module's answers with ``module_forward`` (numpy, float64), so grading a
right answer never waits for the torch import (tests hold the two to each other).
"""

from __future__ import annotations

import math

import numpy as np

from .attention import MASK_FILL, scaled_dot_product_attention, softmax


def _check_heads(d_model: int, num_heads: int) -> int:
    """d_head = d_model // num_heads, after checking that it divides exactly."""
    if isinstance(num_heads, bool) or int(num_heads) != num_heads or num_heads < 1:
        raise ValueError(f"num_heads must be a positive integer, got {num_heads!r}")
    if d_model % num_heads != 0:
        raise ValueError(f"d_model={d_model} is not divisible by num_heads={num_heads}")
    return d_model // int(num_heads)


def split_heads(x, num_heads: int) -> np.ndarray:
    """(batch, seq, d_model) -> (batch, num_heads, seq, d_head), d_head = d_model / num_heads.

        out[b, h, t, i] = x[b, t, h * d_head + i]

    i.e. head h holds features h*d_head ... (h+1)*d_head - 1 of every position.
    A reshape alone is not enough: the head axis must be moved before seq.
    """
    x = np.asarray(x)
    if x.ndim != 3:
        raise ValueError(f"split_heads expects (batch, seq, d_model), got shape {x.shape}")
    B, T, D = x.shape
    d_head = _check_heads(D, num_heads)
    x = x.reshape(B, T, int(num_heads), d_head)      # (B, T, h, d_head)
    return x.transpose(0, 2, 1, 3)                  # (B, h, T, d_head)


def merge_heads(x) -> np.ndarray:
    """(batch, num_heads, seq, d_head) -> (batch, seq, num_heads * d_head); inverse of split_heads.

        out[b, t, h * d_head + i] = x[b, h, t, i]
    """
    x = np.asarray(x)
    if x.ndim != 4:
        raise ValueError(f"merge_heads expects (batch, num_heads, seq, d_head), got shape {x.shape}")
    B, h, T, d_head = x.shape
    x = x.transpose(0, 2, 1, 3)                     # (B, T, h, d_head)
    return x.reshape(B, T, h * d_head)              # (B, T, d_model)


def multi_head_attention(X, W_q, W_k, W_v, W_o, num_heads: int, mask=None):
    """Multi-head self-attention in numpy (no biases).

        Q = X W_q,  K = X W_k,  V = X W_v                         (B, T, d_model)
        head_h = softmax(Q_h K_h^T / sqrt(d_head) [masked]) V_h    d_head = d_model / num_heads
        output = concat_h(head_h) W_o                             (B, T, d_model)

    ``mask`` (1 = may attend) must broadcast to (B, num_heads, T, T).
    Returns ``(output, weights)`` with weights of shape (B, num_heads, T, T).
    """
    X = np.asarray(X)
    if X.ndim != 3:
        raise ValueError(f"X must be (batch, seq, d_model), got shape {X.shape}")
    D = X.shape[-1]
    _check_heads(D, num_heads)
    for name, W in (("W_q", W_q), ("W_k", W_k), ("W_v", W_v), ("W_o", W_o)):
        if np.shape(W) != (D, D):
            raise ValueError(f"{name} must have shape (d_model, d_model) = {(D, D)}, got {np.shape(W)}")
    Q = split_heads(X @ np.asarray(W_q), num_heads)     # (B, T, D) @ (D, D) -> (B, h, T, d_head)
    K = split_heads(X @ np.asarray(W_k), num_heads)     # (B, h, T, d_head)
    V = split_heads(X @ np.asarray(W_v), num_heads)     # (B, h, T, d_head)
    heads, weights = scaled_dot_product_attention(Q, K, V, mask=mask)  # (B, h, T, d_head), (B, h, T, T)
    output = merge_heads(heads) @ np.asarray(W_o)      # (B, T, D) @ (D, D) -> (B, T, D)
    return output, weights


def module_forward(d_model: int, num_heads: int, state: dict, x, mask=None):
    """What ``MultiHeadAttention(d_model, num_heads)`` holding the parameters ``state``
    ({"W_q.weight": (D, D), "W_q.bias": (D,), ... "W_o.bias"}) returns for ``x``: the same
    steps in float64 numpy. Returns ``(output, weights)``, (B, T, D) and (B, h, T, T)."""
    d_head = _check_heads(int(d_model), num_heads)
    x = np.asarray(x, dtype=np.float64)
    if x.ndim != 3 or x.shape[-1] != d_model:
        raise ValueError(f"x must be (batch, seq, {d_model}), got shape {x.shape}")

    def linear(layer, t):                                                # t @ W^T + b, like torch.nn.Linear
        return t @ np.asarray(state[f"{layer}.weight"], dtype=np.float64).T \
            + np.asarray(state[f"{layer}.bias"], dtype=np.float64)

    q, k, v = (split_heads(linear(layer, x), num_heads) for layer in ("W_q", "W_k", "W_v"))   # (B, h, T, d_head)
    scores = q @ np.swapaxes(k, -1, -2) / math.sqrt(d_head)             # (B, h, T, d_head) @ (B, h, d_head, T) -> (B, h, T, T)
    if mask is not None:
        allowed = np.asarray(mask) != 0
        try:
            allowed = np.broadcast_to(allowed, scores.shape)             # (B, h, T, T)
        except ValueError:
            raise ValueError(f"mask of shape {allowed.shape} does not broadcast to {scores.shape}") from None
        scores = np.where(allowed, scores, MASK_FILL)                    # (B, h, T, T)
    weights = softmax(scores, axis=-1)                                   # (B, h, T, T)
    merged = merge_heads(weights @ v)                                    # (B, h, T, d_head) -> (B, T, d_model)
    return linear("W_o", merged), weights                               # (B, T, d_model), (B, h, T, T)


# The module answers computed without torch, by class name (autograder/checks/base.py uses them).
NUMPY_FORWARD = {"MultiHeadAttention": module_forward}


def __getattr__(name: str):
    """``MultiHeadAttention`` is made, and torch imported, when first looked up."""
    if name == "MultiHeadAttention":
        cls = globals()["MultiHeadAttention"] = _module_class()
        return cls
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


def _module_class():
    import torch

    class MultiHeadAttention(torch.nn.Module):
        """Multi-head self-attention as a torch module (linear layers with bias).

            Q = x W_q^T + b_q  (and likewise K, V)        torch.nn.Linear(d_model, d_model)
            weights = softmax(Q_h K_h^T / sqrt(d_head) [masked with -1e9])
            output  = W_o(concat_h(weights V_h))

        Agrees with ``torch.nn.MultiheadAttention(batch_first=True)`` given the same
        weights (in_proj_weight = [W_q; W_k; W_v], out_proj = W_o) and
        ``average_attn_weights=False``.
        """

        def __init__(self, d_model: int, num_heads: int):
            super().__init__()
            if isinstance(d_model, bool) or int(d_model) != d_model or d_model < 1:
                raise ValueError(f"d_model must be a positive integer, got {d_model!r}")
            self.d_head = _check_heads(int(d_model), num_heads)
            self.d_model = int(d_model)
            self.num_heads = int(num_heads)
            self.W_q = torch.nn.Linear(self.d_model, self.d_model)
            self.W_k = torch.nn.Linear(self.d_model, self.d_model)
            self.W_v = torch.nn.Linear(self.d_model, self.d_model)
            self.W_o = torch.nn.Linear(self.d_model, self.d_model)

        def _split(self, t: torch.Tensor) -> torch.Tensor:
            B, T, _ = t.shape
            return t.view(B, T, self.num_heads, self.d_head).transpose(1, 2)   # (B, T, h, d_head) -> (B, h, T, d_head)

        def forward(self, x, mask=None):
            """x: (batch, seq, d_model); mask (1 = attend) broadcastable to (batch, heads, seq, seq).

            Returns ``(output, weights)``: (batch, seq, d_model) and (batch, heads, seq, seq).
            """
            if not isinstance(x, torch.Tensor):
                x = torch.as_tensor(x, dtype=self.W_q.weight.dtype)
            if x.dim() != 3 or x.shape[-1] != self.d_model:
                raise ValueError(f"x must be (batch, seq, {self.d_model}), got shape {tuple(x.shape)}")
            B, T, _ = x.shape
            q = self._split(self.W_q(x))                                     # (B, h, T, d_head)
            k = self._split(self.W_k(x))                                     # (B, h, T, d_head)
            v = self._split(self.W_v(x))                                     # (B, h, T, d_head)
            scores = q @ k.transpose(-2, -1) / math.sqrt(self.d_head)        # (B, h, T, d_head) @ (B, h, d_head, T) -> (B, h, T, T)
            if mask is not None:
                allowed = torch.as_tensor(mask, device=scores.device) != 0
                try:
                    allowed = allowed.expand_as(scores)                      # (B, h, T, T)
                except RuntimeError:
                    raise ValueError(
                        f"mask of shape {tuple(allowed.shape)} does not broadcast to {tuple(scores.shape)}"
                    ) from None
                scores = scores.masked_fill(~allowed, MASK_FILL)             # (B, h, T, T)
            weights = torch.softmax(scores, dim=-1)                          # (B, h, T, T)
            heads = weights @ v                                              # (B, h, T, T) @ (B, h, T, d_head) -> (B, h, T, d_head)
            merged = heads.transpose(1, 2).reshape(B, T, self.d_model)       # (B, T, h, d_head) -> (B, T, d_model)
            return self.W_o(merged), weights                                 # (B, T, d_model), (B, h, T, T)

    MultiHeadAttention.__qualname__ = "MultiHeadAttention"
    return MultiHeadAttention
