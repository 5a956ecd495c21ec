"""Your own numbers for the hand computation, and fresh ones to practise on: released beside the
notebooks of an nbgrader course with variants as attnkit_variant.py (with attnkit_variant.json).

One release serves the whole class, and each student computes on their own numbers: they are drawn
here, when the notebook runs, from the student's id - the login JupyterHub gives (the id nbgrader
grades you by), or `STUDENT_ID = "..."` set in the notebook for a run elsewhere. The draw is the
kit's own (autograder/variants/draw.py, checked equal by the kit's tests): the same id gives the
same numbers on every machine, and the grader recomputes them from nbgrader's id, never from here.

`practice(seed, answers)` drills the hand computation on fresh numbers (never a graded variant) and
explains the first wrong step. Needs numpy only; IPython, when there, shows the numbers as LaTeX.
"""

from __future__ import annotations

import hashlib
import json
import math
import os
import secrets
from pathlib import Path

import numpy as np

HERE = Path(__file__).resolve().parent
SETTINGS_FILE = "attnkit_variant.json"
HUB_ENV = "JUPYTERHUB_USER"
WORDS = ("cat", "sat", "mat")

# The draw (autograder/variants/draw.py; docs/variants.md says why each rule is there).
PART_A_Q_K, PART_A_V, PART_B_TENTHS = (0, 2), (0, 3), 10
BATCH, MAX_DRAWS = 16, 200
MIN_SPREAD, MIN_WEIGHT_GAP, MAX_WEIGHT, MIN_SCORE_GAP, MISTAKE_MARGIN = 0.05, 0.01, 0.9, 0.05, 3
PRACTICE_IDENTITY, PRACTICE_TOLERANCE = "attnkit-practice", 0.006


class NoStudentId(Exception):
    """No id to draw the numbers from (not under JupyterHub, and no STUDENT_ID given)."""


def settings() -> dict:
    return json.loads((HERE / SETTINGS_FILE).read_text(encoding="utf-8"))


def student_id(explicit: str | None = None) -> str:
    """Whose numbers: `explicit` (STUDENT_ID); else the student nbgrader is grading (its folder
    autograded/<student>/<assignment>/); else JupyterHub's login."""
    if explicit:
        return str(explicit)
    here = Path.cwd().resolve()
    if here.parent.parent.name in ("autograded", "submitted") and (here.parents[2] / "nbgrader_config.py").is_file():
        return here.parent.name
    if os.environ.get(HUB_ENV):
        return os.environ[HUB_ENV]
    raise NoStudentId("No student id here (this is not JupyterHub): set STUDENT_ID = \"your id\" (the id your "
                      "course knows you by) in the cell that draws your numbers, and run it again.")


# --------------------------------------------------------------------------- the draw


def draw(identity: str, student: str, hand_tolerance: float, secret: str = "") -> dict[str, list]:
    """Q, K, V (Part A) and X (Part B) of `student`, as nested lists of floats."""
    digest = hashlib.sha256("\0".join(("attnkit-variant-1", identity, student, secret)).encode()).digest()
    rng = np.random.default_rng(int.from_bytes(digest, "big"))
    rng.integers(1, 2**31)          # the code checks' seed offset: drawn first, as the kit does
    part_a, part_b = _fit_stream(rng, "A"), _fit_stream(rng, "B")
    a, x = next(part_a), next(part_b)
    for _ in range(MAX_DRAWS):
        found = _mistakes_indistinct(*a, *x, hand_tolerance)
        if not found:
            return {name: [[round(float(v), 1) for v in row] for row in np.asarray(m, dtype=np.float64)]
                    for name, m in zip("QKVX", (*a, *x))}
        if "A" in found:
            a = next(part_a)
        if "B" in found:
            x = next(part_b)
    raise AssertionError("no fit numbers found")


def _fit_stream(rng, part: str):
    for _ in range(MAX_DRAWS):
        if part == "A":
            q_k = rng.integers(PART_A_Q_K[0], PART_A_Q_K[1] + 1, (2, BATCH, 2, 2))
            batch = (q_k[0], q_k[1], rng.integers(PART_A_V[0], PART_A_V[1] + 1, (BATCH, 2, 2)))
        else:
            batch = (rng.integers(0, PART_B_TENTHS + 1, (BATCH, 3, 4)) / PART_B_TENTHS,)
        failed = np.zeros(BATCH, dtype=bool)
        for bad in _rules(batch, part):
            failed |= bad
        for i in np.flatnonzero(~failed):
            yield tuple(m[i] for m in batch)
    raise AssertionError(f"no fit candidate for Part {part}")


def _softmax(x, axis=-1):
    e = np.exp(x - np.max(x, axis=axis, keepdims=True))
    return e / np.sum(e, axis=axis, keepdims=True)


def _rules(batch, part: str) -> list:
    rules = [_equal_rows(m) for m in batch]
    queries = batch[0]
    rules.append((queries == 0).all(axis=-1).any(axis=-1))
    keys = batch[1] if part == "A" else batch[0]
    scores = queries @ keys.transpose(0, 2, 1)
    weights = _softmax(scores / math.sqrt(queries.shape[-1]))
    rules += [(weights.max(-1) - weights.min(-1)).min(-1) < MIN_SPREAD, _smallest_gap(weights) < MIN_WEIGHT_GAP,
              weights.max(axis=(-1, -2)) > MAX_WEIGHT]
    if part == "B":
        rules.append(_smallest_gap(scores) < MIN_SCORE_GAP)
    return rules


def _equal_rows(m):
    rows = m.shape[1]
    same = (m[:, :, None, :] == m[:, None, :, :]).all(-1)
    return same[:, ~np.eye(rows, dtype=bool)].any(-1)


def _smallest_gap(m):
    cols = m.shape[-1]
    return np.abs(m[..., :, None] - m[..., None, :])[..., ~np.eye(cols, dtype=bool)].min(axis=(-1, -2))


def steps(inputs: dict, scale: str = "sqrt", axis: int = -1) -> dict[str, np.ndarray]:
    """Every answer of the hand computation on `inputs` (Q, K, V, X); with `scale` "none" or "dk" or
    `axis` 0, the answers one known mistake gives."""
    out = {}
    for prefix, (q, k, v) in (("", (inputs["Q"], inputs["K"], inputs["V"])), ("CSM_", (inputs["X"],) * 3)):
        q, k, v = (np.asarray(m, dtype=np.float64) for m in (q, k, v))
        d_k = q.shape[-1]
        scores = q @ k.T
        scaled = scores / {"sqrt": math.sqrt(d_k), "none": 1.0, "dk": float(d_k)}[scale]
        weights = _softmax(scaled, axis=axis)
        out |= {f"{prefix}SCORES": scores, f"{prefix}WEIGHTS": weights, f"{prefix}OUTPUT": weights @ v}
        if not prefix:
            out["SCALED_SCORES"] = scaled
    return out


def _mistakes_indistinct(q, k, v, x, hand_tolerance: float) -> set[str]:
    """The parts where a known mistake lands within the tolerance of the key (those are drawn again)."""
    inputs = {"Q": q, "K": k, "V": v, "X": x}
    key = steps(inputs)
    found = set()
    for kwargs in ({"scale": "none"}, {"scale": "dk"}, {"axis": 0}):
        wrong = steps(inputs, **kwargs)
        for part, names in (("A", ("WEIGHTS", "OUTPUT")), ("B", ("CSM_WEIGHTS", "CSM_OUTPUT"))):
            if all(np.abs(wrong[n] - key[n]).max() <= MISTAKE_MARGIN * hand_tolerance for n in names):
                found.add(part)
    return found


# --------------------------------------------------------------------------- your numbers, in the notebook


def my_numbers(explicit: str | None = None) -> dict[str, list]:
    s = settings()
    return draw(s["identity"], student_id(explicit), s["hand_tolerance"])


def part_a(explicit: str | None = None):
    """Your Q, K and V (shown under the cell)."""
    numbers = my_numbers(explicit)
    _show("$$" + r",\quad ".join(_latex(n, numbers[n]) for n in "QKV") + "$$",
          "\n".join(f"{n} = {numbers[n]}" for n in "QKV"))
    return numbers["Q"], numbers["K"], numbers["V"]


def part_b(explicit: str | None = None):
    """Your X, one row per word (shown under the cell as a table)."""
    x = my_numbers(explicit)["X"]
    rows = [f"| {w} | {', '.join(str(v) for v in row)} |" for w, row in zip(WORDS, x)]
    _show("\n".join(["| token | embedding |", "|---|---|", *rows]), "\n".join(r.strip("| ") for r in rows))
    return x


def _latex(name: str, matrix) -> str:
    rows = r"\\ ".join(" & ".join(f"{v:g}" for v in row) for row in matrix)
    return f"{name} = \\begin{{pmatrix}}{rows}\\end{{pmatrix}}"


def _show(markdown: str, plain: str) -> None:
    try:
        from IPython import get_ipython
        from IPython.display import Markdown, display
    except ImportError:
        get_ipython = None
    if get_ipython is not None and get_ipython() is not None:
        display(Markdown(markdown))
    elif __name__ == "__main__":
        print(plain)


# --------------------------------------------------------------------------- practice on fresh numbers

STEPS = ("SCORES", "SCALED_SCORES", "WEIGHTS", "OUTPUT", "CSM_SCORES", "CSM_WEIGHTS", "CSM_OUTPUT")
WHAT = {"SCORES": "Q @ K^T", "SCALED_SCORES": "SCORES / sqrt(d_k)", "WEIGHTS": "the row-wise softmax of SCALED_SCORES",
        "OUTPUT": "WEIGHTS @ V", "CSM_SCORES": "X @ X^T", "CSM_WEIGHTS": "the row-wise softmax of CSM_SCORES / sqrt(4)",
        "CSM_OUTPUT": "CSM_WEIGHTS @ X"}
MISTAKES = (
    ({"scale": "none"}, "no scaling: the scores were not divided by sqrt(d_k) before the softmax (d_k = 2 in Part A, "
                        "4 in Part B). Scale every score first, then take the softmax of the scaled row."),
    ({"scale": "dk"}, "scaling by d_k: the scores were divided by d_k instead of sqrt(d_k) (by 2 instead of 1.414 "
                      "in Part A, by 4 instead of 2 in Part B)."),
    ({"axis": 0}, "the softmax over columns: each column was normalised instead of each row. Row i belongs to "
                  "query i, so each row must add up to 1: exponentiate a row, then divide by that row's sum."),
)


def practice_numbers(seed: int) -> dict[str, list]:
    """Practice `seed`'s numbers: `attnkit practice hand_computation --seed SEED` gives the same."""
    return draw(PRACTICE_IDENTITY, str(seed), PRACTICE_TOLERANCE)


def judge(inputs: dict, answers: dict) -> list[tuple[str, bool, str]]:
    """(step, right, explanation) for each step in order, up to the first wrong or missing one."""
    key = steps(inputs)
    verdicts = []
    for name in STEPS:
        given = answers.get(name)
        if given is None:
            return verdicts + [(name, False, f"{name} is not given yet: compute {WHAT[name]}.")]
        try:
            got = np.asarray(given, dtype=np.float64)
        except (TypeError, ValueError):
            return verdicts + [(name, False, f"{name} is not a matrix of numbers (nested lists).")]
        if got.shape != key[name].shape:
            return verdicts + [(name, False, f"{name} has shape {got.shape}; {WHAT[name]} has shape "
                                             f"{key[name].shape}.")]
        if np.all(np.abs(got - key[name]) <= PRACTICE_TOLERANCE):
            verdicts.append((name, True, ""))
            continue
        for kwargs, why in MISTAKES:
            if np.all(np.abs(got - steps(inputs, **kwargs)[name]) <= PRACTICE_TOLERANCE):
                return verdicts + [(name, False, f"{name} is what {why}")]
        q, k = (np.asarray(inputs[n], dtype=np.float64) for n in "QK")
        if name == "SCORES" and np.all(np.abs(got - q @ k) <= PRACTICE_TOLERANCE):
            return verdicts + [(name, False, "SCORES is Q @ K, not Q @ K^T: entry (i, j) is the dot product of row i "
                                             "of Q with row j of K (the transpose turns K's rows into columns).")]
        worst = [int(i) for i in np.unravel_index(np.argmax(np.abs(got - key[name])), got.shape)]
        source = "the inputs" if name in ("SCORES", "CSM_SCORES") else "your previous steps (which are right)"
        return verdicts + [(name, False, f"{name} is the first wrong step: it should be {WHAT[name]}, from {source}. "
                                         f"Look at entry {worst}: recompute it one product at a time.")]
    return verdicts


def practice(seed: int | None = None, answers: dict | None = None) -> str:
    """Fresh numbers to drill on (seed None: new ones, with their seed to give back) and, given your
    answers by name, each step's verdict: the first wrong one explained. Nothing here is graded."""
    seed = secrets.randbelow(10**6) if seed is None else int(seed)
    numbers = practice_numbers(seed)
    rows = lambda m: "[" + ", ".join("[" + ", ".join(f"{v:g}" for v in r) + "]" for r in m) + "]"  # noqa: E731
    lines = [f"Practice numbers (seed {seed}; never graded):",
             f"Part A (d_k = 2):  Q = {rows(numbers['Q'])}   K = {rows(numbers['K'])}   V = {rows(numbers['V'])}",
             f"Part B (d_k = 4):  X = {rows(numbers['X'])}   (cat, sat, mat; Q = K = V = X)"]
    if answers and any(v is not None for v in answers.values()):
        verdicts = judge(numbers, answers)
        lines += [f"  {name}: right" if right else f"  {name}: {why}" for name, right, why in verdicts]
        if len(verdicts) == len(STEPS) and all(right for _, right, _ in verdicts):
            lines.append("Every step is right.")
    return "\n".join(lines)


if __name__ == "__main__":
    import argparse

    parser = argparse.ArgumentParser(description="Your numbers, or fresh ones to practise on (--practice).")
    parser.add_argument("--practice", action="store_true", help="fresh numbers to drill on (never graded)")
    parser.add_argument("--seed", type=int, help="the practice numbers' seed (default: new ones)")
    parser.add_argument("--student", help="your student id (default: JupyterHub's login)")
    args = parser.parse_args()
    if args.practice:
        print(practice(args.seed))
    else:
        part_a(args.student)
        part_b(args.student)
