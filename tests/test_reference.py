"""The reference implementation against an oracle nobody here wrote: torch.

torch.nn.functional.scaled_dot_product_attention, torch.nn.MultiheadAttention and
plain torch ops are the ground truth; the reference must agree with them within the
contract's tolerances on batched, non-square shapes in float32 and float64.
"""

from __future__ import annotations

import ast
import importlib
import math
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest
import torch
import torch.nn.functional as F
from hypothesis import given, settings
from hypothesis import strategies as st

import reference
from reference import attention, causal_mask, hand_computation, multihead, scaling

TOL = {np.float64: dict(rtol=1e-5, atol=1e-8), np.float32: dict(rtol=1e-4, atol=1e-5)}
TORCH_DTYPE = {np.float64: torch.float64, np.float32: torch.float32}
DTYPES = [np.float64, np.float32]


def close(actual, expected, dtype=np.float64):
    if isinstance(expected, torch.Tensor):
        expected = expected.detach().numpy()
    if isinstance(actual, torch.Tensor):
        actual = actual.detach().numpy()
    np.testing.assert_allclose(actual, expected, **TOL[dtype])


def t(a) -> torch.Tensor:
    return torch.from_numpy(np.array(a))  # a writable copy


def torch_weights(Q, K, allowed=None) -> torch.Tensor:
    """softmax(Q K^T / sqrt(d)) with torch ops, blocked positions set to -inf."""
    q, k = t(Q), t(K)
    scores = q @ k.transpose(-2, -1) / math.sqrt(q.shape[-1])
    if allowed is not None:
        scores = scores.masked_fill(~t(np.asarray(allowed, dtype=bool)), float("-inf"))
    return torch.softmax(scores, dim=-1)


def qkv(rng, batch, n_q, n_k, d_k, d_v, dtype=np.float64):
    return (rng.standard_normal((*batch, n_q, d_k)).astype(dtype),
            rng.standard_normal((*batch, n_k, d_k)).astype(dtype),
            rng.standard_normal((*batch, n_k, d_v)).astype(dtype))


def random_mask(rng, shape):
    """Random booleans with at least one True per row (torch gives NaN for empty rows)."""
    m = rng.random(shape) < 0.5
    m[..., rng.integers(shape[-1])] = True
    return m


# --------------------------------------------------------------------- softmax

@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("axis", [-1, 0, 1])
def test_softmax_matches_torch(dtype, axis):
    x = (np.random.default_rng(1).standard_normal((3, 5, 4)) * 4).astype(dtype)
    out = attention.softmax(x, axis=axis)
    assert out.dtype == dtype
    close(out, torch.softmax(t(x), dim=axis), dtype)


def test_softmax_default_axis_is_last():
    x = np.random.default_rng(2).standard_normal((4, 6))
    close(attention.softmax(x), torch.softmax(t(x), dim=-1))


@pytest.mark.parametrize("big", [1e4, -1e4])
def test_softmax_stable_for_large_inputs(big):
    x = np.array([[big, big - 1.0, 0.0], [big, 5e3, -big], [800.0, 799.0, -800.0]])
    out = attention.softmax(x)
    assert np.all(np.isfinite(out))
    close(out.sum(axis=-1), np.ones(3))
    close(out, torch.softmax(t(x), dim=-1))


def test_softmax_accepts_lists_and_ints():
    out = attention.softmax([[1, 2, 3]])
    assert out.dtype == np.float64
    close(out, torch.softmax(torch.tensor([[1.0, 2.0, 3.0]], dtype=torch.float64), dim=-1))


def test_softmax_all_neg_inf_row_is_uniform_not_nan():
    x = np.array([[-np.inf, -np.inf, -np.inf, -np.inf], [0.0, -np.inf, 1.0, -np.inf]])
    out = attention.softmax(x)
    np.testing.assert_array_equal(out[0], np.full(4, 0.25))
    assert out[1, 1] == 0.0 and out[1, 3] == 0.0
    close(out[1], torch.softmax(t(x[1]), dim=-1))


# ----------------------------------------------------- scaled dot-product attention

SHAPES = [  # batch, n_q, n_k, d_k, d_v
    ((), 3, 3, 4, 4),
    ((), 3, 5, 4, 6),
    ((2,), 4, 7, 8, 3),
    ((2, 3), 5, 2, 6, 9),
    ((2, 1, 3), 1, 4, 2, 5),
]


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("shape", SHAPES, ids=str)
def test_sdpa_matches_torch_without_mask(shape, dtype):
    batch, n_q, n_k, d_k, d_v = shape
    Q, K, V = qkv(np.random.default_rng(3), batch, n_q, n_k, d_k, d_v, dtype)
    out, w = attention.scaled_dot_product_attention(Q, K, V)
    assert out.shape == (*batch, n_q, d_v) and w.shape == (*batch, n_q, n_k)
    assert out.dtype == dtype and w.dtype == dtype
    close(out, F.scaled_dot_product_attention(t(Q), t(K), t(V)), dtype)
    close(w, torch_weights(Q, K), dtype)


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("kind", ["bool", "float01", "int01"])
@pytest.mark.parametrize("mask_batch", [(2, 3), (3,), (1, 3), ()], ids=str)
def test_sdpa_matches_torch_with_mask(kind, mask_batch, dtype):
    rng = np.random.default_rng(4)
    Q, K, V = qkv(rng, (2, 3), 4, 6, 5, 3, dtype)
    allowed = random_mask(rng, (*mask_batch, 4, 6))
    mask = {"bool": allowed, "float01": allowed.astype(dtype), "int01": allowed.astype(np.int64)}[kind]
    out, w = attention.scaled_dot_product_attention(Q, K, V, mask=mask)
    assert w.shape == (2, 3, 4, 6)
    expected = F.scaled_dot_product_attention(t(Q), t(K), t(V), attn_mask=t(allowed))
    close(out, expected, dtype)
    close(w, torch_weights(Q, K, np.broadcast_to(allowed, (2, 3, 4, 6))), dtype)
    assert np.all(w[np.broadcast_to(~allowed, w.shape)] == 0.0)
    close(w.sum(axis=-1), np.ones((2, 3, 4)), dtype)


def test_sdpa_fully_masked_row_is_uniform():
    Q, K, V = qkv(np.random.default_rng(5), (), 3, 4, 2, 2)
    mask = np.ones((3, 4), dtype=bool)
    mask[1] = False
    out, w = attention.scaled_dot_product_attention(Q, K, V, mask=mask)
    assert np.all(np.isfinite(out))
    np.testing.assert_allclose(w[1], np.full(4, 0.25), rtol=0, atol=1e-15)
    close(out[1], V.mean(axis=0))
    close(w[[0, 2]], torch_weights(Q, K)[[0, 2]])


def test_sdpa_rejects_bad_shapes():
    Q, K, V = qkv(np.random.default_rng(6), (2,), 3, 4, 5, 6)
    with pytest.raises(ValueError, match="d_k"):
        attention.scaled_dot_product_attention(Q, K[..., :4], V)
    with pytest.raises(ValueError, match="keys"):
        attention.scaled_dot_product_attention(Q, K, V[:, :3])
    with pytest.raises(ValueError, match="mask"):
        attention.scaled_dot_product_attention(Q, K, V, mask=np.ones((4, 3)))
    with pytest.raises(ValueError, match="mask"):  # would enlarge the output
        attention.scaled_dot_product_attention(Q, K, V, mask=np.ones((5, 2, 3, 4)))
    with pytest.raises(ValueError, match="2 dimensions"):
        attention.scaled_dot_product_attention(Q[0, 0], K, V)


@settings(max_examples=40, deadline=None)
@given(
    batch=st.lists(st.integers(1, 3), min_size=0, max_size=3),
    n_q=st.integers(1, 6), n_k=st.integers(1, 6), d_k=st.integers(1, 8), d_v=st.integers(1, 8),
    use_mask=st.booleans(), float32=st.booleans(), seed=st.integers(0, 2**32 - 1),
)
def test_sdpa_property_random_shapes(batch, n_q, n_k, d_k, d_v, use_mask, float32, seed):
    dtype = np.float32 if float32 else np.float64
    rng = np.random.default_rng(seed)
    Q, K, V = qkv(rng, tuple(batch), n_q, n_k, d_k, d_v, dtype)
    allowed = random_mask(rng, (*batch, n_q, n_k)) if use_mask else None
    out, w = attention.scaled_dot_product_attention(Q, K, V, mask=allowed)
    expected = F.scaled_dot_product_attention(t(Q), t(K), t(V),
                                              attn_mask=None if allowed is None else t(allowed))
    close(out, expected, dtype)
    close(w, torch_weights(Q, K, allowed), dtype)


# ----------------------------------------------------------------- causal mask

@pytest.mark.parametrize("n", [1, 2, 5, 8])
def test_create_causal_mask_is_lower_triangular_bool(n):
    m = causal_mask.create_causal_mask(n)
    assert m.dtype == np.bool_ and m.shape == (n, n)
    np.testing.assert_array_equal(m, torch.tril(torch.ones(n, n, dtype=torch.bool)).numpy())
    for i in range(n):
        for j in range(n):
            assert m[i, j] == (j <= i)


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("batch", [(), (3,), (2, 2)], ids=str)
def test_causal_attention_matches_torch_is_causal(batch, dtype):
    Q, K, V = qkv(np.random.default_rng(7), batch, 6, 6, 4, 3, dtype)
    out, w = causal_mask.causal_attention(Q, K, V)
    close(out, F.scaled_dot_product_attention(t(Q), t(K), t(V), is_causal=True), dtype)
    close(w, torch_weights(Q, K, np.tril(np.ones((6, 6), dtype=bool))), dtype)
    upper = np.triu(np.ones((6, 6), dtype=bool), k=1)
    assert np.all(w[..., upper] == 0.0)          # exactly zero, not just small
    assert np.all(w[..., ~upper] > 0.0)
    np.testing.assert_allclose(w[..., 0, 0], 1.0)


def test_causal_attention_rejects_non_square():
    Q, K, V = qkv(np.random.default_rng(8), (), 3, 4, 2, 2)
    with pytest.raises(ValueError):
        causal_mask.causal_attention(Q, K, V)


# ------------------------------------------------------------------- multi-head

def test_split_heads_layout_by_direct_indexing():
    B, T, D, h = 2, 3, 12, 3
    d_head = D // h
    x = np.arange(B * T * D, dtype=np.float64).reshape(B, T, D)
    s = multihead.split_heads(x, h)
    assert s.shape == (B, h, T, d_head)
    for b in range(B):
        for head in range(h):
            for pos in range(T):
                np.testing.assert_array_equal(s[b, head, pos], x[b, pos, head * d_head:(head + 1) * d_head])
    np.testing.assert_array_equal(s, t(x).view(B, T, h, d_head).transpose(1, 2).numpy())


@pytest.mark.parametrize("h", [1, 2, 4, 8])
def test_split_merge_round_trip(h):
    x = np.random.default_rng(9).standard_normal((3, 5, 8))
    np.testing.assert_array_equal(multihead.merge_heads(multihead.split_heads(x, h)), x)
    y = np.random.default_rng(10).standard_normal((3, h, 5, 8 // h))
    np.testing.assert_array_equal(multihead.split_heads(multihead.merge_heads(y), h), y)
    m = multihead.merge_heads(y)
    assert m.shape == (3, 5, 8)
    np.testing.assert_array_equal(m[1, 2, : 8 // h], y[1, 0, 2])
    np.testing.assert_array_equal(m[1, 2, -(8 // h):], y[1, h - 1, 2])


def test_split_and_merge_reject_bad_arguments():
    with pytest.raises(ValueError, match="divisible"):
        multihead.split_heads(np.zeros((1, 2, 10)), 3)
    with pytest.raises(ValueError):
        multihead.split_heads(np.zeros((2, 10)), 2)
    with pytest.raises(ValueError):
        multihead.merge_heads(np.zeros((2, 3, 4)))


def torch_mha(d_model, h, dtype, bias=True):
    return torch.nn.MultiheadAttention(d_model, h, batch_first=True, bias=bias, dtype=TORCH_DTYPE[dtype])


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("d_model,h", [(8, 2), (12, 3), (16, 4)])
@pytest.mark.parametrize("masked", [False, True])
def test_numpy_multi_head_attention_matches_torch_mha(d_model, h, masked, dtype):
    torch.manual_seed(0)
    rng = np.random.default_rng(11)
    B, T = 2, 5
    mha = torch_mha(d_model, h, dtype, bias=False)
    W_q, W_k, W_v = (w.detach().numpy().T for w in mha.in_proj_weight.chunk(3))  # x @ W == x @ weight.T
    W_o = mha.out_proj.weight.detach().numpy().T
    X = rng.standard_normal((B, T, d_model)).astype(dtype)
    allowed = random_mask(rng, (T, T)) if masked else None
    out, w = multihead.multi_head_attention(X, W_q, W_k, W_v, W_o, h, mask=allowed)
    assert out.shape == (B, T, d_model) and w.shape == (B, h, T, T)
    with torch.no_grad():
        e_out, e_w = mha(t(X), t(X), t(X), need_weights=True, average_attn_weights=False,
                         attn_mask=None if allowed is None else t(~allowed))
    close(out, e_out, dtype)
    close(w, e_w, dtype)


def test_numpy_mha_per_batch_per_head_mask():
    torch.manual_seed(1)
    rng = np.random.default_rng(12)
    B, T, D, h = 2, 4, 8, 2
    mha = torch_mha(D, h, np.float64, bias=False)
    Ws = [w.detach().numpy().T for w in mha.in_proj_weight.chunk(3)] + [mha.out_proj.weight.detach().numpy().T]
    X = rng.standard_normal((B, T, D))
    allowed = random_mask(rng, (B, h, T, T)).astype(np.float64)
    out, w = multihead.multi_head_attention(X, *Ws, h, mask=allowed)
    with torch.no_grad():
        e_out, e_w = mha(t(X), t(X), t(X), average_attn_weights=False,
                         attn_mask=t(allowed == 0).reshape(B * h, T, T))  # (B*h, T, T)
    close(out, e_out)
    close(w, e_w)


def test_numpy_mha_scales_by_sqrt_d_head():
    rng = np.random.default_rng(13)
    D, h = 8, 4
    X = rng.standard_normal((1, 3, D))
    I = np.eye(D)
    _, w = multihead.multi_head_attention(X, I, I, I, I, h)
    xh = X[0, :, :2]                                   # head 0 = features 0, 1
    close(w[0, 0], torch.softmax(t(xh @ xh.T / math.sqrt(D // h)), dim=-1))


def test_numpy_mha_rejects_bad_arguments():
    X = np.zeros((1, 3, 6))
    W = np.eye(6)
    with pytest.raises(ValueError, match="divisible"):
        multihead.multi_head_attention(X, W, W, W, W, 4)
    with pytest.raises(ValueError):
        multihead.multi_head_attention(X[0], W, W, W, W, 2)
    with pytest.raises(ValueError, match="W_k"):
        multihead.multi_head_attention(X, W, np.eye(5), W, W, 2)


def copy_into_torch_mha(mod, mha):
    with torch.no_grad():
        mha.in_proj_weight.copy_(torch.cat([mod.W_q.weight, mod.W_k.weight, mod.W_v.weight]))
        mha.in_proj_bias.copy_(torch.cat([mod.W_q.bias, mod.W_k.bias, mod.W_v.bias]))
        mha.out_proj.weight.copy_(mod.W_o.weight)
        mha.out_proj.bias.copy_(mod.W_o.bias)


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("d_model,h,T", [(8, 2, 5), (12, 3, 4), (16, 4, 1)])
@pytest.mark.parametrize("masked", [False, True])
def test_torch_module_matches_torch_mha(d_model, h, T, masked, dtype):
    torch.manual_seed(2)
    mod = multihead.MultiHeadAttention(d_model, h).to(TORCH_DTYPE[dtype])
    for lin in (mod.W_q, mod.W_k, mod.W_v, mod.W_o):
        assert isinstance(lin, torch.nn.Linear) and lin.bias is not None
        assert lin.in_features == lin.out_features == d_model
        torch.nn.init.normal_(lin.bias)                # non-zero biases, so they are tested
    mha = torch_mha(d_model, h, dtype)
    copy_into_torch_mha(mod, mha)
    x = torch.randn(3, T, d_model, dtype=TORCH_DTYPE[dtype])
    allowed = torch.from_numpy(random_mask(np.random.default_rng(14), (T, T)))
    with torch.no_grad():
        out, w = mod(x, mask=allowed if masked else None)
        e_out, e_w = mha(x, x, x, average_attn_weights=False, attn_mask=~allowed if masked else None)
    assert out.shape == (3, T, d_model) and w.shape == (3, h, T, T)
    close(out, e_out, dtype)
    close(w, e_w, dtype)


def test_torch_module_float_mask_and_gradients():
    torch.manual_seed(3)
    mod = multihead.MultiHeadAttention(8, 2).double()
    x = torch.randn(2, 4, 8, dtype=torch.float64, requires_grad=True)
    causal = torch.tril(torch.ones(4, 4, dtype=torch.float64))
    out, w = mod(x, mask=causal)
    assert torch.all(w[..., torch.triu(torch.ones(4, 4, dtype=torch.bool), 1)] == 0)
    out.sum().backward()
    assert x.grad is not None and torch.all(torch.isfinite(x.grad))
    assert mod.W_q.weight.grad is not None and mod.W_q.weight.grad.abs().sum() > 0


def test_numpy_mha_agrees_with_reference_torch_module_zero_bias():
    torch.manual_seed(4)
    mod = multihead.MultiHeadAttention(12, 3).double()
    with torch.no_grad():
        for lin in (mod.W_q, mod.W_k, mod.W_v, mod.W_o):
            lin.bias.zero_()
    X = np.random.default_rng(15).standard_normal((2, 5, 12))
    Ws = [lin.weight.detach().numpy().T for lin in (mod.W_q, mod.W_k, mod.W_v, mod.W_o)]
    mask = np.tril(np.ones((5, 5)))
    out, w = multihead.multi_head_attention(X, *Ws, 3, mask=mask)
    with torch.no_grad():
        e_out, e_w = mod(t(X), mask=t(mask))
    close(out, e_out)
    close(w, e_w)


def _module_state(mod) -> dict:
    return {f"{name}.{p}": getattr(getattr(mod, name), p).detach().numpy().copy()
            for name in ("W_q", "W_k", "W_v", "W_o") for p in ("weight", "bias")}


@pytest.mark.parametrize("d_model,h,T", [(8, 2, 5), (12, 3, 4), (16, 4, 1)])
@pytest.mark.parametrize("mask", ["none", "causal_bool", "causal_float", "padding", "per_head"])
def test_the_modules_numpy_forward_is_the_torch_module(d_model, h, T, mask):
    """The grader's answers for the module come from `module_forward` (no torch import): it must be
    what the torch module computes, for every mask form the checks use."""
    torch.manual_seed(5)
    mod = multihead.MultiHeadAttention(d_model, h).double()
    for lin in (mod.W_q, mod.W_k, mod.W_v, mod.W_o):
        torch.nn.init.normal_(lin.bias)
    rng = np.random.default_rng(16)
    x = rng.standard_normal((3, T, d_model))
    m = {"none": None, "causal_bool": np.tril(np.ones((T, T), dtype=bool)),
         "causal_float": np.tril(np.ones((T, T))),
         "padding": (np.arange(T)[None, None, None, :] < np.array([T, max(1, T - 2), 1])[:, None, None, None])
         .astype(np.float32),
         "per_head": random_mask(rng, (3, h, T, T))}[mask]
    out, w = multihead.module_forward(d_model, h, _module_state(mod), x, m)
    with torch.no_grad():
        e_out, e_w = mod(t(x), mask=None if m is None else torch.from_numpy(np.asarray(m)))
    close(out, e_out)
    close(w, e_w)


def test_the_module_checks_reference_answers_are_the_torch_modules():
    """Every module check's reference answer, made without torch, against the torch module itself."""
    from autograder.checks import CHECKS
    from autograder.checks.base import ReferenceImplementation, rng_for

    numpy_side = ReferenceImplementation("multihead")
    # The class named as an override: module_forward builds the torch module and runs it.
    torch_side = ReferenceImplementation("multihead", {"MultiHeadAttention": multihead.MultiHeadAttention})
    checks = [c for c in CHECKS["multihead"] if ".MultiHeadAttention." in c.id]
    assert len(checks) >= 4
    def same(a, b, check_id):
        """Arrays, or tuples of them however nested (the arguments check's answers)."""
        if isinstance(a, tuple) or isinstance(b, tuple):
            assert isinstance(a, tuple) and isinstance(b, tuple) and len(a) == len(b), check_id
            for x, y in zip(a, b):
                same(x, y, check_id)
            return
        np.testing.assert_allclose(a, b, rtol=1e-5, atol=1e-6, err_msg=check_id)

    for check in checks:
        inputs = check.inputs(rng_for(3, check.id))
        same(check.run(numpy_side, inputs), check.run(torch_side, inputs), check.id)


def test_the_numpy_forward_refuses_what_the_module_refuses():
    state = {f"{n}.{p}": np.zeros((8, 8) if p == "weight" else 8) for n in ("W_q", "W_k", "W_v", "W_o")
             for p in ("weight", "bias")}
    with pytest.raises(ValueError, match="divisible"):
        multihead.module_forward(10, 3, state, np.zeros((1, 2, 10)))
    with pytest.raises(ValueError):
        multihead.module_forward(8, 2, state, np.zeros((4, 8)))
    with pytest.raises(ValueError, match="broadcast"):
        multihead.module_forward(8, 2, state, np.zeros((1, 4, 8)), np.ones((3, 3)))


def test_the_multihead_reference_imports_torch_only_for_the_module():
    code = ("import sys, reference.multihead as m; assert 'torch' not in sys.modules; "
            "m.MultiHeadAttention; assert 'torch' in sys.modules")
    subprocess.run([sys.executable, "-c", code], check=True, cwd=Path(multihead.__file__).parents[1])


def test_torch_module_rejects_bad_arguments():
    with pytest.raises(ValueError, match="divisible"):
        multihead.MultiHeadAttention(10, 3)
    with pytest.raises(ValueError):
        multihead.MultiHeadAttention(8, 0)
    mod = multihead.MultiHeadAttention(8, 2)
    with pytest.raises(ValueError):
        mod(torch.zeros(4, 8))
    with pytest.raises(ValueError):
        mod(torch.zeros(1, 4, 6))


# ------------------------------------------------------------------ scaling

@pytest.fixture(scope="module")
def scaling_results():
    return scaling.scaling_experiment()


def test_scaling_experiment_shape_and_types(scaling_results):
    assert list(scaling_results) == [4, 16, 64, 256]
    keys = {"std_unscaled", "std_scaled", "entropy_unscaled", "entropy_scaled",
            "max_weight_unscaled", "max_weight_scaled"}
    for d, stats in scaling_results.items():
        assert type(d) is int and set(stats) == keys
        assert all(type(v) is float and math.isfinite(v) for v in stats.values())


def test_scaling_std(scaling_results):
    for d, s in scaling_results.items():
        assert abs(s["std_unscaled"] / math.sqrt(d) - 1) < 0.10, (d, s["std_unscaled"])
        assert abs(s["std_scaled"] - 1) < 0.10, (d, s["std_scaled"])


def test_scaling_entropy_and_max_weight(scaling_results):
    dims = sorted(scaling_results)
    ent_u = [scaling_results[d]["entropy_unscaled"] for d in dims]
    ent_s = [scaling_results[d]["entropy_scaled"] for d in dims]
    max_u = [scaling_results[d]["max_weight_unscaled"] for d in dims]
    max_s = [scaling_results[d]["max_weight_scaled"] for d in dims]
    assert all(a > b for a, b in zip(ent_u, ent_u[1:])), ent_u
    assert all(a < b for a, b in zip(max_u, max_u[1:])), max_u
    assert max(ent_s) - min(ent_s) < 0.1, ent_s
    assert max(max_s) - min(max_s) < 0.05, max_s
    assert all(0 <= e <= math.log(4) + 1e-12 for e in ent_u + ent_s)
    assert ent_s[-1] > 0.9 and ent_u[-1] < 0.3


def test_scaling_entropy_matches_torch_for_one_draw():
    res = scaling.scaling_experiment(dims=(8,), seq_len=3, n_trials=1, seed=5)[8]
    rng = np.random.default_rng(5)
    q, k = t(rng.standard_normal((1, 3, 8))), t(rng.standard_normal((1, 3, 8)))
    s = q @ k.transpose(-2, -1)
    w_u, w_s = torch.softmax(s, -1), torch.softmax(s / math.sqrt(8), -1)
    ent = lambda w: float(torch.special.entr(w).sum(-1).mean())  # noqa: E731
    assert res["entropy_unscaled"] == pytest.approx(ent(w_u), rel=1e-9)
    assert res["entropy_scaled"] == pytest.approx(ent(w_s), rel=1e-9)
    assert res["max_weight_scaled"] == pytest.approx(float(w_s.max(-1).values.mean()), rel=1e-9)
    assert res["std_unscaled"] == pytest.approx(float(s.std(unbiased=False)), rel=1e-9)


def test_scaling_is_seeded():
    a = scaling.scaling_experiment()
    assert a == scaling.scaling_experiment(seed=0)
    assert a != scaling.scaling_experiment(seed=1)


@pytest.mark.parametrize("dims, seq_len", [((4, 16, 64, 256), 4), ((8, 32, 128), 6), ((1, 2), 2)])
def test_expected_statistics_are_where_a_large_experiment_lands(dims, seq_len):
    """Rows drawn from their own distribution, against the experiment itself with 20 000 trials:
    two independent estimates of the same expectations (noise about 0.003; the checks allow 0.04)."""
    rows = scaling.expected_statistics(dims, seq_len)
    run = scaling.scaling_experiment(dims=dims, seq_len=seq_len, n_trials=20_000, seed=99)
    for d in dims:
        for stat in ("entropy_unscaled", "entropy_scaled", "max_weight_unscaled", "max_weight_scaled"):
            assert rows[d][stat] == pytest.approx(run[d][stat], abs=0.012), (d, stat)
        assert rows[d]["std_unscaled"] == pytest.approx(run[d]["std_unscaled"], rel=0.01)
        assert rows[d]["std_scaled"] == pytest.approx(1.0, rel=0.01)


def test_plot_scaling_figure(scaling_results):
    from matplotlib.figure import Figure
    fig = scaling.plot_scaling(scaling_results)
    assert isinstance(fig, Figure)
    lines = [ln for ax in fig.axes for ln in ax.get_lines() if not ln.get_label().startswith("_")]
    assert len(lines) >= 2
    assert len({ln.get_label() for ln in lines}) >= 2
    for ln in lines:
        np.testing.assert_array_equal(ln.get_xdata(), [4, 16, 64, 256])
    ys = {tuple(np.asarray(ln.get_ydata(), dtype=float)) for ln in lines}
    std_u = tuple(scaling_results[d]["std_unscaled"] for d in (4, 16, 64, 256))
    assert std_u in ys
    for ax in fig.axes:
        assert ax.get_xlabel() and ax.get_ylabel()
        assert ax.get_title() or fig.get_suptitle()
        assert ax.get_legend() is not None


# ----------------------------------------------------------- hand computation

def torch_steps(Q, K, V, d_k):
    q, k, v = (torch.tensor(a, dtype=torch.float64) for a in (Q, K, V))
    scores = q @ k.T
    w = torch.softmax(scores / math.sqrt(d_k), dim=-1)
    return scores, scores / math.sqrt(d_k), w, w @ v


def test_hand_inputs_are_the_contract_inputs():
    hc = hand_computation
    assert hc.Q_A == [[1, 0], [0, 1]] and hc.K_A == [[1, 1], [1, 0]] and hc.V_A == [[2, 1], [1, 2]]
    assert hc.X_CSM == [[1.0, 0.5, 0.2, 0.8], [0.3, 0.9, 0.1, 0.4], [0.6, 0.2, 0.7, 0.3]]
    assert hc.D_K_A == 2 and hc.D_K_CSM == 4


def test_hand_part_a_matches_torch():
    hc = hand_computation
    scores, scaled, w, out = torch_steps(hc.Q_A, hc.K_A, hc.V_A, 2)
    for name, expected in [("SCORES", scores), ("SCALED_SCORES", scaled), ("WEIGHTS", w), ("OUTPUT", out)]:
        close(np.array(getattr(hc, name)), expected)


def test_hand_part_b_matches_torch():
    hc = hand_computation
    scores, _, w, out = torch_steps(hc.X_CSM, hc.X_CSM, hc.X_CSM, 4)
    close(np.array(hc.CSM_SCORES), scores)
    close(np.array(hc.CSM_WEIGHTS), w)
    close(np.array(hc.CSM_OUTPUT), out)


def test_hand_cat_sat_mat_dot_products_by_explicit_sums():
    X = [[1.0, 0.5, 0.2, 0.8], [0.3, 0.9, 0.1, 0.4], [0.6, 0.2, 0.7, 0.3]]
    for i in range(3):
        for j in range(3):
            dot = 0.0
            for a, b in zip(X[i], X[j]):
                dot += a * b
            assert hand_computation.CSM_SCORES[i][j] == pytest.approx(dot, abs=1e-12), (i, j)
    assert hand_computation.CSM_SCORES[0][1] == pytest.approx(1.09, abs=1e-12)  # cat . sat
    assert hand_computation.CSM_SCORES[1][2] == pytest.approx(0.55, abs=1e-12)  # sat . mat


def test_hand_constants_are_nested_lists_of_floats_and_match_answer_keys():
    keys = hand_computation.answer_keys()
    shapes = {"SCORES": (2, 2), "SCALED_SCORES": (2, 2), "WEIGHTS": (2, 2), "OUTPUT": (2, 2),
              "CSM_SCORES": (3, 3), "CSM_WEIGHTS": (3, 3), "CSM_OUTPUT": (3, 4)}
    assert set(keys) == set(shapes)
    for name, shape in shapes.items():
        value = getattr(hand_computation, name)
        assert type(value) is list and all(type(row) is list for row in value)
        assert all(type(x) is float for row in value for x in row)
        assert np.shape(value) == shape and keys[name].shape == shape
        np.testing.assert_array_equal(np.array(value), keys[name])


# -------------------------------------------- the modules as shippable source text

REF_DIR = Path(reference.__file__).parent
ALLOWED_IMPORTS = {"numpy", "math", "typing", "__future__"}
EXTRA_IMPORTS = {"multihead": {"torch"}, "scaling": {"matplotlib"}}


def parsed_imports(stem):
    """(absolute top-level module names, relative sibling stems) imported anywhere in the module."""
    tree = ast.parse((REF_DIR / f"{stem}.py").read_text(encoding="utf-8"))
    absolute, relative = set(), set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            absolute |= {a.name.split(".")[0] for a in node.names}
        elif isinstance(node, ast.ImportFrom):
            if node.level == 0:
                absolute.add(node.module.split(".")[0])
            else:
                assert node.level == 1 and node.module, f"{stem}: only `from .sibling import x`"
                relative.add(node.module.split(".")[0])
        elif isinstance(node, ast.Call) and isinstance(node.func, ast.Name):
            assert node.func.id not in {"open", "__import__", "exec", "eval"}, f"{stem}: {node.func.id}()"
    return absolute, relative


@pytest.mark.parametrize("stem", reference.STEMS)
def test_module_imports_only_allowed_names(stem):
    absolute, relative = parsed_imports(stem)
    assert absolute <= ALLOWED_IMPORTS | EXTRA_IMPORTS.get(stem, set()), absolute
    assert relative <= set(reference.STEMS) - {stem}
    assert sorted(relative) == sorted(reference.DEPENDS[stem])


def test_depends_is_acyclic_and_rooted_at_attention():
    assert set(reference.DEPENDS) == set(reference.STEMS)
    assert reference.DEPENDS["attention"] == []
    for stem, deps in reference.DEPENDS.items():
        assert set(deps) <= {"attention"}, (stem, deps)


def test_reference_modules_load_as_a_package_under_another_name(tmp_path, monkeypatch):
    pkg = tmp_path / "shipped_ref_pkg"
    pkg.mkdir()
    (pkg / "__init__.py").write_text("")
    for stem in reference.STEMS:
        (pkg / f"{stem}.py").write_text((REF_DIR / f"{stem}.py").read_text(encoding="utf-8"))
    monkeypatch.syspath_prepend(str(tmp_path))
    try:
        cm = importlib.import_module("shipped_ref_pkg.causal_mask")
        hc = importlib.import_module("shipped_ref_pkg.hand_computation")
        Q, K, V = qkv(np.random.default_rng(16), (), 4, 4, 3, 3)
        np.testing.assert_array_equal(cm.causal_attention(Q, K, V)[1], causal_mask.causal_attention(Q, K, V)[1])
        assert hc.CSM_WEIGHTS == hand_computation.CSM_WEIGHTS
    finally:
        for name in [n for n in sys.modules if n.startswith("shipped_ref_pkg")]:
            del sys.modules[name]


def test_import_reference_is_cheap():
    code = "import sys, reference; print(sorted(m for m in ('numpy', 'torch', 'matplotlib') if m in sys.modules))"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True,
                         cwd=REF_DIR.parent)
    assert out.stdout.strip() == "[]"
