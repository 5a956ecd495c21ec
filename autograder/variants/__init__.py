"""Per-student variants (issue 20): each student's numbers from the course and their id.

`draw`: the Variant and how it is drawn and vetted; `keys`: each student's answer key;
`listing`: `attnkit variants --roster`; `handout`: per-student handouts; `practice`: fresh numbers to drill on.
"""

from autograder.variants.draw import Variant, VariantError, variant_for

__all__ = ["Variant", "VariantError", "variant_for"]
