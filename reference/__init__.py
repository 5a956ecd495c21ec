"""The kit's trusted reference implementation of the contract (docs/contract.md).

One module per exercise stem:

- ``hand_computation`` -- answer keys of the hand computation, computed (not typed in)
- ``attention``        -- ``softmax``, ``scaled_dot_product_attention``
- ``causal_mask``      -- ``create_causal_mask``, ``causal_attention``
- ``scaling``          -- ``scaling_experiment``, ``plot_scaling``
- ``multihead``        -- ``split_heads``, ``merge_heads``, ``multi_head_attention``,
  ``MultiHeadAttention`` (torch)

Importing this package imports none of them (``import reference`` is cheap).  The
modules import only numpy, torch (multihead), matplotlib (lazily, scaling), math,
typing/__future__ and their siblings through relative imports, because the sandbox
ships their source text into a child process and loads it there as a small package
(``module_sources``), so that a submission's ``from attention import softmax``
gets a correct implementation.
"""

from __future__ import annotations

from pathlib import Path

STEMS = ("hand_computation", "attention", "causal_mask", "scaling", "multihead")

# stem -> the reference stems its module imports (relative imports, one level)
DEPENDS = {
    "hand_computation": ["attention"],
    "attention": [],
    "causal_mask": ["attention"],
    "scaling": ["attention"],
    "multihead": ["attention"],
}


def module_sources() -> dict[str, str]:
    """The source text of each reference module, by stem (in ``STEMS`` order)."""
    here = Path(__file__).parent
    return {stem: (here / f"{stem}.py").read_text(encoding="utf-8") for stem in STEMS}
