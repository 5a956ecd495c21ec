"""Each student's answer key of the hand computation, computed by the reference from their variant."""

from __future__ import annotations

from functools import lru_cache

import numpy as np

from autograder.config.course import CourseConfig
from autograder.variants import variant_for
from autograder.variants.draw import Variant


def answer_key(variant: Variant | None) -> dict[str, np.ndarray]:
    """The hand computation's answers by contract name: the variant's, or the course's own (None)."""
    return dict(_key(variant))


@lru_cache(maxsize=4096)
def _key(variant: Variant | None) -> tuple[tuple[str, np.ndarray], ...]:
    from reference.hand_computation import answer_keys, hand_answers

    keys = answer_keys() if variant is None else hand_answers(variant.hand_inputs())
    for value in keys.values():
        value.setflags(write=False)        # shared by every caller of the cache
    return tuple(keys.items())


def key_for(course: CourseConfig, student: str | None) -> dict[str, np.ndarray]:
    return answer_key(variant_for(course, student))
