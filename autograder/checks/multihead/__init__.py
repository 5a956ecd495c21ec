"""The multi-head attention exercise (multihead.py): head split/merge, multi-head attention, and the
torch module.

Its checks and descriptor are here; beside them, the mistakes it recognises: misconceptions.py
(the catalogue) and mutants.py (the wrong implementations diagnosis runs, built on attention's).
"""

from __future__ import annotations

import numpy as np

from autograder.checks.arguments import arguments_check, module_arguments_check
from autograder.checks.base import Check, compare_arrays, compare_property
from autograder.checks.masks import padding_mask, random_mask
from autograder.judge import observations
from autograder.checks.exercise import PAIR, Exercise


def _position_coded(batch: int, seq: int, d_model: int) -> np.ndarray:
    """x[b, t, f] = 1000 b + 100 t + f: every value says where it came from."""
    b, t, f = np.meshgrid(np.arange(batch), np.arange(seq), np.arange(d_model), indexing="ij")
    return (1000.0 * b + 100.0 * t + f)                               # (B, T, d_model)


def _weights(rng, d_model: int) -> dict[str, np.ndarray]:
    scale = 1 / np.sqrt(d_model)
    return {name: rng.normal(scale=scale, size=(d_model, d_model)) for name in ("W_q", "W_k", "W_v", "W_o")}


def _mask(rng, kind, batch: int, seq: int, heads: int):
    """causal: (T, T) bool; random: (B, 1, T, T) bool, one pattern per batch entry;
    padding: (B, 1, 1, T) 0/1 floats; per_head: (B, h, T, T) bool, one pattern per batch entry and head."""
    if kind == "causal":
        return np.tril(np.ones((seq, seq), dtype=bool))                 # (T, T), broadcast over B, h
    if kind == "random":
        return random_mask(rng, seq, seq, (batch, 1))                    # (B, 1, T, T)
    if kind == "padding":
        return padding_mask(rng, batch, seq).astype(np.float64)          # (B, 1, 1, T)
    return random_mask(rng, seq, seq, (batch, heads))                    # (B, h, T, T)


def _mha_inputs(rng, batch=2, seq=5, d_model=12, heads=3, masked=None):
    inp = {"X": rng.normal(size=(batch, seq, d_model)), "num_heads": heads} | _weights(rng, d_model)
    if masked:
        inp["mask"] = _mask(rng, "causal" if masked is True else masked, batch, seq, heads)
    return inp


def _mha(impl, i):
    args = (i["X"], i["W_q"], i["W_k"], i["W_v"], i["W_o"], i["num_heads"])
    return impl.multi_head_attention(*args, mask=i["mask"]) if "mask" in i else impl.multi_head_attention(*args)


def _module_inputs(rng, batch=2, seq=5, d_model=8, heads=2, masked=None):
    state = {}
    for layer in ("W_q", "W_k", "W_v", "W_o"):
        state[f"{layer}.weight"] = rng.normal(scale=0.4, size=(d_model, d_model)).astype(np.float32)
        state[f"{layer}.bias"] = rng.normal(scale=0.1, size=(d_model,)).astype(np.float32)
    inp = {"init": [d_model, heads], "state": state,
           "x": rng.normal(size=(batch, seq, d_model)).astype(np.float32)}
    if masked:
        mask = _mask(rng, "causal" if masked is True else masked, batch, seq, heads)
        inp["mask"] = mask.astype(np.float32) if mask.dtype == np.float64 else mask   # torch's usual float
    return inp


def _module(impl, i):
    return impl.module_forward("MultiHeadAttention", i["init"], i["state"], i["x"], i.get("mask"))


def _structure_inputs(rng):
    inp = _module_inputs(rng)
    other = {name: rng.normal(scale=0.4 if name.endswith("weight") else 0.1, size=w.shape).astype(np.float32)
             for name, w in inp["state"].items()}
    return inp | {"other_state": other}


def _structure_run(impl, i):
    """forward with the layers' parameters, then with other parameters: (out, weights, out', weights')."""
    out, weights = impl.module_forward("MultiHeadAttention", i["init"], i["state"], i["x"])
    out_b, weights_b = impl.module_forward("MultiHeadAttention", i["init"], i["other_state"], i["x"])
    return out, weights, out_b, weights_b


# The property is the judge's (judge/properties.py, shared with the handout's check.py).
_structure_compare = compare_property("structure", lambda ctx, expected: {"x_shape": ctx.inputs["x"].shape,
                                                                          "heads": ctx.inputs["init"][1]})


SPLIT_VALUES = Check(
    "multihead.split_heads.values", "split_heads on (2, 5, 12) with 3 heads gives (2, 3, 5, 4)",
    inputs=lambda rng: {"x": rng.normal(size=(2, 5, 12))},
    run=lambda impl, i: impl.split_heads(i["x"], 3), compare=compare_arrays("split", weights=()))
SPLIT_LAYOUT = Check(
    "multihead.split_heads.layout", "head h holds features h*d_head ... (h+1)*d_head - 1 of every position",
    inputs=lambda rng: {"x": _position_coded(1, 4, 8)}, random=False,
    run=lambda impl, i: impl.split_heads(i["x"], 2), compare=compare_arrays("split", weights=()))
MERGE_VALUES = Check(
    "multihead.merge_heads.values", "merge_heads on (2, 3, 4, 5) gives (2, 4, 15)",
    inputs=lambda rng: {"x": rng.normal(size=(2, 3, 4, 5))},
    run=lambda impl, i: impl.merge_heads(i["x"]), compare=compare_arrays("merged", weights=()))
MERGE_ROUND_TRIP = Check(
    "multihead.merge_heads.round_trip", "merge_heads(split_heads(x, 4)) gives x back",
    inputs=lambda rng: {"x": _position_coded(2, 3, 8)}, random=False,
    run=lambda impl, i: impl.merge_heads(impl.split_heads(i["x"], 4)),
    compare=compare_arrays("merge_heads(split_heads(x))", weights=()))
MHA_OUTPUT = Check(
    "multihead.multi_head_attention.output", "output of 3-head attention, d_model = 12",
    inputs=_mha_inputs, run=lambda impl, i: _mha(impl, i)[0], compare=compare_arrays("output", weights=()))
MHA_WEIGHTS = Check(
    "multihead.multi_head_attention.weights", "per-head weights (batch, num_heads, seq, seq)",
    inputs=lambda rng: _mha_inputs(rng, batch=2, seq=4, d_model=8, heads=2),
    run=lambda impl, i: _mha(impl, i)[1], compare=compare_arrays("weights"))
MHA_MASK = Check(
    "multihead.multi_head_attention.mask", "a (seq, seq) causal mask broadcast over batch and heads",
    inputs=lambda rng: _mha_inputs(rng, masked=True), run=_mha, compare=compare_arrays("output", "weights"))
# The module's random mask has a head axis of 1; this one has every head's own pattern: between
# them, every mask shape the contract names is tried.
MHA_RANDOM_MASK = Check(
    "multihead.multi_head_attention.random_mask",
    "a random boolean mask per batch entry and head, shape (batch, num_heads, seq, seq)",
    inputs=lambda rng: _mha_inputs(rng, masked="per_head"), run=_mha, compare=compare_arrays("output", "weights"),
    advice="try a boolean mask of shape (batch, num_heads, seq, seq) that is not causal, a different "
           "pattern for each head")
MHA_PADDING_MASK = Check(
    "multihead.multi_head_attention.padding_mask", "a padding mask of shape (batch, 1, 1, seq), 0/1 floats",
    inputs=lambda rng: _mha_inputs(rng, batch=3, masked="padding"), run=_mha,
    compare=compare_arrays("output", "weights"),
    advice="try a padding mask of shape (batch, 1, 1, seq) of 0/1 floats, different for each batch entry")
MODULE_STRUCTURE = Check(
    "multihead.MultiHeadAttention.structure",
    "MultiHeadAttention(8, 2) has W_q, W_k, W_v, W_o as nn.Linear(8, 8) and forward returns the right shapes",
    inputs=_structure_inputs, run=_structure_run, compare=_structure_compare,
    match=compare_arrays("output", "weights", "output with other parameters",
                         "weights with other parameters", weights=()))
MODULE_MATCHES_TORCH = Check(
    "multihead.MultiHeadAttention.matches_torch",
    "forward agrees with torch.nn.MultiheadAttention given the same weights",
    inputs=lambda rng: _module_inputs(rng, batch=3, seq=6, d_model=12, heads=3),
    run=_module, compare=compare_arrays("output", "weights"))
# seq = d_head on purpose: q @ k without the transpose runs here, so it can be recognised.
MODULE_MASK = Check(
    "multihead.MultiHeadAttention.mask", "forward with a causal mask (1 = attend)",
    inputs=lambda rng: _module_inputs(rng, seq=4, masked=True), run=_module,
    compare=compare_arrays("output", "weights"),
    advice="try forward with a (seq, seq) causal mask of 1/True where a query may attend")
MODULE_RANDOM_MASK = Check(
    "multihead.MultiHeadAttention.random_mask",
    "forward with a random boolean mask per batch entry, shape (batch, 1, seq, seq)",
    inputs=lambda rng: _module_inputs(rng, seq=5, masked="random"), run=_module,
    compare=compare_arrays("output", "weights"),
    advice="try forward with a boolean tensor mask of shape (batch, 1, seq, seq) that is not causal")
MODULE_PADDING_MASK = Check(
    "multihead.MultiHeadAttention.padding_mask", "forward with a padding mask (batch, 1, 1, seq) of 0/1 floats",
    inputs=lambda rng: _module_inputs(rng, batch=3, seq=5, masked="padding"), run=_module,
    compare=compare_arrays("output", "weights"),
    advice="try forward with a padding mask of shape (batch, 1, 1, seq) holding 0.0/1.0, different for "
           "each batch entry")

SPLIT_ARGUMENTS = arguments_check("multihead", "split_heads", lambda rng: {"x": rng.normal(size=(2, 3, 6))},
                                  ("x",), scalars=(2,))
MERGE_ARGUMENTS = arguments_check("multihead", "merge_heads", lambda rng: {"x": rng.normal(size=(2, 2, 3, 3))},
                                  ("x",))
MHA_ARGUMENTS = arguments_check(
    "multihead", "multi_head_attention", lambda rng: _mha_inputs(rng, batch=2, seq=4, d_model=8, heads=2),
    ("X", "W_q", "W_k", "W_v", "W_o"), scalars=(2,))
# A boolean mask: `mask.bool()` of one is the caller's mask itself, so a change made to it reaches them.
MODULE_ARGUMENTS = module_arguments_check("multihead", "MultiHeadAttention",
                                          lambda rng: _module_inputs(rng, seq=5, masked="random"))


# The checks of each task, in the order they are graded (the catalogue names them by these).
SPLIT = (SPLIT_VALUES, SPLIT_LAYOUT)
MERGE = (MERGE_VALUES, MERGE_ROUND_TRIP)
MHA = (MHA_OUTPUT, MHA_WEIGHTS, MHA_MASK, MHA_RANDOM_MASK, MHA_PADDING_MASK)
MODULE = (MODULE_STRUCTURE, MODULE_MATCHES_TORCH, MODULE_MASK, MODULE_RANDOM_MASK, MODULE_PADDING_MASK)
# Graded last, and named by their own catalogue entry only: what a function does to its arguments.
ARGUMENTS = (SPLIT_ARGUMENTS, MERGE_ARGUMENTS, MHA_ARGUMENTS, MODULE_ARGUMENTS)
CHECKS = [*SPLIT, *MERGE, *MHA, *MODULE, *ARGUMENTS]


EXERCISE = Exercise(
    stem="multihead", title="Multi-head attention", order=5,
    returns={"split_heads": "array", "merge_heads": "array", "multi_head_attention": PAIR,
             "MultiHeadAttention": PAIR},
    provided=("attention", "causal_mask"),
    checks=CHECKS,
    observe={"split_heads": observations.provenance("split"), "merge_heads": observations.provenance("merged"),
             "multi_head_attention": observations.attention(heads=True),
             "MultiHeadAttention": observations.attention(heads=True)},
    pictures={"multi_head_attention": "weights"},
    catalogue=f"{__name__}.misconceptions",
)
