"""The hand computation's steps weighed together: each wrong answer is told at its origin, once.

A step's answer is computed from the student's own previous answer (SCALED_SCORES from SCORES,
WEIGHTS from SCALED_SCORES, OUTPUT from WEIGHTS; Part B alike). A wrong answer that follows from
the student's own wrong previous one is that one's mistake carried: it is explained by the step
where the error started, its origin, with the same words, so the pages tell the chain as one
cause. At an origin the error is named by what the student's own numbers show:

- every entry is off by no more than rounding: imprecise (`hand_imprecise`), and only then;
- the answer is exact for another scale (sqrt(3) for sqrt(4), d_k, no scale): that scale is named
  (`scaled_by_wrong_size`, `scaled_by_dk`, `no_scaling`);
- a mistake the catalogue's mutants name on this check (a softmax down the columns, inputs in
  another order): kept;
- rows of weights that are the softmax's exponentials not divided by their row's sum, or rows of
  the output computed from such rows: weights not normalised (`weights_not_normalised`);
- some entries are wrong and the others follow: a slip, named where it is (which row, which
  product: `hand_slip_carried`);
- anything else: what was seen in the answer, with no name the student's numbers rule out.

"Exact" is within the course's hand tolerance plus half a unit of the last decimal typed.
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np

from autograder.judge.hand import IMPRECISE_TIMES, off_by_more_than_rounding as _off
from autograder.checks.misconception import Diagnosis, candidates
from reference.attention import softmax
from autograder.judge.words import noun

# name -> (part, the answer it is computed from (None: the inputs), how)
STEPS = {
    "SCORES": ("A", None, "scores"), "SCALED_SCORES": ("A", "SCORES", "scaled"),
    "WEIGHTS": ("A", "SCALED_SCORES", "softmax"), "OUTPUT": ("A", "WEIGHTS", "values"),
    "CSM_SCORES": ("B", None, "scores"), "CSM_WEIGHTS": ("B", "CSM_SCORES", "scaled_softmax"),
    "CSM_OUTPUT": ("B", "CSM_WEIGHTS", "values"),
}
FALLBACK = ("hand_slip_carried", "hand_imprecise")    # the per-check guesses the chain decides instead


def explain_together(found: dict[str, Diagnosis | None], record, expected_of,
                     key_names: dict[str, str]) -> dict[str, Diagnosis | None]:
    """The diagnosis of each failed hand check, weighed with the student's other answers
    (`record`: explain.Record; `expected_of(check)` -> (inputs, expected, ctx); `key_names`: check
    id -> the contract name it grades). Checks it has no better word for keep theirs (found)."""
    by_name = {key_names[c.id]: c for c in record.graded if c.id in key_names}
    if not by_name:
        return {}
    passed = {c.id for c in record.passed}
    answers: dict[str, np.ndarray | None] = {}
    keys: dict[str, np.ndarray] = {}
    ctx = None
    for name, check in by_name.items():
        inputs, expected, check_ctx = expected_of(check)
        keys[name] = np.asarray(expected, dtype=np.float64)
        failed = record.failed.get(check.id)
        answer = keys[name] if check.id in passed else (failed[1] if failed else None)
        answers[name] = _array(answer, keys[name].shape)
        ctx = ctx or (failed[2] if failed else check_ctx)
    given = _inputs(inputs)
    tol = ctx.course.tolerances.hand
    told: dict[str, Diagnosis | None] = {}
    for part in ("A", "B"):
        origin_of: dict[str, str] = {}
        for name in [n for n, (p, _, _) in STEPS.items() if p == part and n in by_name]:
            check, answer = by_name[name], answers[name]
            if check.id in passed or answer is None:
                continue
            before = STEPS[name][1]
            own = _step(name, answers, given)
            if before in origin_of and own is not None and _fits(answer, own, tol):
                origin_of[name] = origin_of[before]          # carried from the step before
                continue
            origin_of[name] = name
        for origin in dict.fromkeys(origin_of.values()):
            carried = [n for n, o in origin_of.items() if o == origin and n != origin]
            said = _at_origin(origin, carried, answers, keys, given, tol, found.get(by_name[origin].id),
                              by_name[origin])
            for name in (origin, *carried):
                told[by_name[name].id] = said
    return told


def _array(value: Any, shape: tuple) -> np.ndarray | None:
    try:
        a = np.asarray(value, dtype=np.float64)
    except (TypeError, ValueError):
        return None
    return a if a.shape == shape and np.isfinite(a).all() else None


def _inputs(inputs: dict) -> dict[str, np.ndarray]:
    """Q, K, V and X: a student's variant's, or the course's own numbers (no inputs)."""
    from autograder.checks.hand_computation.mutants import COURSE_INPUTS

    return {k: np.asarray(inputs.get(k, COURSE_INPUTS[k]), dtype=np.float64) for k in "QKVX"}


def _part_inputs(name: str, given: dict) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    return (given["Q"], given["K"], given["V"]) if STEPS[name][0] == "A" else (given["X"],) * 3


def _step(name: str, answers: dict, given: dict, scale: float | None = None) -> np.ndarray | None:
    """What step `name` gives from the student's own previous answer (divided by `scale` where the
    step scales, sqrt(d_k) unless given); None when that answer is missing."""
    _, before, how = STEPS[name]
    Q, K, V = _part_inputs(name, given)
    if before is None:
        return Q @ K.T
    previous = answers.get(before)
    if previous is None:
        return None
    scale = math.sqrt(Q.shape[-1]) if scale is None else scale
    with np.errstate(all="ignore"):
        if how == "scaled":
            return previous / scale
        if how == "softmax":
            return softmax(previous, axis=-1)
        if how == "scaled_softmax":
            return softmax(previous / scale, axis=-1)
        return previous @ V


def _fits(answer: np.ndarray, target: np.ndarray, tol: float) -> bool:
    return not _off(answer, target, tol).any()


def _at_origin(name: str, carried: list[str], answers: dict, keys: dict, given: dict, tol: float,
               found: Diagnosis | None, check) -> Diagnosis | None:
    answer, own = answers[name], _step(name, answers, given)
    after = _carried(carried)
    # What the answer is exactly first (a catalogued mistake, another scale), imprecise only after
    scaled = _other_scale(name, answers, given, tol) if own is not None else None
    if scaled is not None:
        return _scale_said(name, *scaled, _carried(carried, "them"), check, len(_part_inputs(name, given)[0]))
    undivided = _not_normalised(name, answer, answers, given, tol) if own is not None else ""
    if undivided:
        return _said_with("weights_not_normalised", check, undivided, after)
    named = tuple(i for i in (found.ids if found else ()) if i not in FALLBACK)
    if named:          # a catalogued mistake fits (its mutants): said once for the chain
        return Diagnosis(named, "", tuple(h for i, h in zip(found.ids, found.hints) if i in named))
    if own is not None and not _off(answer, own, tol, IMPRECISE_TIMES).any():
        return _named("hand_imprecise", check)          # off by rounding alone, against its own inputs
    if own is not None:
        slip = _slip(name, answer, own, tol, after)
        if slip:
            return Diagnosis(("hand_slip_carried",), "", (slip,))
    if found is None or not found.observation:
        return None
    # an observation is said with a period after it (Diagnosis.hint): the carried steps join it
    return Diagnosis((), f"{found.observation};{after[:-1]}" if after else found.observation)


def _named(mis_id: str, check) -> Diagnosis:
    hint = next(m.hint for m in candidates(check) if m.id == mis_id)
    return Diagnosis((mis_id,), "", (hint,))


def _carried(carried: list[str], source: str = "it") -> str:
    """" SCALED_SCORES and WEIGHTS follow correctly from it." ("" when nothing is carried)."""
    if not carried:
        return ""
    names = carried[0] if len(carried) == 1 else f"{', '.join(carried[:-1])} and {carried[-1]}"
    return f" {names} follow{'s' if len(carried) == 1 else ''} correctly from {source}."


def _scales(d_k: int, rows: int) -> list[tuple[str, float]]:
    """The scales a student may have divided by instead of sqrt(d_k), the likeliest first (the
    first that fits is named): none, d_k itself, the number of rows or its square root, then any
    other small size or its square root. Named as they would write them."""
    sizes = [d_k, rows, *range(2, 2 * max(d_k, rows) + 1)]
    found = [("1", 1.0)] + [(said, value) for n in dict.fromkeys(sizes)
                            for said, value in ((f"{n}", float(n)), (f"sqrt({n})", math.sqrt(n)))]
    return [(said, value) for said, value in dict.fromkeys(found) if not math.isclose(value, math.sqrt(d_k))]


def _other_scale(name: str, answers: dict, given: dict, tol: float) -> tuple[str, float, int] | None:
    """(how the scale is written, its value, d_k) when the answer is exact for a scale other than
    sqrt(d_k) and not for sqrt(d_k); None otherwise (or where the step does not scale)."""
    if STEPS[name][2] not in ("scaled", "scaled_softmax"):
        return None
    answer = answers[name]
    Q = _part_inputs(name, given)[0]
    d_k, rows = Q.shape[-1], Q.shape[0]
    right = _step(name, answers, given)
    if _fits(answer, right, tol):
        return None
    for said, scale in _scales(d_k, rows):
        target = _step(name, answers, given, scale)
        if target is not None and _fits(answer, target, tol) and \
                np.abs(answer - right).max() > 2 * np.abs(answer - target).max() + tol:
            return said, scale, d_k
    return None


def _scale_said(name: str, said: str, scale: float, d_k: int, after: str, check, rows: int) -> Diagnosis:
    before = STEPS[name][1]
    what = f"your {before} divided by" if STEPS[name][2] == "scaled" else f"the softmax of your {before} divided by"
    if math.isclose(scale, 1.0):
        plain = f"your {before}" if STEPS[name][2] == "scaled" else f"the softmax of your {before}"
        return _said_with("no_scaling", check, f"Your {name} are {plain}, not scaled at all.", after)
    if math.isclose(scale, d_k):
        return _said_with("scaled_by_dk", check, f"Your {name} are {what} d_k = {d_k} itself.", after)
    value = "" if said.isdigit() else f" = {scale:.4g}"
    counted = f", not the number of rows ({rows})" if math.isclose(scale, math.sqrt(rows)) else ""
    return Diagnosis(("scaled_by_wrong_size",), "", (
        f"Your {name} are {what} {said}{value}, not by sqrt(d_k) = sqrt({d_k}) = {math.sqrt(d_k):.4g}: d_k is "
        f"the length of each query and key vector ({d_k} here){counted}.{after} Divide by sqrt(d_k), then redo "
        f"the steps after it.",))


def _said_with(mis_id: str, check, seen: str, after: str) -> Diagnosis:
    hint = next(m.hint for m in candidates(check) if m.id == mis_id)
    return Diagnosis((mis_id,), "", (f"{seen}{after} {hint}",))


def _slip(name: str, answer: np.ndarray, own: np.ndarray, tol: float, after: str) -> str:
    """A slip's words when the error is confined: some entries (a product, an entry, a row) are off
    by more than rounding, and the others follow exactly from the student's own numbers; which
    entries, and what they would be. "" otherwise."""
    off, big = _off(answer, own, tol), _off(answer, own, tol, IMPRECISE_TIMES)
    cells = [tuple(int(i) for i in c) for c in np.argwhere(off)]
    rows = sorted({i for i, _ in cells})
    # every wrong row (or entry) off by more than rounding, and some row right: else imprecision
    # spread over the answer, which is no slip
    if len(rows) == answer.shape[0] or not all(big[i].any() for i in rows) or \
            (len(cells) <= 2 and not all(big[c] for c in cells)):
        return ""
    before, how = STEPS[name][1], STEPS[name][2]
    if how == "scores":
        symmetric = len(cells) == 2 and cells[0] == cells[1][::-1]
        if len(cells) > 1 and not symmetric:
            return ""
        i, j = cells[0]
        a, b = ("q", "k") if STEPS[name][0] == "A" else ("x", "x")
        where = f"{name}[{i}, {j}]" + (f" and {name}[{j}, {i}]" if symmetric else "")
        return (f"{where} {'are' if symmetric else 'is'} {_num(answer[i, j])}, but the dot product of {a}_{i} and "
                f"{b}_{j} is {_num(own[i, j])}: one product is wrong.{after} Only the entries computed from it are "
                f"off (row {i}{f' and row {j}' if symmetric else ''}). Recompute that product one term at a time, "
                f"then redo the steps that follow from it.")
    if len(cells) <= 2 and how != "softmax":
        where = " and ".join(f"{name}[{i}, {j}] is {_num(answer[i, j])}" for i, j in cells)
        should = " and ".join(_num(own[i, j]) for i, j in cells)
        return (f"{where}, where your own {before} give {should}; the other entries follow from them.{after} "
                f"Recompute {'that entry' if len(cells) == 1 else 'those entries'}"
                f"{', then redo the steps after it' if after else ''}.")
    rows_said = " and ".join(str(i) for i in rows)
    return (f"{noun(len(rows), 'Row')} {rows_said} of {name} {noun(len(rows), 'does', 'do')} not follow "
            f"from your own {before}, while the other rows do.{after} Recompute {'those rows' if len(rows) > 1 else 'that row'} "
            f"step by step{', then redo the steps after it' if after else ''}.")


def _exponentials(name: str, answers: dict, given: dict) -> list[np.ndarray] | None:
    """The exponentials of the student's own scaled scores of `name`'s part, as a softmax written by
    hand leaves them before the division: e^s, and e^(s - the row's maximum). None: no scores."""
    part = STEPS[name][0]
    scaled = answers.get("SCALED_SCORES") if part == "A" else answers.get("CSM_SCORES")
    if scaled is None:
        return None
    if part == "B":
        scaled = scaled / math.sqrt(_part_inputs(name, given)[0].shape[-1])
    with np.errstate(all="ignore"):
        return [np.exp(scaled), np.exp(scaled - scaled.max(axis=-1, keepdims=True))]


def _scaled_said(name: str, given: dict) -> str:
    """The scores a part's softmax takes, as the student's answers name them."""
    return "SCALED_SCORES" if STEPS[name][0] == "A" else \
        f"CSM_SCORES / sqrt({_part_inputs(name, given)[0].shape[-1]})"


def _not_normalised(name: str, answer: np.ndarray, answers: dict, given: dict, tol: float) -> str:
    """The words for rows of weights left undivided by their row's sum (the softmax's step), or rows
    of the output computed from such rows (answer row = the exponentials' row times V): the rows
    off are each one of those exactly, and no other row is off. "" otherwise."""
    how = STEPS[name][2]
    own = _step(name, answers, given)
    exponentials = _exponentials(name, answers, given)
    if how not in ("softmax", "scaled_softmax", "values") or own is None or exponentials is None:
        return ""
    V = _part_inputs(name, given)[2]
    made = exponentials if how != "values" else [e @ V for e in exponentials]
    if any(m.shape != answer.shape for m in made):
        return ""
    rows = [i for i in range(answer.shape[0]) if _off(answer[i], own[i], tol).any()]

    def undivided(i: int) -> np.ndarray | None:
        # a row not divided by its sum carries the rounding of the numbers it came from times that sum
        return next((e[i] for e, m in zip(exponentials, made) if _fits(answer[i], m[i], tol * max(1.0, e[i].sum()))),
                    None)

    found = [undivided(i) for i in rows]
    if not rows or any(e is None for e in found):
        return ""
    sums = [float(e.sum()) for e in found]
    rows_said = " and ".join(str(i) for i in rows)
    sums_said = " and ".join(_num(t) for t in sums)
    if how != "values":
        return (f"{noun(len(rows), 'Row')} {rows_said} of {name} {noun(len(rows), 'holds', 'hold')} the exponentials "
                f"of your {_scaled_said(name, given)}, not yet divided by the row's sum ({noun(len(rows), 'it adds', 'they add')} up to "
                f"{sums_said}, not 1).")
    return (f"{noun(len(rows), 'Row')} {rows_said} of {name} {noun(len(rows), 'is', 'are')} computed from the "
            f"exponentials of the softmax step, not from your {STEPS[name][1]}: the exponentials were not divided "
            f"by the row's sum ({sums_said}).")


def _num(x: float) -> str:
    return f"{x:.4g}"
