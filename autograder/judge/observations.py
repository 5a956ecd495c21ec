"""What was seen in a wrong answer, said in one sentence ("position 0 attends to position 3"):
found from the answer's properties (rows that do not sum to 1, weight above the causal
diagonal, values taken from the wrong place of the input...), not from any mutant.

The grader (autograder/diagnosis/observations.py) and check.py say the same sentences with this
module: each exercise's descriptor names an `Observer` per graded function, and the handout's
check data carries its kind and arguments (`Observer.spec`), which check.py turns back into the
observer (`observer_from`). Needs numpy.
"""

from __future__ import annotations

import warnings
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from .answers import near_one
from .words import noun


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


def _causal_mask_given(inputs: dict) -> bool:
    """The mask passed in is the (seq, seq) causal one."""
    mask = inputs.get("mask")
    if mask is None:
        return False
    m = np.asarray(mask) != 0
    return m.ndim == 2 and m.shape[0] == m.shape[1] and bool((m == np.tril(np.ones(m.shape, bool))).all())


def _probabilities(a: np.ndarray) -> bool:
    """Attention weights: non-negative, each row adding up to 1."""
    return a.ndim >= 2 and bool((a >= 0).all()) and np.allclose(a.sum(axis=-1), 1.0, atol=1e-6)


def _normalised_axis(exp: np.ndarray | None) -> int:
    """The axis the expected answer sums to 1 along: the last one, or the first (softmax(x, axis=0))."""
    if exp is None or exp.ndim < 2 or np.allclose(exp.sum(axis=-1), 1.0, atol=1e-6):
        return -1
    return 0 if np.allclose(exp.sum(axis=0), 1.0, atol=1e-6) else -1


def _normalised_along(got: np.ndarray, tol: float) -> int | None:
    """A leading axis (not the keys', not the queries') along which every slice of `got` adds up to 1:
    the softmax ran along it."""
    for k in range(got.ndim - 2):
        if got.shape[k] > 1 and np.allclose(got.sum(axis=k), 1.0, atol=tol):
            return k
    return None


def _axis_said(k: int, ndim: int, heads: bool) -> str:
    if k == 0:
        return "the batch"
    return "the heads" if heads and ndim == 4 and k == 1 else "a batch or head axis"


def _weights_observation(inputs: dict, got: np.ndarray, exp: np.ndarray | None, name: str, *,
                         causal: bool = False, heads: bool = False, sum_tol: float = 1e-4) -> str | None:
    """`causal`: the weights must be lower-triangular whatever the inputs; `heads`: axis 1 is the head."""
    if got.ndim < 2 or (exp is not None and got.shape != exp.shape) or not np.isfinite(got).all():
        return None
    axis = _normalised_axis(exp)
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
    if not rows_ok and axis == -1:
        other = _normalised_along(got, sum_tol)
        if other is not None:
            return (f"each slice of your {name} along axis {other} ({_axis_said(other, got.ndim, heads)}) adds up "
                    f"to 1, but the rows (the sum over the keys, the last axis) do not")
    if heads and got.ndim == 4 and got.shape[1] > 1 and np.allclose(got, got[:, :1]) and exp is not None \
            and not np.allclose(exp, exp[:, :1]):
        return f"every head of your {name} is the same, so the heads do not attend separately"
    # Which key a query may see is said only of rows that add up to 1: where the softmax ran along
    # another axis, a blocked key's weight is that normalisation's doing, not the mask's.
    if rows_ok and (causal or _causal_mask_given(inputs)) and got.shape[-1] == got.shape[-2]:
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
    elif rows_ok and "mask" in inputs:
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


def _provenance_observation(inputs: dict, got: np.ndarray, exp: np.ndarray, name: str) -> str | None:
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
        if x.ndim == 4:       # heads to merge: (batch, heads, seq, d_head)
            return (f"x[{', '.join(map(str, src))}] (batch {src[0]}, head {src[1]}, position {src[2]}, "
                    f"feature {src[3]})")
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
    n_off, n_right = int(off.sum()), int((~off).sum())
    return (f"{noun(n_off, 'row')} {rows} of {name} {noun(n_off, 'is', 'are')} off "
            f"(by up to {err.max():.3g}) while {noun(n_right, 'row')} {right} {noun(n_right, 'is', 'are')} right")


# --------------------------------------------------------------------------- the observers a descriptor names


def _attention(inputs: dict, answer: Any, expected: Any, *, causal: bool = False, heads: bool = False) -> str | None:
    if isinstance(expected, tuple):
        if len(expected) != 2 or not isinstance(answer, (tuple, list)) or len(answer) != 2:
            return None        # a property check (outputs before and after a change): nothing to say
        got_w, exp_w = _array(answer[1]), _array(expected[1])
        if got_w is not None and exp_w is not None:
            seen = _weights_observation(inputs, got_w, exp_w, "weights", causal=causal, heads=heads)
            if seen:
                return seen
        return _pair_observation(inputs, tuple(answer), expected)
    got, exp = _array(answer), _array(expected)
    if got is None or exp is None or not _probabilities(exp):
        return None            # the output alone: nothing to say that the comparison does not
    return _weights_observation(inputs, got, exp, "weights", causal=causal, heads=heads)


def _probabilities_seen(inputs: dict, answer: Any, expected: Any, *, name: str) -> str | None:
    got, exp = _array(answer), _array(expected)
    if got is None or exp is None:
        return None
    return _weights_observation(inputs, got, exp, name)


def _mask_entries(inputs: dict, answer: Any, expected: Any) -> str | None:
    several = isinstance(expected, tuple)
    answers = answer if several else (answer,)
    expecteds = expected if several else (expected,)
    found = []
    for a, e in zip(answers, expecteds):
        got, exp = _array(a), _array(e)
        if got is not None and exp is not None:
            name = f"create_causal_mask({exp.shape[0]})" if several else "your mask"
            seen = _mask_observation(got, exp, name)
            if seen:
                found.append((np.isfinite(got).all(), seen))   # a non-finite mask says the most
    return sorted(found, key=lambda f: f[0])[0][1] if found else None


def _provenance(inputs: dict, answer: Any, expected: Any, *, name: str) -> str | None:
    got, exp = _array(answer), _array(expected)
    if got is None or exp is None:
        return None
    return _provenance_observation(inputs, got, exp, name)


def _hand_values(inputs: dict, answer: Any, expected: Any, *, check_id: str, hand_tolerance: float,
                 prefix: str = "") -> str | None:
    got, exp = _array(answer), _array(expected)
    if got is None or exp is None:
        return None
    name = check_id.rsplit(".", 1)[-1]
    if name == "weights":
        seen = _weights_observation(inputs, got, exp, "weights", sum_tol=0.015)
        if seen:
            return seen
    return _hand_observation(got, exp, hand_tolerance, prefix + name.upper())


_KINDS = {"attention": _attention, "probabilities": _probabilities_seen, "mask_entries": _mask_entries,
          "provenance": _provenance, "hand_values": _hand_values}


@dataclass(frozen=True)
class Observer:
    """An observer a descriptor names, as data: its kind (attention, probabilities, mask_entries,
    provenance, hand_values) and its arguments, so that check.py can be told which one to use."""
    kind: str
    args: dict = field(default_factory=dict)

    def __post_init__(self):
        if self.kind not in _KINDS:
            raise ValueError(f"no observer {self.kind!r}; the observers are {', '.join(_KINDS)}")

    @property
    def spec(self) -> dict:
        """What the check data says of it (`observer_from` reads it back)."""
        return {"kind": self.kind, "args": dict(self.args)}

    def see(self, check_id: str, inputs: dict, answer: Any, expected: Any,
            hand_tolerance: float | None = None) -> str | None:
        """One sentence about what is wrong with `answer`; None if nothing specific (or the answer is
        too strange to read). `hand_tolerance`: what a hand answer's entry may be off by (hand_values)."""
        extra = {"check_id": check_id, "hand_tolerance": hand_tolerance} if self.kind == "hand_values" else {}
        try:
            with warnings.catch_warnings(), np.errstate(all="ignore"):
                warnings.simplefilter("ignore")
                return _KINDS[self.kind](inputs, answer, expected, **self.args, **extra)
        except Exception:  # noqa: BLE001 - an observation is a courtesy; a strange answer must not break a check
            return None


def observer_from(spec: dict | None) -> Observer | None:
    """The observer the check data names (None: the check has none)."""
    return None if not spec else Observer(spec["kind"], dict(spec.get("args", {})))


def attention(*, causal: bool = False, heads: bool = False) -> Observer:
    """For a function returning (output, weights): the weights' properties, then which of the two
    steps went wrong. A check that grades the weights alone gets the first.
    `causal`: the function always masks the future; `heads`: weights are (batch, heads, n_q, n_k)."""
    return Observer("attention", {"causal": causal, "heads": heads})


def probabilities(name: str) -> Observer:
    """For a softmax: rows (or, for axis=0, columns) that do not add up to 1, and how."""
    return Observer("probabilities", {"name": name})


def mask_entries() -> Observer:
    """For a function returning a 0/1 mask, or a tuple of them: the first wrong entry, as who sees whom."""
    return Observer("mask_entries")


def provenance(name: str) -> Observer:
    """For a function that only moves the values of its input `x`: where a misplaced value came from."""
    return Observer("provenance", {"name": name})


def hand_values(prefix: str = "") -> Observer:
    """For typed-in answers named ``prefix + NAME`` (the check id ends in ``.name``): rows that are
    off and rows that are right (by the hand tolerance); weights that do not add up to 1 first."""
    return Observer("hand_values", {"prefix": prefix})
