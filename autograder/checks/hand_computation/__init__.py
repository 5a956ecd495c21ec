"""The hand computation exercise (hand_computation.py): numbers typed by hand, each entry within 0.006.

Its checks and descriptor are here; beside them, the mistakes it recognises: misconceptions.py
(the catalogue), mutants.py (wrong hand computations), recognisers.py (answers a little off, or
one slip carried through).
"""

from __future__ import annotations

import numpy as np

from autograder.checks.base import Check, Context, array_problem
from autograder.judge import observations
from autograder.checks.exercise import Exercise


def _hand_compare(name: str):
    def compare(answer, expected, ctx: Context) -> list[str]:
        problem = array_problem(name, answer, expected, ctx.course.tolerances.float64,
                                atol=ctx.course.tolerances.hand)
        return [problem] if problem else []
    return compare


def _hand_check(part: str, name: str, title: str) -> Check:
    """The student's value of `name`. Its inputs are empty for the course's own numbers (the
    reference's constants are the key), or a student's variant's Q, K, V and X: then the key is the
    reference's `hand_answers` of them, and a mutant's the same mistake made on them."""
    return Check(f"hand_computation.{part}.{name.lower().removeprefix('csm_')}", title,
                 inputs=lambda rng: {}, run=lambda impl, i: impl.value(name),
                 expected_run=lambda impl, i: _expected_value(impl, name, i),
                 compare=_hand_compare(name), random=False,
                 variant_inputs=lambda variant: variant.hand_inputs())


def _expected_value(impl, name: str, inputs: dict):
    if not inputs:
        return impl.value(name)
    return np.asarray(impl.hand_answers(inputs)[name], dtype=np.float64)


# What a student's own checker (the handout) can say without the answers: each step computed from
# the student's previous ones (the handout's check.py names these steps), and which answers are
# weights whose rows sum to 1. The values themselves are graded after hand-in.
SELF_CHECK_STEPS = {
    "SCALED_SCORES": ("divided_by_sqrt", "SCORES", "D_K"),
    "WEIGHTS": ("softmax", "SCALED_SCORES"),
    "OUTPUT": ("matmul", "WEIGHTS", "V"),
    "CSM_WEIGHTS": ("softmax_of_divided_by_sqrt", "CSM_SCORES", "CSM_D_K"),
    "CSM_OUTPUT": ("matmul", "CSM_WEIGHTS", "X"),
}
# The first steps, from the given inputs: check.py says only whether they were rounded early
# (their values are graded after hand-in).
ROUNDING_STEPS = {
    "SCORES": ("matmul_transposed", "Q", "K"),
    "CSM_SCORES": ("matmul_transposed", "X", "X"),
}
ROWS_SUM_TO_ONE = ("WEIGHTS", "CSM_WEIGHTS")
# The given inputs, as the student's file names them -> the reference's constant. A file written
# from scratch may leave them out: the grader needs only the answers, and check.py then takes them
# from its data (a variant's own numbers where the course draws them).
GIVEN = {"Q": "Q_A", "K": "K_A", "V": "V_A", "D_K": "D_K_A", "X": "X_CSM", "CSM_D_K": "D_K_CSM"}


def given_inputs(inputs: dict) -> dict[str, np.ndarray]:
    """The given inputs by the file's names: the course's, or a variant's `inputs` (Q, K, V, X)."""
    import importlib

    reference = importlib.import_module("reference.hand_computation")
    return {name: np.asarray(inputs.get(name, getattr(reference, constant)), dtype=np.float64)
            for name, constant in GIVEN.items()}
# The mistake of an answer off by rounding alone: check.py fails such an answer with its hint, as
# the grader does.
ROUNDED_EARLY_MISTAKE = "hand_imprecise"

PART_A_SCORES = _hand_check("part_a", "SCORES", "Part A: SCORES = Q @ K^T")
PART_A_SCALED_SCORES = _hand_check("part_a", "SCALED_SCORES", "Part A: SCALED_SCORES = SCORES / sqrt(2)")
PART_A_WEIGHTS = _hand_check("part_a", "WEIGHTS", "Part A: WEIGHTS, the row-wise softmax")
PART_A_OUTPUT = _hand_check("part_a", "OUTPUT", "Part A: OUTPUT = WEIGHTS @ V")
PART_B_SCORES = _hand_check("part_b", "CSM_SCORES", "Part B (cat sat mat): CSM_SCORES = X @ X^T")
PART_B_WEIGHTS = _hand_check("part_b", "CSM_WEIGHTS", "Part B: CSM_WEIGHTS, softmax of the scores / sqrt(4)")
PART_B_OUTPUT = _hand_check("part_b", "CSM_OUTPUT", "Part B: CSM_OUTPUT = CSM_WEIGHTS @ X")


# The checks of each part, in the order they are graded (the catalogue names them by these).
PART_A = (PART_A_SCORES, PART_A_SCALED_SCORES, PART_A_WEIGHTS, PART_A_OUTPUT)
PART_B = (PART_B_SCORES, PART_B_WEIGHTS, PART_B_OUTPUT)
CHECKS = [*PART_A, *PART_B]


EXERCISE = Exercise(
    stem="hand_computation", title="Attention by hand", order=1,
    returns={name: "array" for name in ("SCORES", "SCALED_SCORES", "WEIGHTS", "OUTPUT", "CSM_SCORES",
                                         "CSM_WEIGHTS", "CSM_OUTPUT")},
    provided=("attention",),
    checks=CHECKS,
    observe={"part_a": observations.hand_values(), "part_b": observations.hand_values(prefix="CSM_")},
    pictures={"part_a.weights": "weights", "part_b.weights": "weights"},
    catalogue=f"{__name__}.misconceptions",
    hooks=("hand_answers",),
    together=lambda found, record, expected_of: _chain().explain_together(found, record, expected_of, KEY_NAMES),
)


def _chain():
    """chain.py, imported where a hand answer failed (only that needs it)."""
    from autograder.checks.hand_computation import chain

    return chain

# The contract name each check grades (for the variants' answer keys and the integrity flags).
KEY_NAMES = {check.id: name for check, name in zip(CHECKS, (
    "SCORES", "SCALED_SCORES", "WEIGHTS", "OUTPUT", "CSM_SCORES", "CSM_WEIGHTS", "CSM_OUTPUT"))}
