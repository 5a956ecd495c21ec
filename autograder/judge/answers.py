"""What differs and where, and which known mistake gives your answer: check.py's comparisons.

The grader says the same sentences: autograder/checks/base.py imports them from here. Needs numpy.
"""

from __future__ import annotations

from dataclasses import dataclass
from types import SimpleNamespace
from typing import Any, Callable

import numpy as np

from .raised import explaining
from .words import counted


@dataclass(frozen=True)
class Tolerance:
    """How close a number must be: `rtol` relative, `atol` absolute."""
    rtol: float
    atol: float


def _fmt_index(name: str, idx: tuple) -> str:
    return f"{name}[{', '.join(str(int(i)) for i in idx)}]" if idx else name


def _fmt(x: float) -> str:
    return f"{x:.6g}"


def array_problem(name: str, got, expected, tol, *, atol: float | None = None) -> str | None:
    """None when `got` matches `expected`; otherwise one sentence that says where it does not."""
    got = np.asarray(got, dtype=np.float64)
    expected = np.asarray(expected, dtype=np.float64)
    if got.shape != expected.shape:
        hint = ""
        if sorted(got.shape) == sorted(expected.shape):
            hint = " (the same sizes in another order: an axis is swapped)"
        return f"{name} has shape {got.shape}, expected {expected.shape}{hint}"
    bad = ~np.isfinite(got) & np.isfinite(expected)
    if bad.any():
        idx = tuple(np.argwhere(bad)[0])
        return (f"{_fmt_index(name, idx)} is {got[idx]} ({int(bad.sum())} of {got.size} entries are not finite)")
    a_tol = tol.atol if atol is None else atol
    r_tol = tol.rtol if atol is None else 0.0
    close = _isclose(got, expected, r_tol, a_tol)
    if close.all():
        return None
    err = np.where(close, 0.0, np.abs(got - expected))
    idx = tuple(np.unravel_index(int(np.argmax(err)), err.shape)) if err.ndim else ()
    n_bad = int((~close).sum())
    tol_text = f"atol={a_tol:g}" if atol is not None else f"rtol={r_tol:g}, atol={a_tol:g}"
    return (f"{n_bad} of {got.size} entries of {name} differ; the largest difference is at "
            f"{_fmt_index(name, idx)}: expected {_fmt(expected[idx])}, got {_fmt(got[idx])} ({tol_text})")


def arrays_agree(got, expected, tol) -> bool:
    """`array_problem(name, got, expected, tol) is None`, without the sentence: diagnosis asks it of
    every mutant's answer, and most of them disagree (the sentence was most of the cost)."""
    got = np.asarray(got, dtype=np.float64)
    expected = np.asarray(expected, dtype=np.float64)
    if got.shape != expected.shape or (~np.isfinite(got) & np.isfinite(expected)).any():
        return False
    return bool(_isclose(got, expected, tol.rtol, tol.atol).all())


def _isclose(got: np.ndarray, expected: np.ndarray, rtol: float, atol: float) -> np.ndarray:
    """np.isclose(got, expected, rtol, atol, equal_nan=True), in one expression where every value
    is finite (where it is the same test: |got - expected| <= atol + rtol * |expected|): numpy's
    own is slow on the small arrays the checks compare, a few times per check."""
    if np.isfinite(got).all() and np.isfinite(expected).all():
        return np.abs(got - expected) <= atol + rtol * np.abs(expected)
    return np.isclose(got, expected, rtol=rtol, atol=atol, equal_nan=True)


def all_close(a, b, rtol: float = 1e-05, atol: float = 1e-08, equal_nan: bool = False) -> bool:
    """np.allclose(a, b, rtol, atol, equal_nan), by one expression where every value is finite
    (numpy's own test there, in the same dtypes): the property checks ask it of small arrays many
    times per submission, and numpy's general path costs more than the arithmetic."""
    x = np.asarray(a)
    y = np.asarray(b)
    # a Python number is weak in numpy's arithmetic (it takes the array's dtype): numpy's own path
    if x.dtype.kind == "f" and y.dtype.kind in "fiu" and not isinstance(b, (int, float)):
        y = y.astype(np.result_type(y, 1.0), copy=False)
        if np.isfinite(x).all() and np.isfinite(y).all():
            with np.errstate(all="ignore"):     # x - y past float range: the test is then False
                return bool((np.abs(x - y) <= atol + rtol * np.abs(y)).all())
    return bool(np.allclose(a, b, rtol=rtol, atol=atol, equal_nan=equal_nan))


def near_one(x: float) -> str:
    """A sum that should be 1, with enough digits to show that it is not: 0.9995, not "1"."""
    for digits in (4, 6, 8):
        text = f"{x:.{digits}g}"
        if text != "1":
            return text
    return repr(float(x))


def weights_problem(name: str, got, row_atol: float = 1e-4) -> str | None:
    """Properties every attention-weight array has, checked before the values: they say more.
    `row_atol`: how far from 1 a row's sum may be."""
    got = np.asarray(got, dtype=np.float64)
    if got.ndim == 0 or not np.isfinite(got).all():
        return None
    sums = got.sum(axis=-1)
    off = ~_isclose(sums, np.ones_like(sums), 1e-05, row_atol)     # np.isclose's rtol, its verdict
    if off.any():
        idx = tuple(int(i) for i in np.argwhere(off)[0])
        where = f"row {idx[-1]}" + (f" of batch index {idx[:-1]}" if len(idx) > 1 else "")
        return (f"{where} of your {name} sums to {near_one(sums[idx])}, not 1: each query's weights "
                f"over the keys (the last axis) must add up to 1")
    if (got < -1e-12).any():
        idx = tuple(np.argwhere(got < -1e-12)[0])
        return f"{_fmt_index(name, idx)} is negative ({got[idx]:.4g}); attention weights are probabilities"
    return None


class Reseeded(dict):
    """scaling_experiment's answer (the dict itself), with a small run for the next seed alongside:
    numbers that stay the same when the seed and n_trials change were not drawn, and earn nothing."""
    other: Any = None


def encode(value, store: Callable[[np.ndarray], str], special: Callable[[Any], Any] = lambda value: None):
    """`value` as JSON: arrays as {"array": store(array)}, tuples, dicts (keyed by d or by name) and
    Reseeded runs marked; `special(value)` says first what it knows how to write (not None)."""
    written = special(value)
    if written is not None:
        return written
    if isinstance(value, np.ndarray):
        return {"array": store(value)}
    if isinstance(value, Reseeded):
        return {"reseeded": [encode(dict(value), store, special), encode(value.other, store, special)]}
    if isinstance(value, tuple):
        return {"tuple": [encode(v, store, special) for v in value]}
    if isinstance(value, list):
        return [encode(v, store, special) for v in value]
    if isinstance(value, dict):
        int_keys = bool(value) and all(isinstance(k, (int, np.integer)) for k in value)
        return {"dict": {str(k): encode(v, store, special) for k, v in value.items()}} | (
            {"int_keys": True} if int_keys else {})
    if isinstance(value, (bool, np.bool_)):
        return bool(value)
    if isinstance(value, (int, np.integer)):
        return int(value)
    if isinstance(value, (float, np.floating)):
        return float(value)
    if value is None or isinstance(value, str):
        return value
    raise TypeError(f"a {type(value).__name__} cannot be written as data")


def decode(value, arrays: dict, results: list | None = None):
    """A JSON value of check_data with its arrays ({"array": key}), earlier calls' answers
    ({"call": n, "item": i}), tuples ({"tuple": [...]}) and Reseeded runs put back."""
    if isinstance(value, list):
        return [decode(v, arrays, results) for v in value]
    if not isinstance(value, dict):
        return value
    if "array" in value:
        return arrays[value["array"]]
    if "tuple" in value:
        return tuple(decode(v, arrays, results) for v in value["tuple"])
    if "call" in value:
        answer = results[value["call"]]
        return answer if value.get("item") is None else answer[value["item"]]
    if "reseeded" in value:
        run, other = (decode(v, arrays, results) for v in value["reseeded"])
        run = Reseeded(run)
        run.other = other
        return run
    key = int if value.get("int_keys") else str
    return {key(k): decode(v, arrays, results) for k, v in value["dict"].items()}


@dataclass
class Outcome:
    """One check of a student's self-check: its status, what is wrong, and a hint."""
    check: dict
    status: str               # passed | failed | error | not_implemented
    message: str = ""
    hint: str = ""
    mistakes: tuple = ()      # the known mistakes (their ids) whose answer is yours: the grader names them too
    answer: Any = None        # a wrong answer, weighed against the mistakes named on other checks
    told: tuple = ()          # (seen, lead, the hint of each mistake named): its hint said again with fewer


def error_hint(check: dict, event: dict, recognisers: dict) -> tuple[str, tuple[str, ...]]:
    """The hint of the error your code raised and the ids of the known mistakes that explain it, as
    the grader decides it (raised.explaining): by the error's words (`recognisers`:
    raised.RECOGNISERS), or by what their mutants raised on these inputs; else the generic
    advice."""
    kind, text = event["raised"]
    error = SimpleNamespace(type=kind, text=text, operation=event.get("operation", ""))

    def recognises(mistake: dict, raised) -> bool:
        recognise = recognisers.get(mistake.get("raised_recogniser"))
        return recognise is not None and recognise(raised)

    def raised_by(mistake: dict, torch: bool):
        if "recogniser" in mistake:          # told by its answer, as in the grader
            return None
        return [(t, words, operation) for t, words, operation, by_torch in mistake.get("raises", [])
                if torch or not by_torch]

    found = explaining(error, check.get("mistakes", []), recognises, raised_by)
    if not found:
        return GENERIC_ERROR_HINT, ()
    return hint_text("", [with_dtype(m["hint"], None) for m in found],
                     raised_lead(kind, event.get("line"), event.get("cell"))), tuple(m["id"] for m in found)


def raised_lead(kind: str, line: int | None, cell: int | None) -> str:
    """What is said before the mistakes that raise the error your code raised (the grader's words
    too); hint_text ends it with the mistakes that are left."""
    where = (f" in cell {cell}, line {line}" if cell else f" on line {line}") if line else ""
    return f"Your code raised {kind}{where} on inputs where a correct implementation returns; the same error comes from"


GENERIC_ERROR_HINT = ("Your code raised an error on inputs a correct implementation handles. Read the line the "
                      "message names, and print the shapes (and dtypes) of the arrays it combines for inputs like "
                      "the check's.")


def tolerance(check: dict, answer, arrays: dict) -> Tolerance:
    flat = answer if isinstance(answer, tuple) else (answer,)
    loose = any(np.asarray(a).dtype in (np.float32, np.float16) for a in flat) or check["float32_inputs"]
    return Tolerance(**check["tolerances"]["float32" if loose else "float64"])


def compare(check: dict, answer, expected, arrays: dict, values_only: bool = False) -> list[str]:
    """What `compare_arrays` of the grader says: the weights' properties first, then the values."""
    names, tol = check["names"], tolerance(check, answer, arrays)
    answers = (answer,) if len(names) == 1 else tuple(answer)
    expecteds = (expected,) if len(names) == 1 else tuple(expected)
    if len(answers) != len(names):
        return [f"the returned value has the wrong structure: {counted(len(answers), 'value')}, expected {len(names)}"]
    problems = []
    for name, got, exp in zip(names, answers, expecteds):
        problem = None
        if name in check["weights"] and not values_only and np.shape(got) == np.shape(exp):
            problem = weights_problem(name, got)
        problem = problem or array_problem(name, got, exp, tol)
        if problem:
            problems.append(problem)
    return problems


def hint_for(check: dict, answer, arrays: dict, seen: str = "", ctx=None,
             expected=None, recognisers: dict | None = None, dtype: str | None = None,
             agrees=None) -> tuple[str, tuple[str, ...]]:
    """The hint of a wrong answer, and the ids of the known mistakes that explain it: `seen` (what
    was seen in the answer, observations.py), then their hints. A mistake explains it when
    its recogniser (by name in `recognisers`, recognisers.py) says so, given `ctx` (the check's
    `inputs`, the `dtypes` your answers came in) and the `expected` answer, or else when its answer
    on these inputs is yours (`agrees(answer, theirs)`; by default compared as arrays). `dtype`:
    the 16-bit float the answer came in, named where a hint speaks of it (`with_dtype`)."""
    found = []
    for fallback in (False, True):
        for mistake in (m for m in check["mistakes"] if m["fallback"] == fallback):
            if _explains(mistake, check, answer, arrays, ctx, expected, recognisers or {}, agrees):
                found.append(mistake)
        if found:
            break
    return hint_text(seen, [with_dtype(m["hint"], dtype) for m in found]), tuple(m["id"] for m in found)


GENERIC_DTYPE = "half precision (float16 or bfloat16) somewhere along the way"


def with_dtype(hint: str, dtype: str | None) -> str:
    """A hint that speaks of "{dtype}" with the 16-bit float named (the answer's, else in general)."""
    return hint.replace("{dtype}", dtype or GENERIC_DTYPE) if "{dtype}" in hint else hint


def _explains(mistake: dict, check: dict, answer, arrays: dict, ctx, expected, recognisers: dict,
              agrees=None) -> bool:
    recognise = recognisers.get(mistake.get("recogniser"))
    if recognise is not None:
        try:
            with np.errstate(all="ignore"):     # of the check, a recogniser reads its id (as the grader's Check)
                verdict = recognise(answer, expected, ctx or SimpleNamespace(inputs={}, dtypes=()),
                                    SimpleNamespace(id=check["id"]))
        except Exception:  # noqa: BLE001 - a strange answer is explained by nothing, as in the grader
            verdict = False
        if verdict is not None:
            return bool(verdict)
    if agrees is None:
        def agrees(mine, theirs):
            return not compare(check, mine, theirs, arrays, values_only=True)
    return any(_safely(agrees, answer, decode(a, arrays)) for a in mistake["answers"])


def _safely(agrees, answer, theirs) -> bool:
    try:
        with np.errstate(all="ignore"):
            return bool(agrees(answer, theirs))
    except Exception:  # noqa: BLE001 - an answer the comparison cannot read agrees with nothing, as in the grader
        return False


def hint_text(seen: str, hints, lead: str = "") -> str:
    """What a student is shown for a failed visible check, by the grader and by check.py: what was
    seen in the answer (`seen`, a sentence's words) and the `lead` (what was raised), then the
    mistake(s) that explain it; several mistakes are listed."""
    hints = list(hints)
    if lead and hints:              # counted here: narrowing may leave fewer mistakes than the lead's error had
        lead += " this mistake:" if len(hints) == 1 else " each of these mistakes:"
    head = " ".join(t for t in (f"{capitalised(seen)}." if seen else "", lead) if t)
    if not hints:
        return head
    if len(hints) == 1:
        return f"{head} {hints[0]}".strip()
    many = (f"{len(hints)} explanations fit your answer equally well (this check cannot tell them "
            "apart):\n" + "\n".join(f"- {h}" for h in hints))
    return f"{head} {many}".strip()


def capitalised(text: str) -> str:
    """A sentence's first letter in upper case, unless it starts with a name from the code (split[0, 1])."""
    first = text.split(" ", 1)[0]
    return text if any(c in first for c in "_([") else text[0].upper() + text[1:]
