"""Which misconception explains a wrong answer: run the catalogue's mutants on the same inputs.

Everything here runs in the grader's own process on plain data: a mutant is the reference
with one piece done wrong (reference/misconceptions.py, reference/mutants.py), and a
diagnosis is "this mutant, given the inputs the student's code was given, produces what the
student's code produced". Some entries are recognised by a property of the answer instead
(`Misconception.matches`); entries marked `fallback` are tried only when nothing else fits.

Every hint starts with what was seen in the student's answer ("position 0 attends to
position 3"), found by looking at the answer's properties (rows that do not sum to 1,
weight above the causal diagonal, values taken from the wrong place of the input...). When
no entry fits, that observation alone is the hint, if there is one.
"""

from __future__ import annotations

import hashlib
import re
import warnings
from dataclasses import dataclass
from typing import Any

import numpy as np

from autograder.checks.base import Check, Context, RaisedError, ReferenceImplementation, near_one
from reference.misconceptions import CATALOGUE, Misconception
from reference.recognisers import low_precision_dtype


@dataclass(frozen=True)
class Diagnosis:
    ids: tuple[str, ...]           # the misconceptions that fit (empty: none fits, the hint is an observation)
    observation: str = ""          # what was seen in the answer ("position 0 attends to position 3")
    hints: tuple[str, ...] = ()    # each fitting misconception's hint, in the order of `ids`
    lead: str = ""                 # for an error: what was raised, said before the hints

    @property
    def hint(self) -> str:
        """What a student is shown for a visible check: the observation, then the mistake(s)."""
        head = " ".join(t for t in (f"{_capitalised(self.observation)}." if self.observation else "", self.lead) if t)
        if not self.hints:
            return head
        if len(self.hints) == 1:
            return f"{head} {self.hints[0]}".strip()
        many = (f"{len(self.hints)} explanations fit your answer equally well (this check cannot tell them "
                "apart):\n" + "\n".join(f"- {h}" for h in self.hints))
        return f"{head} {many}".strip()


def _hint_of(mis: Misconception, ctx: Context | None, answer=None) -> str:
    """The entry's hint, with the dtype named where the hint speaks of it."""
    if "{dtype}" not in mis.hint:
        return mis.hint
    return mis.hint.replace("{dtype}", (ctx is not None and low_precision_dtype(ctx, answer)) or "a 16-bit float")


def candidates(check: Check) -> list[Misconception]:
    return [m for m in CATALOGUE if m.stem == check.exercise and m.applies_to(check.id)]


# ---------------------------------------------------------------- running implementations (cached)

_CACHE: dict[tuple, Any] = {}
_CACHE_LIMIT = 4096
_FAILED = object()


def _fingerprint(value, digest=None):
    """A hash of plain input data (arrays, lists, dicts, numbers), to cache answers per inputs."""
    top = digest is None
    digest = digest or hashlib.sha256()
    if isinstance(value, np.ndarray):
        digest.update(f"{value.dtype}{value.shape}".encode())
        digest.update(np.ascontiguousarray(value).tobytes())
    elif isinstance(value, dict):
        for key in sorted(value, key=repr):
            digest.update(repr(key).encode())
            _fingerprint(value[key], digest)
    elif isinstance(value, (list, tuple)):
        digest.update(f"{type(value).__name__}{len(value)}".encode())
        for item in value:
            _fingerprint(item, digest)
    else:
        digest.update(repr(value).encode())
    return digest.hexdigest() if top else None


def _run(check: Check, key: tuple, overrides: dict | None, inputs: dict) -> Any:
    """The answer of the reference (overrides None) or of a mutant on these inputs; _FAILED if it raised."""
    full_key = (check.id, _fingerprint(inputs)) + key
    if full_key not in _CACHE:
        if len(_CACHE) > _CACHE_LIMIT:
            _CACHE.clear()
        make = check.expected_run or check.run
        try:
            with warnings.catch_warnings(), np.errstate(all="ignore"):
                warnings.simplefilter("ignore")
                _CACHE[full_key] = make(ReferenceImplementation(check.exercise, overrides), inputs)
        except Exception:  # a mutant that cannot run on these inputs explains nothing here
            _CACHE[full_key] = _FAILED
    return _CACHE[full_key]


def mutant_answers(check: Check, mis: Misconception, inputs: dict) -> list[Any]:
    """What each variant of `mis` answers on these inputs (the variants that could run)."""
    answers = []
    for n, overrides in enumerate(mis.variants()):
        answer = _run(check, ("mutant", mis.id, mis.stem, n), overrides, inputs)
        if answer is not _FAILED:
            answers.append(answer)
    return answers


def reference_answer(check: Check, inputs: dict) -> Any:
    answer = _run(check, ("reference",), None, inputs)
    return None if answer is _FAILED else answer


def _agrees(check: Check, answer, mutant, ctx: Context) -> bool:
    try:
        with warnings.catch_warnings(), np.errstate(all="ignore"):
            warnings.simplefilter("ignore")
            return not _matcher(check)(answer, mutant, ctx)
    except Exception:
        return False


def _matcher(check: Check):
    """How an answer is compared with a mutant's: the values alone, not the properties the check
    also demands of a right answer (a mutant's weights need not sum to 1 either)."""
    return check.match or getattr(check.compare, "values_only", None) or check.compare


def fits(check: Check, mis: Misconception, inputs: dict, answer, ctx: Context, expected=None) -> bool:
    """Whether `mis` explains `answer`: by its predicate, or else by one of its mutants."""
    if mis.matches is not None:
        try:
            with warnings.catch_warnings(), np.errstate(all="ignore"):
                warnings.simplefilter("ignore")
                verdict = mis.matches(answer, expected, ctx, check)
        except Exception:
            verdict = False
        if verdict is not None:
            return bool(verdict)
    # A variant that gives the right answer on this check explains no wrong answer here.
    return any(_agrees(check, answer, m, ctx) for m in mutant_answers(check, mis, inputs)
               if expected is None or not _agrees(check, m, expected, ctx))


def diagnose(check: Check, inputs: dict[str, Any], answer: Any, ctx: Context,
             expected: Any = None) -> Diagnosis | None:
    """`expected`: the reference's answer, when the caller has it already."""
    if expected is None:
        expected = reference_answer(check, inputs)
    pool = candidates(check)
    matched = [m for m in pool if not m.fallback and fits(check, m, inputs, answer, ctx, expected)]
    if not matched:
        matched = [m for m in pool if m.fallback and fits(check, m, inputs, answer, ctx, expected)]
    try:
        seen = observe(check, inputs, answer, expected, ctx)
    except Exception:  # an observation is a courtesy; a strange answer must not break grading
        seen = None
    if not matched:
        return Diagnosis((), seen) if seen else None
    return Diagnosis(tuple(m.id for m in matched), seen or "", tuple(_hint_of(m, ctx, answer) for m in matched))


# ---------------------------------------------------------------- observations


def _capitalised(text: str) -> str:
    """A sentence's first letter in upper case, unless it starts with a name from the code (split[0, 1])."""
    first = text.split(" ", 1)[0]
    return text if any(c in first for c in "_([") else text[0].upper() + text[1:]


def _array(x) -> np.ndarray | None:
    try:
        a = np.asarray(x, dtype=np.float64)
    except (TypeError, ValueError):
        return None
    return a if a.dtype != object else None


def _where(idx: tuple, heads: bool) -> str:
    """'in batch 1, head 0, ' for the leading indices of an attention array."""
    if not idx:
        return ""
    names = ["batch", "head"] if heads and len(idx) == 2 else ["batch index"] * len(idx)
    if len(idx) == 1 or (heads and len(idx) == 2):
        return "in " + ", ".join(f"{n} {int(i)}" for n, i in zip(names, idx)) + ", "
    return f"in batch index {tuple(int(i) for i in idx)}, "


def _causal(check: Check, inputs: dict) -> bool:
    if check.id.startswith("causal_mask.causal_attention"):
        return True
    mask = inputs.get("mask")
    if mask is None:
        return False
    m = np.asarray(mask) != 0
    return m.ndim == 2 and m.shape[0] == m.shape[1] and bool((m == np.tril(np.ones(m.shape, bool))).all())


def _weights_observation(check: Check, inputs: dict, got: np.ndarray, exp: np.ndarray | None, name: str,
                         sum_tol: float = 1e-4) -> str | None:
    if got.ndim < 2 or (exp is not None and got.shape != exp.shape) or not np.isfinite(got).all():
        return None
    heads = check.exercise == "multihead"
    axis = 0 if check.id.endswith("softmax.axis") else -1
    rows = got.sum(axis=axis)
    rows_ok = np.allclose(rows, 1.0, atol=sum_tol)
    if not rows_ok and axis == -1 and np.allclose(got.sum(axis=-2), 1.0, atol=sum_tol):
        if name == "softmax":
            return "each column of your softmax adds up to 1, but its rows (along the last axis) do not"
        return (f"each column of your {name} adds up to 1 (a sum over the queries), but the rows do not "
                f"(the sum over the keys)")
    if not rows_ok and np.isclose(got.sum(), 1.0, atol=sum_tol) and got.size > got.shape[-1]:
        each = "each column" if axis == 0 else "each row"
        return f"all the entries of your {name} together add up to 1, instead of {each} separately"
    if heads and got.ndim == 4 and got.shape[1] > 1 and np.allclose(got, got[:, :1]) and exp is not None \
            and not np.allclose(exp, exp[:, :1]):
        return f"every head of your {name} is the same, so the heads do not attend separately"
    if _causal(check, inputs) and got.shape[-1] == got.shape[-2]:
        lead: list = []
        n = got.shape[-1]
        seen = []
        leak = (np.abs(got) > 1e-9) & np.triu(np.ones((n, n), bool), 1)
        if leak.any():
            *lead, i, j = np.argwhere(leak)[0]
            seen.append(f"{_where(tuple(lead), heads)}position {i} attends to position {j}, which comes after it "
                        f"(weight {got[(*lead, i, j)]:.3g})")
        own = np.abs(np.diagonal(got, axis1=-2, axis2=-1)) < 1e-12
        if own.any():
            *lead2, i = np.argwhere(own)[0]
            where = "" if seen and tuple(lead2) == tuple(lead) else _where(tuple(lead2), heads)
            seen.append(f"{where}position {i} gives itself weight 0, though it may attend to itself")
        if seen:
            return ", and ".join(seen)
    elif "mask" in inputs:
        allowed = np.asarray(inputs["mask"]) != 0
        try:
            allowed = np.broadcast_to(allowed, got.shape)
        except ValueError:
            allowed = None
        if allowed is not None:
            leak = (np.abs(got) > 1e-9) & ~allowed
            if leak.any():
                *lead, i, j = np.argwhere(leak)[0]
                return (f"{_where(tuple(lead), heads)}query {i} gives key {j} weight {got[(*lead, i, j)]:.3g}, "
                        f"though the mask blocks that key")
            if exp is not None:
                lost = (np.abs(got) < 1e-12) & allowed & (exp > 1e-9)
                if lost.any():
                    *lead, i, j = np.argwhere(lost)[0]
                    return (f"{_where(tuple(lead), heads)}query {i} gives key {j} weight 0, though the mask "
                            f"allows that key")
    if rows_ok:
        return None
    bad = tuple(int(i) for i in np.argwhere(~np.isclose(rows, 1.0, atol=sum_tol))[0])
    if axis == 0:
        return f"column {bad[-1]} of your {name} adds up to {near_one(rows[bad])}, not 1"
    *lead, i = bad
    return f"{_where(tuple(lead), heads)}row {i} of your {name} adds up to {near_one(rows[bad])}, not 1"


def _mask_observation(got: np.ndarray, exp: np.ndarray, name: str) -> str | None:
    """For create_causal_mask: the first wrong entry, said as who may see whom."""
    if got.shape != exp.shape or got.ndim != 2:
        return None
    if not np.isfinite(got).all():
        return (f"{name} holds -inf or inf: that is an additive mask, but the contract's mask holds 1/True "
                f"and 0/False")
    wrong = np.argwhere((got != 0) != (exp != 0))
    if not len(wrong):
        return None
    i, j = (int(v) for v in wrong[0])
    when = "itself" if i == j else (f"position {j}, an earlier one" if j < i else f"position {j}, a later one")
    verb = "lets" if got[i, j] != 0 else "stops"
    return f"{name}[{i}, {j}] = {got[i, j]:g} {verb} position {i} {'attend' if verb == 'lets' else 'attending'} to {when}"


def _pair_observation(inputs: dict, got: tuple, exp: tuple) -> str | None:
    """Output against weights: which of the two steps went wrong."""
    out, w = (_array(a) for a in got)
    e_out, e_w = (_array(a) for a in exp)
    if out is None or w is None or e_out is None or e_w is None:
        return None
    if w.shape == e_w.shape and np.allclose(w, e_w, rtol=1e-4, atol=1e-6):
        if out.shape == e_out.shape and not np.allclose(out, e_out, rtol=1e-4, atol=1e-6):
            return "your weights are right but your output is not: the mistake is after the softmax"
        return None
    V = inputs.get("V")
    if V is not None and np.isfinite(w).all():
        try:
            with np.errstate(all="ignore"):
                mine = w @ np.asarray(V, dtype=np.float64)
        except ValueError:
            return None
        if mine.shape == out.shape and np.allclose(out, mine, rtol=1e-4, atol=1e-6):
            return "your output is your own weights times V, so the mistake is in the weights (before or in the softmax)"
    return None


def _provenance_observation(check: Check, inputs: dict, got: np.ndarray, exp: np.ndarray, name: str) -> str | None:
    """For a reshaping function: where the first misplaced value came from in the input."""
    x = _array(inputs.get("x"))
    if x is None or got.shape != exp.shape or got.size != x.size:
        return None
    source = {float(v): tuple(int(i) for i in idx) for idx, v in np.ndenumerate(x)}
    if len(source) != x.size:
        return None
    wrong = np.argwhere(~np.isclose(got, exp, rtol=0, atol=1e-12))
    if not len(wrong):
        return None
    idx = tuple(int(i) for i in wrong[0])
    came, should = source.get(float(got[idx])), source.get(float(exp[idx]))
    if came is None or should is None:
        return None

    def describe(src):
        if x.ndim == 3:
            return f"x[{', '.join(map(str, src))}] (batch {src[0]}, position {src[1]}, feature {src[2]})"
        return f"x[{', '.join(map(str, src))}]"

    return f"{name}[{', '.join(map(str, idx))}] holds {describe(came)}, but should hold {describe(should)}"


def _hand_observation(got: np.ndarray, exp: np.ndarray, tol: float, name: str) -> str | None:
    if got.shape != exp.shape or got.ndim != 2 or not np.isfinite(got).all():
        return None
    err = np.abs(got - exp)
    off = err.max(axis=-1) > tol
    if not off.any():
        return None
    if off.all():
        return f"every row of {name} is off (by up to {err.max():.3g})"
    rows = ", ".join(str(i) for i in np.flatnonzero(off))
    right = ", ".join(str(i) for i in np.flatnonzero(~off))
    return (f"row{'s' if off.sum() > 1 else ''} {rows} of {name} {'are' if off.sum() > 1 else 'is'} off "
            f"(by up to {err.max():.3g}) while row{'s' if (~off).sum() > 1 else ''} {right} "
            f"{'are' if (~off).sum() > 1 else 'is'} right")


PAIRS = ("scaled_dot_product_attention", "causal_attention", "multi_head_attention", "MultiHeadAttention")


def observe(check: Check, inputs: dict, answer: Any, expected: Any, ctx: Context | None = None) -> str | None:
    """One sentence about what is wrong with the answer, from its properties; None if nothing specific."""
    stem, name = check.exercise, check.id.rsplit(".", 1)[-1]
    with warnings.catch_warnings(), np.errstate(all="ignore"):
        warnings.simplefilter("ignore")
        if stem == "hand_computation":
            got, exp = _array(answer), _array(expected)
            if got is None or exp is None:
                return None
            label = check.title.split(":", 1)[-1].split("=")[0].split(",")[0].strip()
            if name == "weights":
                seen = _weights_observation(check, inputs, got, exp, "weights", sum_tol=0.015)
                if seen:
                    return seen
            return _hand_observation(got, exp, 0.006, label or name.upper())
        if check.function == "create_causal_mask":
            answers = answer if isinstance(expected, tuple) else (answer,)
            expecteds = expected if isinstance(expected, tuple) else (expected,)
            found = []
            for a, e in zip(answers, expecteds):
                got, exp = _array(a), _array(e)
                if got is not None and exp is not None:
                    name = f"create_causal_mask({exp.shape[0]})" if isinstance(expected, tuple) else "your mask"
                    seen = _mask_observation(got, exp, name)
                    if seen:
                        found.append((np.isfinite(got).all(), seen))   # a non-finite mask says the most
            return sorted(found, key=lambda f: f[0])[0][1] if found else None
        pair = check.function in PAIRS and not check.id.endswith("no_future")
        if pair and isinstance(expected, tuple) and isinstance(answer, (tuple, list)) and len(answer) == 2:
            got_w, exp_w = _array(answer[1]), _array(expected[1])
            if got_w is not None and exp_w is not None:
                seen = _weights_observation(check, inputs, got_w, exp_w, "weights")
                if seen:
                    return seen
            return _pair_observation(inputs, tuple(answer), expected)
        got, exp = _array(answer), _array(expected)
        if got is None or exp is None:
            return None
        if name == "weights" or check.function == "softmax":
            return _weights_observation(check, inputs, got, exp, "softmax" if check.function == "softmax"
                                        else "weights")
        if check.function in ("split_heads", "merge_heads"):
            return _provenance_observation(check, inputs, got, exp, "split" if check.function == "split_heads"
                                           else "merged")
    return None


def _raised_by(check: Check, overrides: dict, inputs: dict) -> tuple[str, str] | None:
    """(type, message) of the exception a mutant raises on these inputs, or None if it returns."""
    make = check.expected_run or check.run
    try:
        with warnings.catch_warnings(), np.errstate(all="ignore"):
            warnings.simplefilter("ignore")
            make(ReferenceImplementation(check.exercise, overrides), inputs)
    except Exception as err:
        return type(err).__name__, str(err)
    return None


def _shape_of(text: str) -> str:
    """A message with its numbers masked: "(size 5 is different from 4)" -> "(size # is different from #)"."""
    return re.sub(r"\d+", "#", " ".join(text.split()))


def diagnose_error(check: Check, inputs: dict[str, Any], error: RaisedError) -> Diagnosis | None:
    """The student's code raised `error` where the reference returns: which mistake raises it?

    An entry explains it when it recognises the error's text itself (`if mask:` on an array), or
    when one of its mutants, given the same inputs, fails the same way at the same operation: the
    same exception type and the same message (Q @ K on n_k != d_k fails in matmul with the sizes
    the student's code reported). The same type alone proves nothing: `.T` on a batch and a
    softmax without keepdims raise ValueError too. A message that matches only with its numbers
    masked counts when exactly one entry fits that way. Nothing fits: None (a generic hint)."""
    pool = candidates(check)
    by_text = [m for m in pool if m.raises is not None and _safe(m.raises, error)]
    if by_text:     # the error's own words (or the line that raised) say which: the most specific evidence
        return _error_diagnosis(error, by_text)
    exact, shaped = [], []
    for mis in (m for m in pool if m.matches is None):
        raised = [r for r in (_raised_by(check, o, inputs) for o in mis.variants()) if r is not None]
        same_type = [text for kind, text in raised if kind == error.type]
        if any(" ".join(text.split()) == " ".join(error.text.split()) for text in same_type):
            exact.append(mis)
        elif any(_shape_of(text) == _shape_of(error.text) for text in same_type):
            shaped.append(mis)
    matched = exact or (shaped if len(shaped) == 1 else [])
    return _error_diagnosis(error, matched) if matched else None


def _error_diagnosis(error: RaisedError, matched: list[Misconception]) -> Diagnosis:
    where = (f" in cell {error.cell}, line {error.line}" if error.cell else f" on line {error.line}") if error.line else ""
    lead = (f"Your code raised {error.type}{where} on inputs where a correct implementation returns; "
            f"the same error comes from {'this mistake' if len(matched) == 1 else 'each of these mistakes'}:")
    return Diagnosis(tuple(m.id for m in matched), "", tuple(_hint_of(m, None) for m in matched), lead=lead)


def _safe(predicate, error) -> bool:
    try:
        return bool(predicate(error))
    except Exception:
        return False
