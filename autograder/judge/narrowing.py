"""Explanations of a failed check that the student's other check results rule out: the grader's rule
(autograder/diagnosis/explain.py) and check.py's, one code.

Plain data and callbacks in, verdicts out; the standard library only (check.py ships this file
beside it). A known mistake is made of variants, each a set of functions done wrong (`overridden`).
A variant is weighed on the functions the student got wrong: its versions of the functions every
check of which passed (`right`) are set aside, and what is left must still be the student's
mistake: no check the student passed may fail with it, and on every failed check it changes it must
give the student's own answer (on the check explained, whatever it gives). A mistake is ruled out
when every variant is; at least one explanation stays.

What a variant with some functions set aside does on a check is asked of `Evidence`: the grader runs
the mutant; check.py reads what the handout ships for its visible checks (`SHIPPED`).
"""

from __future__ import annotations

from typing import Callable, Iterable, Protocol, Sequence

SHIPPED = "narrowing"     # a visible check's key in check_data: mistake id -> its variants' outcomes there


class Evidence(Protocol):
    """What one variant, its functions `set_aside` left right, does on a check."""

    def fails(self, check_id: str, set_aside: tuple[str, ...]) -> bool: ...      # a check the student passed
    def raised(self, check_id: str, set_aside: tuple[str, ...]) -> bool: ...     # a check the student failed
    def right(self, check_id: str, set_aside: tuple[str, ...]) -> bool: ...
    def yours(self, check_id: str, set_aside: tuple[str, ...]) -> bool: ...      # its answer is the student's


def function_of(check_id: str) -> str:
    """A check id is <stem>.<function>.<case>: the graded name it checks."""
    return check_id.split(".")[1]


def right_functions(verdicts: Iterable[tuple[str, bool]]) -> frozenset[str]:
    """The graded names every check of which passed, from (check id, passed) pairs."""
    by_function: dict[str, list[bool]] = {}
    for check_id, passed in verdicts:
        by_function.setdefault(function_of(check_id), []).append(passed)
    return frozenset(name for name, passed in by_function.items() if all(passed))


def set_aside(overridden: Iterable[str], right: Iterable[str]) -> tuple[str, ...]:
    """The functions of a variant that the student got right: its versions of them are not weighed."""
    right = frozenset(right)
    return tuple(sorted({name for name in overridden if name in right}))


def made_in_right(lies_in: Sequence[str], right: frozenset[str]) -> bool:
    """Whether a mistake said to lie in the functions `lies_in` lies in functions the student got right."""
    return bool(lies_in) and set(lies_in) <= right


def variant_ruled_out(overridden: Sequence[str], right: frozenset[str], explained: str, passed: Iterable[str],
                      failed: Iterable[str], evidence: Evidence) -> bool:
    """Whether this variant is not the student's mistake. `passed`, `failed`: the ids of the checks
    the mistake applies to that the student passed, and failed with an answer."""
    aside = set_aside(overridden, right)
    if len(aside) == len(set(overridden)):       # its whole mistake is in functions the student got right
        return True
    if any(evidence.fails(check_id, aside) for check_id in passed):
        return True
    for check_id in failed:
        if evidence.raised(check_id, aside):
            return True
        if check_id != explained and evidence.right(check_id, aside):
            continue                  # it leaves this check right: the student failed it another way
        if not evidence.yours(check_id, aside):
            return True               # it changes this answer, but not into the student's
    return False


def kept(ids: Sequence[str], ruled_out: Callable[[str], bool]) -> tuple[int, ...]:
    """The positions of the explanations `ids` that stay: all of them when fewer than two, or when
    every one would be ruled out."""
    if len(ids) < 2:
        return tuple(range(len(ids)))
    keep = tuple(n for n, mistake_id in enumerate(ids) if not ruled_out(mistake_id))
    return keep or tuple(range(len(ids)))


# ---------------------------------------------------------------- check.py: from the shipped data

class Shipped:
    """`Evidence` from the handout's data for the visible checks: check id -> (the check's data,
    the student's answer or None, agrees(yours, theirs)); `decode` reads a shipped answer. A
    mistake the data holds nothing of on a check leaves that check right there."""

    def __init__(self, mistake_id: str, variant: int, checks: dict, decode: Callable):
        self.mistake_id, self.variant, self.checks, self.decode = mistake_id, variant, checks, decode

    def _outcome(self, check_id: str, aside: tuple[str, ...]) -> dict:
        data = self.checks[check_id][0]
        variants = data.get(SHIPPED, {}).get(self.mistake_id, {}).get("variants", [])
        if self.variant >= len(variants):
            return {}
        return variants[self.variant]["outcomes"].get(",".join(aside), {})

    def fails(self, check_id, aside):
        return self._outcome(check_id, aside).get("fails", False)

    def raised(self, check_id, aside):
        return self._outcome(check_id, aside).get("raised", False)

    def right(self, check_id, aside):
        return "answer" not in self._outcome(check_id, aside) and not self.raised(check_id, aside)

    def yours(self, check_id, aside):
        outcome = self._outcome(check_id, aside)
        if "answer" not in outcome:
            return False
        _, answer, agrees = self.checks[check_id]
        try:
            return bool(agrees(answer, self.decode(outcome["answer"])))
        except Exception:  # noqa: BLE001 - an answer the comparison cannot read agrees with nothing
            return False


def narrowed_ids(explained: str, ids: Sequence[str], checks: dict, verdicts: dict[str, str],
                 decode: Callable) -> tuple[str, ...]:
    """check.py's side: the mistakes `ids` named for the visible check `explained`, without those
    its other visible results rule out. `checks`: as `Shipped`'s; `verdicts`: check id -> status."""
    right = right_functions((check_id, status == "passed") for check_id, status in verdicts.items())
    shipped = checks[explained][0].get(SHIPPED, {})
    applies = {check_id for check_id, (data, _, _) in checks.items()}
    passed = [c for c in applies if verdicts.get(c) == "passed"]
    failed = [c for c in applies if verdicts.get(c) == "failed" and checks[c][1] is not None]

    def ruled_out(mistake_id: str) -> bool:
        variants = shipped.get(mistake_id, {}).get("variants")
        if made_in_right(shipped.get(mistake_id, {}).get("lies_in", ()), right):
            return True
        if not variants:              # told by a property of the answer, or nothing shipped: kept
            return False
        return all(variant_ruled_out(v["overridden"], right, explained, passed, failed,
                                     Shipped(mistake_id, n, checks, decode)) for n, v in enumerate(variants))

    return tuple(ids[n] for n in kept(ids, ruled_out))
