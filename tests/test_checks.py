"""The checks themselves: their expected answers agree with torch (the oracle), and answers that
only look right (masks ignored or always causal, seeds or trials ignored, constants, nan, a plot
of other numbers) earn nothing, while honest variants (figure-level labels, log axes) pass."""

from __future__ import annotations

import math

import matplotlib
import numpy as np
import pytest
import torch

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402

from autograder.checks import CHECKS  # noqa: E402
from autograder.checks.base import Context, ReferenceImplementation, rng_for  # noqa: E402
from autograder.config import load_course  # noqa: E402
from autograder.judge.convert import describe_figure  # noqa: E402
from autograder.checks.attention import mutants as mu  # noqa: E402
from autograder.checks.multihead import mutants as mh  # noqa: E402
from autograder.checks.scaling import mutants as sc  # noqa: E402

COURSE = load_course()
BY_ID = {c.id: c for checks in CHECKS.values() for c in checks}


def setup(check_id):
    check = BY_ID[check_id]
    inputs = check.inputs(rng_for(COURSE.seed, check.id))
    return check, inputs, Context(course=COURSE, inputs=inputs)


def grade(check_id, impl) -> list[str]:
    """The problems `check_id` finds with `impl`'s answer (empty: it passes)."""
    check, inputs, ctx = setup(check_id)
    expected = (check.expected_run or check.run)(ReferenceImplementation(check.exercise), inputs)
    return check.compare(check.run(impl, inputs), expected, ctx)


def Impl(stem, **functions):
    """The reference with `functions` in place of its own (the same object the grader runs mutants as)."""
    return ReferenceImplementation(stem, functions)


MASK_CHECKS = [i for i in BY_ID if "mask" in i.split(".")[-1] and i.startswith(("attention", "multihead"))]


# ---------------------------------------------------------------- the oracle


@pytest.mark.parametrize("check_id", [i for i in MASK_CHECKS if i.startswith("attention")])
def test_sdpa_mask_checks_expect_what_torch_gives(check_id):
    check, inputs, _ = setup(check_id)
    out, w = check.run(ReferenceImplementation("attention"), inputs)
    allowed = torch.from_numpy(np.asarray(inputs["mask"]) != 0)
    q, k, v = (torch.from_numpy(np.asarray(inputs[n], dtype=np.float64)) for n in "QKV")
    e_out = torch.nn.functional.scaled_dot_product_attention(q, k, v, attn_mask=allowed)
    np.testing.assert_allclose(out, e_out.numpy(), rtol=1e-5, atol=1e-7)
    e_w = torch.softmax((q @ k.transpose(-2, -1) / math.sqrt(q.shape[-1])).masked_fill(~allowed, -torch.inf), -1)
    np.testing.assert_allclose(w, e_w.numpy(), rtol=1e-5, atol=1e-7)


@pytest.mark.parametrize("check_id", [i for i in MASK_CHECKS if i.startswith("multihead")])
def test_multihead_mask_checks_expect_what_torch_mha_gives(check_id):
    check, inputs, _ = setup(check_id)
    out, w = check.run(ReferenceImplementation("multihead"), inputs)
    if "X" in inputs:
        X, heads = inputs["X"], inputs["num_heads"]
        mha = torch.nn.MultiheadAttention(X.shape[-1], heads, batch_first=True, bias=False, dtype=torch.float64)
        with torch.no_grad():
            mha.in_proj_weight.copy_(torch.from_numpy(np.concatenate([inputs[n].T for n in ("W_q", "W_k", "W_v")])))
            mha.out_proj.weight.copy_(torch.from_numpy(inputs["W_o"].T))
        x = torch.from_numpy(X)
    else:
        d_model, heads = inputs["init"]
        mha = torch.nn.MultiheadAttention(d_model, heads, batch_first=True, dtype=torch.float64)
        state = {k: torch.from_numpy(np.asarray(v, dtype=np.float64)) for k, v in inputs["state"].items()}
        with torch.no_grad():
            mha.in_proj_weight.copy_(torch.cat([state[f"{n}.weight"] for n in ("W_q", "W_k", "W_v")]))
            mha.in_proj_bias.copy_(torch.cat([state[f"{n}.bias"] for n in ("W_q", "W_k", "W_v")]))
            mha.out_proj.weight.copy_(state["W_o.weight"])
            mha.out_proj.bias.copy_(state["W_o.bias"])
        x = torch.from_numpy(np.asarray(inputs["x"], dtype=np.float64))
    B, T = x.shape[:2]
    blocked = torch.from_numpy(np.broadcast_to(np.asarray(inputs["mask"]) == 0, (B, heads, T, T)).copy())
    with torch.no_grad():
        e_out, e_w = mha(x, x, x, attn_mask=blocked.reshape(B * heads, T, T), average_attn_weights=False)
    tol = dict(rtol=1e-4, atol=1e-5)
    np.testing.assert_allclose(out, e_out.numpy(), **tol)
    np.testing.assert_allclose(w, e_w.numpy(), **tol)


def test_mask_checks_are_not_all_causal_nor_all_2d():
    masks = [np.asarray(setup(i)[1]["mask"]) for i in MASK_CHECKS]
    causal = [m.ndim == 2 and m.shape[0] == m.shape[1] and (m != 0).tolist() == np.tril(np.ones(m.shape, bool)).tolist()
              for m in masks]
    assert not all(causal) and sum(m.ndim == 4 for m in masks) >= 5
    assert any(m.dtype == bool for m in masks) and any(m.dtype.kind == "f" for m in masks)
    assert any(m.shape[-2] == 1 for m in masks)                        # a padding mask (batch, 1, 1, seq)


# ---------------------------------------------------------------- masks used for what they say


@pytest.mark.parametrize("mode", ["causal", "2d_only", "ignored"])
def test_a_mask_used_wrongly_fails_a_mask_check(mode):
    for stem, name, fn in (("attention", "scaled_dot_product_attention", mu.sdpa(mask_mode=mode)),
                           ("multihead", "multi_head_attention", mh.mha_fn(mask_mode=mode)),
                           ("multihead", "MultiHeadAttention", mh.module_class(mask_mode=mode))):
        failing = [i for i in MASK_CHECKS if i.startswith(stem) and name in i and grade(i, Impl(stem, **{name: fn}))]
        assert failing, (mode, name)


# ---------------------------------------------------------------- the experiment's arguments


def test_an_unseeded_or_fixed_seed_experiment_fails_the_seed_check():
    assert grade("scaling.scaling_experiment.seed", Impl("scaling")) == []
    for wrong in (sc.scaling_fn(seeded=False), lambda **kw: sc.scaling_experiment(**(kw | {"seed": 0}))):
        assert grade("scaling.scaling_experiment.seed", Impl("scaling", scaling_experiment=wrong))


def test_an_experiment_ignoring_n_trials_fails_the_n_trials_check():
    assert grade("scaling.scaling_experiment.n_trials", Impl("scaling")) == []
    assert grade("scaling.scaling_experiment.n_trials", Impl("scaling", scaling_experiment=sc.scaling_fn(trials=300)))


def test_made_up_statistics_earn_nothing():
    def made_up(dims=(4, 16, 64, 256), seq_len=4, n_trials=1000, seed=0):
        return {d: {"std_unscaled": math.sqrt(d), "std_scaled": 1.0, "entropy_unscaled": 1 / math.log(d + 1),
                    "entropy_scaled": 1.0, "max_weight_unscaled": 1 - 1 / d, "max_weight_scaled": 0.5} for d in dims}

    zeros = lambda dims=(4,), **kw: {d: dict.fromkeys(sc.scaling_experiment(dims=(4,))[4], 0.0) for d in dims}  # noqa
    for fake in (made_up, zeros):
        for check in CHECKS["scaling"]:
            if check.function == "scaling_experiment":
                assert grade(check.id, Impl("scaling", scaling_experiment=fake)), (fake.__name__, check.id)


# ---------------------------------------------------------------- the figure, read on its values


def _figure(results, *, values=None, sup=False, log=False):
    dims = sorted(results)
    fig, axes = plt.subplots(1, 2)
    for ax, stat in zip(axes, ("std", "entropy")):
        for variant in ("unscaled", "scaled"):
            ys = [results[d][f"{stat}_{variant}"] for d in dims] if values is None else values
            ax.plot(dims, ys, label=variant)
        if log:
            ax.set_xscale("log")
            ax.set_yscale("log")
        if not sup:
            ax.set_xlabel("d")
            ax.set_ylabel(stat)
        ax.legend()
    if sup:
        fig.supxlabel("d")
        fig.supylabel("value")
    return fig


def _grade_figure(make):
    return grade("scaling.plot_scaling.figure",
                 Impl("scaling", plot_scaling=lambda results: describe_figure(make(results))))


def test_figure_level_labels_log_axes_and_subplots_pass():
    assert _grade_figure(lambda r: _figure(r)) == []
    assert _grade_figure(lambda r: _figure(r, sup=True, log=True)) == []


def test_a_figure_of_other_numbers_fails():
    problems = _grade_figure(lambda r: _figure(r, values=[1.0, 2.0, 3.0, 4.0]))
    assert problems and "results" in problems[0]
    rerun = sc.scaling_experiment(n_trials=100, seed=5)            # its own experiment, not the argument
    assert _grade_figure(lambda r: _figure(rerun))


# ---------------------------------------------------------------- degenerate answers


def test_property_and_structure_checks_count_only_on_attention_like_answers():
    def constant(Q, K, V):
        n = np.shape(Q)[-2]
        return np.zeros(np.shape(V)), np.full((n, n), 1 / n)

    def nan(Q, K, V):
        return np.full(np.shape(V), np.nan), np.full((np.shape(Q)[-2],) * 2, np.nan)

    for fake in (constant, nan):
        assert grade("causal_mask.causal_attention.no_future", Impl("causal_mask", causal_attention=fake))

    class NanModule(torch.nn.Module):
        def __init__(self, d_model, num_heads):
            super().__init__()
            self.h = num_heads
            self.W_q, self.W_k, self.W_v, self.W_o = (torch.nn.Linear(d_model, d_model) for _ in range(4))

        def forward(self, x, mask=None):
            B, T, D = x.shape
            return torch.full((B, T, D), float("nan")), torch.full((B, self.h, T, T), 1.0 / T)

    assert grade("multihead.MultiHeadAttention.structure", Impl("multihead", MultiHeadAttention=NanModule))
    assert grade("multihead.MultiHeadAttention.structure", Impl("multihead")) == []


def test_attention_that_ignores_queries_and_keys_earns_no_property_points():
    """Each token attending only to itself, or evenly to its past: no future is seen, rows sum to 1,
    the output is the weights times V and follows V, yet the weights never look at Q or K."""
    def to_itself(Q, K, V):
        T = np.shape(Q)[-2]
        w = np.broadcast_to(np.eye(T), np.shape(Q)[:-2] + (T, T)).copy()
        return w @ V, w

    def evenly_to_the_past(Q, K, V):
        T = np.shape(Q)[-2]
        w = np.tril(np.ones((T, T))) / np.arange(1, T + 1)[:, None]
        return w @ V, w

    assert grade("causal_mask.causal_attention.no_future", Impl("causal_mask")) == []
    for fake in (to_itself, evenly_to_the_past):
        assert grade("causal_mask.causal_attention.no_future", Impl("causal_mask", causal_attention=fake))


def test_a_module_whose_answer_ignores_its_layers_earns_no_structure_point():
    class Echo(torch.nn.Module):
        """The right layers, finite values and probabilities, but the input echoed back."""

        def __init__(self, d_model, num_heads):
            super().__init__()
            self.h = num_heads
            self.W_q, self.W_k, self.W_v, self.W_o = (torch.nn.Linear(d_model, d_model) for _ in range(4))

        def forward(self, x, mask=None):
            B, T, _ = x.shape
            return x.clone(), torch.full((B, self.h, T, T), 1.0 / T)

    class FixedWeights(Echo):
        """The output uses W_v and W_o, the weights are uniform whatever W_q and W_k hold."""

        def forward(self, x, mask=None):
            B, T, D = x.shape
            return self.W_o(self.W_v(x)), torch.full((B, self.h, T, T), 1.0 / T)

    for fake in (Echo, FixedWeights):
        assert grade("multihead.MultiHeadAttention.structure", Impl("multihead", MultiHeadAttention=fake))


def test_multi_head_masks_cover_every_shape_of_the_contract():
    for name in ("multi_head_attention", "MultiHeadAttention"):
        shapes = {np.asarray(setup(i)[1]["mask"]).shape for i in MASK_CHECKS if f".{name}." in i}
        assert any(len(s) == 2 for s in shapes), name                                     # (seq, seq)
        assert any(len(s) == 4 and s[1] == 1 and s[2] == 1 for s in shapes), name         # (batch, 1, 1, seq)
        assert any(len(s) == 4 and s[1] == 1 and s[2] > 1 for s in shapes) or name != "MultiHeadAttention"
    shapes = {np.asarray(setup(i)[1]["mask"]).shape for i in MASK_CHECKS if ".multi_head_attention." in i}
    assert any(len(s) == 4 and s[1] > 1 and s[0] > 1 for s in shapes)        # (batch, num_heads, seq, seq)


def test_an_experiment_one_trial_short_fails_the_n_trials_check():
    assert grade("scaling.scaling_experiment.n_trials", Impl("scaling", scaling_experiment=sc.scaling_fn(trials_offset=-1)))
