"""The causal mask exercise (causal_mask.py): the mask itself and attention that cannot see the future.

Its checks and descriptor are here; beside them, the mistakes it recognises: misconceptions.py
(the catalogue) and mutants.py (the wrong implementations diagnosis runs).
"""

from __future__ import annotations

from autograder.checks.arguments import arguments_check
from autograder.checks.base import Check, compare_arrays, compare_property
from autograder.judge import observations
from autograder.checks.exercise import PAIR, Exercise, WrittenQuestion


def _qkv(rng, batch: tuple[int, ...], seq: int, d: int):
    return {name: rng.normal(size=(*batch, seq, d)) for name in ("Q", "K", "V")}   # (..., T, d)


def _no_future_inputs(rng):
    inp = _qkv(rng, (), 6, 4)
    changed = 3                                   # tokens 3.. are replaced in the second call
    K2, V2 = inp["K"].copy(), inp["V"].copy()
    K2[changed:] = rng.normal(size=K2[changed:].shape)
    V2[changed:] = rng.normal(size=V2[changed:].shape) * 5
    Q2 = rng.normal(size=inp["Q"].shape)          # other queries: the weights must follow them
    return inp | {"K2": K2, "V2": V2, "Q2": Q2, "changed": changed}


def _no_future_run(impl, i):
    out_a, weights_a = impl.causal_attention(i["Q"], i["K"], i["V"])
    out_b, _ = impl.causal_attention(i["Q"], i["K2"], i["V2"])
    _, weights_q = impl.causal_attention(i["Q2"], i["K"], i["V"])
    return out_a, out_b, weights_a, weights_q


# The property is the judge's (judge/properties.py, shared with the handout's check.py).
_no_future_compare = compare_property("no_future", lambda ctx, expected: {"V": ctx.inputs["V"],
                                                                          "changed": ctx.inputs["changed"]})


CREATE_VALUES = Check(
    "causal_mask.create_causal_mask.values", "create_causal_mask(5): 1/True on and below the diagonal",
    inputs=lambda rng: {"n": 5}, run=lambda impl, i: impl.create_causal_mask(i["n"]),
    compare=compare_arrays("mask", weights=()), random=False)
CREATE_SIZES = Check(
    "causal_mask.create_causal_mask.sizes", "create_causal_mask for seq_len 1 and 8",
    inputs=lambda rng: {}, random=False,
    run=lambda impl, i: (impl.create_causal_mask(1), impl.create_causal_mask(8)),
    compare=compare_arrays("create_causal_mask(1)", "create_causal_mask(8)", weights=()))
CAUSAL_WEIGHTS = Check(
    "causal_mask.causal_attention.weights", "weights of causal attention over 6 tokens",
    inputs=lambda rng: _qkv(rng, (), 6, 4),
    run=lambda impl, i: impl.causal_attention(i["Q"], i["K"], i["V"])[1],
    compare=compare_arrays("weights"))
# d = seq on purpose: Q @ K without the transpose runs here, so it can be recognised.
CAUSAL_OUTPUT = Check(
    "causal_mask.causal_attention.output", "output of causal attention over 5 tokens, d = 5",
    inputs=lambda rng: _qkv(rng, (), 5, 5),
    run=lambda impl, i: impl.causal_attention(i["Q"], i["K"], i["V"])[0],
    compare=compare_arrays("output", weights=()))
CAUSAL_NO_FUTURE = Check(
    "causal_mask.causal_attention.no_future", "changing future tokens leaves earlier outputs unchanged",
    inputs=_no_future_inputs, run=_no_future_run, compare=_no_future_compare,
    match=compare_arrays("output", "output with the future changed", "weights", "weights for other queries",
                         weights=()))
CAUSAL_BATCHED = Check(
    "causal_mask.causal_attention.batched", "batched inputs of shape (2, 3, 5, 4)",
    inputs=lambda rng: _qkv(rng, (2, 3), 5, 4),
    run=lambda impl, i: impl.causal_attention(i["Q"], i["K"], i["V"]),
    compare=compare_arrays("output", "weights"),
    advice="try Q, K, V with two leading batch axes, shape (2, 3, seq, d): the mask covers the last two")

CAUSAL_ARGUMENTS = arguments_check(
    "causal_mask", "causal_attention", lambda rng: _qkv(rng, (), 5, 4) | {"X": rng.normal(size=(5, 4))},
    ("Q", "K", "V"), alias=("Q", "K", "V"))


# The checks of each task, in the order they are graded (the catalogue names them by these).
CREATE = (CREATE_VALUES, CREATE_SIZES)
CAUSAL = (CAUSAL_WEIGHTS, CAUSAL_OUTPUT, CAUSAL_NO_FUTURE, CAUSAL_BATCHED)
# Graded last, and named by their own catalogue entry only: what a function does to its arguments.
ARGUMENTS = (CAUSAL_ARGUMENTS,)
CHECKS = [*CREATE, *CAUSAL, *ARGUMENTS]


EXERCISE = Exercise(
    stem="causal_mask", title="The causal mask", order=3,
    returns={"create_causal_mask": "array", "causal_attention": PAIR},
    provided=("attention",),
    checks=CHECKS,
    observe={"create_causal_mask": observations.mask_entries(),
             "causal_attention": observations.attention(causal=True)},
    pictures={"causal_attention": "weights"},
    catalogue=f"{__name__}.misconceptions",
    written=(WrittenQuestion(
        "written_what_causal_mask_prevents", 2,
        "## Written question (manually graded, 2 points)\n\n"
        "What does the causal mask prevent, and why does a model that is trained to predict the next "
        "token need it? What would go wrong at training time and at generation time without it?",
        "It prevents position $i$ from attending to any position $j > i$: the weights above the diagonal are "
        "exactly 0 (the scores are set to a large negative number before the softmax), so a token's output "
        "depends only on itself and the tokens before it. When a model is trained to predict token $i+1$ "
        "from the tokens up to $i$, all positions are trained at once on the whole sequence; without the mask, "
        "position $i$ could simply look at token $i+1$ and copy it, so the training loss would be low while "
        "nothing useful is learned (information leaks from the future). At generation time the future tokens "
        "do not exist yet, so such a model would meet inputs unlike those it was trained on and fail."),),
)
