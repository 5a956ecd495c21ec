"""A student's variant: their own numbers, drawn from the course and their id, vetted by the reference.

The draw is keyed by a hash of the course's identity (its title, assignment and seed), the student's
id and, when course.yml names `variants.secret_env`, that environment variable's value: the same
inputs give the same numbers on every machine and path (numpy's PCG64 stream is fixed for a
seed), and without the secret a student id alone does not give them. A draw the reference finds
unfit to teach with (ties, a uniform or one-hot softmax, a mistake that gives the right answer)
is drawn again from the same stream, so the redraw is as deterministic as the draw.
"""

from __future__ import annotations

import hashlib
import math
import os
from dataclasses import dataclass
from functools import lru_cache

import numpy as np

from autograder.config.course import CourseConfig

Matrix = tuple[tuple[float, ...], ...]

# Part A: small integers; Part B: one decimal in [0, 1], as the course's own numbers are.
PART_A_Q_K = (0, 2)             # the smallest and largest integer
PART_A_V = (0, 3)
PART_B_TENTHS = 10
MAX_DRAWS = 200                 # a stream that never gives a fit variant is a bug, said loudly

# What the reference demands of a variant (why: docs/variants.md, "how variants are drawn").
MIN_SPREAD = 0.05               # a row's largest and smallest weight at least this far apart: not uniform
MIN_WEIGHT_GAP = 0.01           # any two weights of a row at least this far apart: no tie at 2 decimals
MAX_WEIGHT = 0.9                # no weight above this: not one-hot
MIN_SCORE_GAP = 0.05            # Part B: two scores of a row at least this far apart
MISTAKE_MARGIN = 3              # a mistake's answer differs from the key by this many hand tolerances


class VariantError(Exception):
    """A variant cannot be drawn (a secret named in course.yml is not set)."""


@dataclass(frozen=True)
class Variant:
    """One student's numbers. The contract's names stay; only the values change."""
    student: str
    q: Matrix                   # Part A: Q, K, V (2x2, small integers)
    k: Matrix
    v: Matrix
    x: Matrix                   # Part B: the "cat sat mat" embeddings (3x4, one decimal)
    seed_offset: int            # added to the course's seed for the code checks' random inputs
    seed: int                   # the code checks' seed (the course's when `code` does not vary)
    redraws: int = 0            # draws the reference turned down before this one

    def hand_inputs(self) -> dict[str, np.ndarray]:
        return {"Q": np.array(self.q, dtype=np.float64), "K": np.array(self.k, dtype=np.float64),
                "V": np.array(self.v, dtype=np.float64), "X": np.array(self.x, dtype=np.float64)}


def course_identity(course: CourseConfig) -> str:
    return f"{course.course}\0{course.assignment}\0{course.seed}"


def _secret(course: CourseConfig) -> str:
    name = course.variants.secret_env
    if name is None:
        return ""
    value = os.environ.get(name)
    if not value:
        raise VariantError(f"course.yml: variants.secret_env names {name}, which is not set here; the variants "
                           f"cannot be drawn without it (set it, as on the machine the handouts were made on)")
    return value


def variant_of(course: CourseConfig, student: str) -> Variant:
    """The student's variant of a course with variants on (`autograder.variants.variant_for`)."""
    return draw(course_identity(course), str(student), _secret(course), course.seed,
                "hand" in course.variants.vary, "code" in course.variants.vary, course.tolerances.hand)


@lru_cache(maxsize=4096)
def draw(identity: str, student: str, secret: str, course_seed: int, vary_hand: bool, vary_code: bool,
         hand_tolerance: float) -> Variant:
    digest = hashlib.sha256("\0".join(("attnkit-variant-1", identity, student, secret)).encode()).digest()
    rng = np.random.default_rng(int.from_bytes(digest, "big"))
    offset = int(rng.integers(1, 2**31))
    seed = (course_seed + offset) % 2**63 if vary_code else course_seed
    if not vary_hand:
        from reference.hand_computation import K_A, Q_A, V_A, X_CSM

        return Variant(student, _frozen(Q_A), _frozen(K_A), _frozen(V_A), _frozen(X_CSM), offset, seed)
    # Candidates are drawn and vetted a batch at a time (numpy over the batch); the first fit one of
    # each part is taken, then the reference's mistakes are tried on the pair, and a part they turn
    # down is replaced by its next fit candidate.
    turned_down = [0]
    part_a, part_b = _fit_stream(rng, "A", turned_down), _fit_stream(rng, "B", turned_down)
    a, x = next(part_a), next(part_b)
    for _ in range(MAX_DRAWS):
        found = _mistakes_indistinct(*a, *x, hand_tolerance)
        if not found:
            return Variant(student, *(_frozen(m) for m in (*a, *x)), offset, seed, turned_down[0])
        turned_down[0] += 1
        if any(p.part == "A" for p in found):
            a = next(part_a)
        if any(p.part == "B" for p in found):
            x = next(part_b)
    raise AssertionError(f"no fit variant in {MAX_DRAWS} tries for {student!r}: the vetting rules are too tight")


def _fit_stream(rng: np.random.Generator, part: str, turned_down: list[int]):
    """The fit candidates of one part, in the order drawn (a batch at a time, while more are asked for)."""
    for _ in range(MAX_DRAWS):
        batch = _draw_part_a(rng, BATCH) if part == "A" else (_draw_part_b(rng, BATCH),)
        failed = np.zeros(BATCH, dtype=bool)
        for bad in _rules(batch, part).values():
            failed |= bad
        turned_down[0] += int(failed.sum())
        for i in np.flatnonzero(~failed):
            yield tuple(m[i] for m in batch)
    raise AssertionError(f"no fit candidate for Part {part} in {MAX_DRAWS} batches")


BATCH = 16


def _draw_part_a(rng: np.random.Generator, n: int) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    q_k = rng.integers(PART_A_Q_K[0], PART_A_Q_K[1] + 1, (2, n, 2, 2))
    return q_k[0], q_k[1], rng.integers(PART_A_V[0], PART_A_V[1] + 1, (n, 2, 2))


def _draw_part_b(rng: np.random.Generator, n: int) -> np.ndarray:
    return rng.integers(0, PART_B_TENTHS + 1, (n, 3, 4)) / PART_B_TENTHS


def _frozen(matrix) -> Matrix:
    return tuple(tuple(round(float(value), 1) for value in row) for row in np.asarray(matrix, dtype=np.float64))


def _softmax_rows(scores: np.ndarray) -> np.ndarray:
    e = np.exp(scores - scores.max(axis=-1, keepdims=True))
    return e / e.sum(axis=-1, keepdims=True)


@dataclass(frozen=True)
class Problem:
    part: str                   # "A" or "B": the part drawn again
    text: str

    def __str__(self) -> str:
        return f"Part {self.part}: {self.text}"


def problems(q, k, v, x, hand_tolerance: float = 0.006) -> list[Problem]:
    """Why these numbers would not teach what the exercise teaches (empty: they are fit). Checked
    with the reference's own keys and its mistakes' answers (autograder/checks/hand_computation/mutants.py)."""
    q, k, v, x = (np.asarray(a, dtype=np.float64) for a in (q, k, v, x))
    found = [Problem(part, text) for part, batch in (("A", (q[None], k[None], v[None])), ("B", (x[None],)))
             for text, bad in _rules(batch, part).items() if bad[0]]
    return found or _mistakes_indistinct(q, k, v, x, hand_tolerance)


def _rules(batch: tuple[np.ndarray, ...], part: str) -> dict[str, np.ndarray]:
    """Each rule's verdict on every candidate of a batch (True: the candidate breaks it). Part A's
    batch is (Q, K, V), Part B's (X,), each of shape (n, rows, columns)."""
    names = ("Q", "K", "V") if part == "A" else ("X",)
    rules = {f"two rows of {name} are equal": _equal_rows(m) for name, m in zip(names, batch)}
    queries = batch[0]
    rules["a query is all zeros"] = (queries == 0).all(axis=-1).any(axis=-1)
    keys = batch[1] if part == "A" else batch[0]
    scores = queries @ keys.transpose(0, 2, 1)
    weights = _softmax_rows(scores / math.sqrt(queries.shape[-1]))
    rules["a row of weights is nearly uniform"] = (weights.max(-1) - weights.min(-1)).min(-1) < MIN_SPREAD
    rules["two weights of a row tie"] = _smallest_gap(weights) < MIN_WEIGHT_GAP
    rules["a row of weights is nearly one-hot"] = weights.max(axis=(-1, -2)) > MAX_WEIGHT
    if part == "B":
        rules["two scores of a row tie"] = _smallest_gap(scores) < MIN_SCORE_GAP
    return rules


def _equal_rows(m: np.ndarray) -> np.ndarray:
    rows = m.shape[1]
    same = (m[:, :, None, :] == m[:, None, :, :]).all(-1)
    return same[:, ~np.eye(rows, dtype=bool)].any(-1)


def _smallest_gap(m: np.ndarray) -> np.ndarray:
    """The smallest distance between two entries of one row, per candidate."""
    cols = m.shape[-1]
    gaps = np.abs(m[..., :, None] - m[..., None, :])[..., ~np.eye(cols, dtype=bool)]
    return gaps.min(axis=(-1, -2))


def _mistakes_indistinct(q, k, v, x, hand_tolerance: float) -> list[Problem]:
    """A mistake the exercise names (no scaling, d_k for sqrt(d_k), the softmax over columns) must
    give answers that differ from the key by more than the hand tolerance: else it earns the points."""
    from reference.hand_computation import keys_for
    from autograder.checks.hand_computation.mutants import wrong_values

    inputs = {"Q": q, "K": k, "V": v, "X": x}
    key = keys_for(q, k, v, x)
    found = []
    for mistake, kwargs in (("no scaling", {"scale": "none"}), ("d_k for sqrt(d_k)", {"scale": "dk"}),
                            ("the softmax over columns", {"axis": 0})):
        wrong = wrong_values(inputs, **kwargs)
        for part, names in (("A", ("WEIGHTS", "OUTPUT")), ("B", ("CSM_WEIGHTS", "CSM_OUTPUT"))):
            if all(np.abs(np.asarray(wrong[n]) - key[n]).max() <= MISTAKE_MARGIN * hand_tolerance for n in names):
                found.append(Problem(part, f"{mistake} gives the right answer within the tolerance"))
    return found
