"""Per-student variants: each student's numbers from the course and their id.

`draw`: the Variant and how it is drawn and vetted; `keys`: each student's answer key;
`listing`: `attnkit variants --roster`; `handout`: per-student handouts; `practice`: fresh numbers to drill on.
"""

from __future__ import annotations

__all__ = ["Variant", "VariantError", "variant_for"]


def variant_for(course, student: str | None):
    """The student's Variant, or None: variants disabled, or no student (the course's own numbers).
    The drawing (autograder/variants/draw.py) is imported only for a course with variants on, so
    that grading a course without them never imports it (a cold `attnkit check`)."""
    if not course.variants.enabled or not student:
        return None
    from autograder.variants.draw import variant_of

    return variant_of(course, student)


def __getattr__(name: str):
    # Imported when asked for: the command line registers `variants` and `practice` without numpy
    # or the course's types, so that `attnkit check` starts its sandbox before importing them.
    if name in __all__:
        from autograder.variants import draw

        return getattr(draw, name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
