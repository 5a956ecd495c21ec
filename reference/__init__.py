"""The kit's trusted reference implementation of the contract (docs/contract.md).

One module per exercise stem:

- ``hand_computation`` -- answer keys of the hand computation, computed (not typed in)
- ``attention``        -- ``softmax``, ``scaled_dot_product_attention``
- ``causal_mask``      -- ``create_causal_mask``, ``causal_attention``
- ``scaling``          -- ``scaling_experiment``, ``plot_scaling``
- ``multihead``        -- ``split_heads``, ``merge_heads``, ``multi_head_attention``,
  ``MultiHeadAttention`` (torch)

Importing this package imports none of them (``import reference`` is cheap).  The
modules import only numpy, torch (lazily, multihead's module), matplotlib (lazily,
scaling), math, typing/__future__ and their siblings through relative imports. They run
in the grader only: a submission's ``from attention import softmax`` gets a proxy whose
calls the grader answers with these functions; no reference code reaches a child.
"""

from __future__ import annotations

from pathlib import Path

HERE = Path(__file__).parent
# One reference module per exercise stem: the files here, in name order. Nothing else lives here:
# what diagnosis knows of wrong answers (mutants, recognisers, hints) is beside each exercise's
# checks, autograder/checks/<stem>/.
STEMS = tuple(sorted(p.stem for p in HERE.glob("*.py") if not p.stem.startswith("_")))


def _relative_imports(stem: str) -> list[str]:
    """The sibling stems a reference module imports (``from .attention import ...``)."""
    import ast

    tree = ast.parse((HERE / f"{stem}.py").read_text(encoding="utf-8"))
    return sorted({node.module.split(".")[0] for node in ast.walk(tree)
                   if isinstance(node, ast.ImportFrom) and node.level == 1 and node.module})


def __getattr__(name: str):
    # DEPENDS: stem -> the reference stems its module imports (relative imports, one level).
    # Made on first use, not on import: parsing the modules would cost every grader start.
    if name == "DEPENDS":
        globals()["DEPENDS"] = depends = {stem: _relative_imports(stem) for stem in STEMS}
        return depends
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
