"""The checks of every exercise, by stem, in the order they are graded and reported."""

from __future__ import annotations

from autograder.checks import attention, causal_mask, hand_computation, multihead, scaling
from autograder.checks.base import Check

CHECKS: dict[str, list[Check]] = {
    "hand_computation": hand_computation.CHECKS,
    "attention": attention.CHECKS,
    "causal_mask": causal_mask.CHECKS,
    "scaling": scaling.CHECKS,
    "multihead": multihead.CHECKS,
}


def check_ids() -> dict[str, list[str]]:
    return {stem: [c.id for c in checks] for stem, checks in CHECKS.items()}
