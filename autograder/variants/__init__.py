"""Per-student variants (issue 20): each student's numbers from the course and their id.

`draw`: the Variant and how it is drawn and vetted; `keys`: each student's answer key;
`listing`: `attnkit variants --roster`; `handout`: per-student handouts; `practice`: fresh numbers to drill on.
"""

__all__ = ["Variant", "VariantError", "variant_for"]


def __getattr__(name: str):
    # Imported when asked for: the command line registers `variants` and `practice` without numpy
    # or the course's types, so that `attnkit check` starts its sandbox before importing them.
    if name in __all__:
        from autograder.variants import draw

        return getattr(draw, name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
