"""`attnkit practice hand_computation`: the hand computation on fresh numbers, checked step by step.

The numbers are drawn as a graded variant is (autograder/variants/draw.py: vetted by the reference)
but from a practice seed, never from the student's id: practising touches nothing that is graded.
Each step is compared with the key; at the first wrong one the student is told which step, what
a known mistake would have given (no scaling, d_k for sqrt(d_k), the softmax over columns: the
catalogue's hints), or, when none fits, that the step does not follow from their previous one.
In a notebook: `from autograder.variants.practice import practice; print(practice(seed=1, answers={...}))`.
"""

from __future__ import annotations

import ast
import secrets
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from autograder.variants.draw import Variant, draw

STEPS = ("SCORES", "SCALED_SCORES", "WEIGHTS", "OUTPUT", "CSM_SCORES", "CSM_WEIGHTS", "CSM_OUTPUT")
WHAT = {"SCORES": "Q @ K^T", "SCALED_SCORES": "SCORES / sqrt(d_k)", "WEIGHTS": "the row-wise softmax of SCALED_SCORES",
        "OUTPUT": "WEIGHTS @ V", "CSM_SCORES": "X @ X^T", "CSM_WEIGHTS": "the row-wise softmax of CSM_SCORES / sqrt(4)",
        "CSM_OUTPUT": "CSM_WEIGHTS @ X"}
# The hand computation's mistakes that a step can show (autograder/checks/hand_computation/mutants.py's arguments).
MISTAKES = (("no_scaling", {"scale": "none"}), ("scaled_by_dk", {"scale": "dk"}), ("softmax_wrong_axis", {"axis": 0}))
TOLERANCE = 0.006
FIRST_STEPS = ("SCORES", "CSM_SCORES")      # computed from the inputs, not from an earlier step


@dataclass(frozen=True)
class StepVerdict:
    name: str
    right: bool
    explanation: str = ""      # for the first wrong step: what went wrong


def practice_variant(seed: int) -> Variant:
    return draw("attnkit-practice", str(seed), "", 0, True, False, TOLERANCE)


def numbers_text(variant: Variant) -> str:
    rows = lambda m: "[" + ", ".join("[" + ", ".join(f"{x:g}" for x in r) + "]" for r in m) + "]"  # noqa: E731
    return (f"Part A (d_k = 2):  Q = {rows(variant.q)}   K = {rows(variant.k)}   V = {rows(variant.v)}\n"
            f"Part B (d_k = 4):  X = {rows(variant.x)}   (cat, sat, mat; Q = K = V = X)")


def _mistake_hint(mis_id: str) -> str:
    from autograder.checks.hand_computation.misconceptions import CATALOGUE

    return next(m.hint for m in CATALOGUE if m.id == mis_id and m.stem == "hand_computation")


def judge(variant: Variant, answers: dict[str, object]) -> list[StepVerdict]:
    """The steps in order up to the first wrong or missing one (that one explained)."""
    from reference.hand_computation import hand_answers
    from autograder.checks.hand_computation.mutants import wrong_values

    inputs = variant.hand_inputs()
    key = hand_answers(inputs)
    verdicts = []
    for name in STEPS:
        given = answers.get(name)
        if given is None:
            verdicts.append(StepVerdict(name, False, f"{name} is not given yet: compute {WHAT[name]}."))
            return verdicts
        try:
            got = np.asarray(given, dtype=np.float64)
        except (TypeError, ValueError):
            verdicts.append(StepVerdict(name, False, f"{name} is not a matrix of numbers (nested lists)."))
            return verdicts
        if got.shape != key[name].shape:
            verdicts.append(StepVerdict(name, False, f"{name} has shape {got.shape}; {WHAT[name]} has shape "
                                                     f"{key[name].shape}."))
            return verdicts
        if np.all(np.abs(got - key[name]) <= TOLERANCE):
            verdicts.append(StepVerdict(name, True))
            continue
        for mis_id, kwargs in MISTAKES:
            if np.all(np.abs(got - np.asarray(wrong_values(inputs, **kwargs)[name])) <= TOLERANCE):
                verdicts.append(StepVerdict(name, False, f"{name} is what {mis_id.replace('_', ' ')} gives. "
                                                         f"{_mistake_hint(mis_id)}"))
                return verdicts
        if name == "SCORES" and np.all(np.abs(got - inputs["Q"] @ inputs["K"]) <= TOLERANCE):
            verdicts.append(StepVerdict(name, False, (
                "SCORES is Q @ K, not Q @ K^T: entry (i, j) is the dot product of row i of Q with row j of K "
                "(the transpose turns K's rows into columns).")))
            return verdicts
        worst = np.unravel_index(np.argmax(np.abs(got - key[name])), got.shape)
        source = "the inputs" if name in FIRST_STEPS else "your previous steps (which are right)"
        verdicts.append(StepVerdict(name, False, (
            f"{name} is the first wrong step: it should be {WHAT[name]}, from {source}. Look at entry "
            f"{list(map(int, worst))}: recompute it one product at a time.")))
        return verdicts
    return verdicts


def practice(seed: int | None = None, answers: dict[str, object] | None = None) -> str:
    """The numbers of practice `seed` and, given answers, the verdict on each step (for a notebook cell)."""
    seed = secrets.randbelow(10**6) if seed is None else seed
    variant = practice_variant(seed)
    lines = [f"Practice numbers (seed {seed}):", numbers_text(variant)]
    if answers is not None:
        lines += [_verdict_line(v) for v in judge(variant, answers)]
    return "\n".join(lines)


def _verdict_line(v: StepVerdict) -> str:
    return f"  {v.name}: right" if v.right else f"  {v.name}: {v.explanation}"


def _answers_in(path: Path) -> dict[str, object]:
    """The step names assigned in a .py file, read as literals (the file is never run)."""
    tree = ast.parse(Path(path).read_text(encoding="utf-8"))
    found = {}
    for node in tree.body:
        if isinstance(node, ast.Assign) and len(node.targets) == 1 and isinstance(node.targets[0], ast.Name):
            if node.targets[0].id in STEPS:
                try:
                    found[node.targets[0].id] = ast.literal_eval(node.value)
                except ValueError:
                    pass
    return found


def cmd_practice(args, console) -> int:
    seed = secrets.randbelow(10**6) if args.seed is None else args.seed
    variant = practice_variant(seed)
    console.print(f"Practice numbers (seed {seed}; `attnkit practice hand_computation --seed {seed}` gives them "
                  f"again). Nothing here is graded.", markup=False)
    console.print(numbers_text(variant), markup=False)
    if args.answers:
        verdicts = judge(variant, _answers_in(Path(args.answers)))
        for v in verdicts:
            console.print(_verdict_line(v), markup=False)
        return 0 if len(verdicts) == len(STEPS) and all(v.right for v in verdicts) else 1
    answers: dict[str, object] = {}
    for name in STEPS:      # one step at a time: the first wrong one is explained, and asked again
        while True:
            try:
                text = input(f"{name} = {WHAT[name]}, as nested lists: ")
            except EOFError:
                return 1
            try:
                answers[name] = ast.literal_eval(text.strip())
            except (ValueError, SyntaxError):
                console.print("  not a nested list of numbers, e.g. [[1.0, 2.0], [0.5, 1.5]]", markup=False)
                continue
            verdict = judge(variant, answers)[-1]
            console.print(_verdict_line(verdict), markup=False)
            if verdict.right:
                break
    console.print("Every step is right.", markup=False)
    return 0
