"""The exercise contract (docs/contract.md) as data: stems, graded names, and what each returns.

The return kind tells the sandbox how to turn a submission's value into plain data:
"array" (float64 ndarray), ("tuple", k1, k2, ...), "float_dict_dict", "figure", "module".
"""

from __future__ import annotations

from reference import STEMS  # noqa: F401  (one list of stems for the kit)

PAIR = ("tuple", "array", "array")

# stem -> graded name -> return kind. Module-level constants (hand computation) are "array".
RETURNS: dict[str, dict[str, object]] = {
    "hand_computation": {
        name: "array"
        for name in ("SCORES", "SCALED_SCORES", "WEIGHTS", "OUTPUT", "CSM_SCORES", "CSM_WEIGHTS", "CSM_OUTPUT")
    },
    "attention": {"softmax": "array", "scaled_dot_product_attention": PAIR},
    "causal_mask": {"create_causal_mask": "array", "causal_attention": PAIR},
    "scaling": {"scaling_experiment": "float_dict_dict", "plot_scaling": "figure"},
    "multihead": {"split_heads": "array", "merge_heads": "array", "multi_head_attention": PAIR,
                  "MultiHeadAttention": PAIR},
}

# Which stems a submission file may import and get the kit's correct version of (so a wrong
# softmax in attention.py costs nothing elsewhere). attention.py may import none of them:
# every other stem is built on attention, and would hand it the answer.
PROVIDED: dict[str, tuple[str, ...]] = {
    "hand_computation": ("attention",),
    "attention": (),
    "causal_mask": ("attention",),
    "scaling": ("attention",),
    "multihead": ("attention", "causal_mask"),
}

TITLES: dict[str, str] = {
    "hand_computation": "Attention by hand",
    "attention": "Softmax and scaled dot-product attention",
    "causal_mask": "The causal mask",
    "scaling": "The sqrt(d_k) scaling experiment",
    "multihead": "Multi-head attention",
}
