"""Which misconception explains a wrong answer: run the catalogue's mutants on the same inputs.

Everything here runs in the grader's own process on plain data: a mutant is the reference
with one piece done wrong (each exercise's catalogue, autograder/checks/<stem>/misconceptions.py,
and its mutants.py), and a
diagnosis is "this mutant, given the inputs the student's code was given, produces what the
student's code produced". Some entries are recognised by a property of the answer instead
(`Misconception.matches`); entries marked `fallback` are tried only when nothing else fits.

Every hint starts with what was seen in the student's answer ("position 0 attends to
position 3", autograder/diagnosis/observations.py). When no entry fits, that observation alone is the
hint, if there is one. An error the student's code raised is explained by `diagnose_error`.
"""

from __future__ import annotations

import hashlib
import warnings
from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path
from typing import Any

import numpy as np

from autograder.checks.base import Check, Context, RaisedError, ReferenceImplementation
from autograder.diagnosis.mutant_raised import raised_at as _raised_at
from autograder.diagnosis.observations import observe
from autograder.judge.answers import raised_lead, with_dtype
from autograder.judge.narrowing import kept, made_in_right, right_functions, variant_ruled_out
from autograder.judge.quoted import shown
from autograder.judge.raised import explaining, operation_kind
from autograder.judge.recognisers import low_precision_dtype
from autograder.checks.misconception import Diagnosis, Misconception, candidates


def _hint_of(mis: Misconception, ctx: Context | None, answer=None) -> str:
    """The entry's hint, with the dtype named where the hint speaks of it (check.py names it so too)."""
    return with_dtype(mis.hint, low_precision_dtype(ctx, answer) if ctx is not None else None)


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


def _run(check: Check, key: tuple, overrides: dict | None, inputs: dict, inputs_key: str | None = None) -> Any:
    """The answer of the reference (overrides None) or of a mutant on these inputs; _FAILED if it raised.
    `inputs_key`: the inputs' _fingerprint, when the caller has it (one diagnosis asks for every
    mutant's answer on the same inputs: hashed once, not once per mutant)."""
    full_key = (check.id, inputs_key or _fingerprint(inputs)) + key
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


def mutant_answers(check: Check, mis: Misconception, inputs: dict, inputs_key: str | None = None) -> list[Any]:
    """What each variant of `mis` answers on these inputs (the variants that could run)."""
    answers = []
    for n, overrides in enumerate(mis.variants()):
        answer = _run(check, ("mutant", mis.id, mis.stem, n), overrides, inputs, inputs_key)
        if answer is not _FAILED:
            answers.append(answer)
    return answers


def reference_answer(check: Check, inputs: dict, inputs_key: str | None = None) -> Any:
    answer = _run(check, ("reference",), None, inputs, inputs_key)
    return None if answer is _FAILED else answer


def _agrees(check: Check, answer, mutant, ctx: Context) -> bool:
    try:
        with warnings.catch_warnings(), np.errstate(all="ignore"):
            warnings.simplefilter("ignore")
            matcher = _matcher(check)
            agrees = getattr(matcher, "agrees", None)      # the verdict alone, where the compare has one
            return agrees(answer, mutant, ctx) if agrees is not None else not matcher(answer, mutant, ctx)
    except Exception:
        return False


def _matcher(check: Check):
    """How an answer is compared with a mutant's: the values alone, not the properties the check
    also demands of a right answer (a mutant's weights need not sum to 1 either)."""
    return check.match or getattr(check.compare, "values_only", None) or check.compare


def fits(check: Check, mis: Misconception, inputs: dict, answer, ctx: Context, expected=None,
         inputs_key: str | None = None) -> bool:
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
    return any(_agrees(check, answer, m, ctx) for m in mutant_answers(check, mis, inputs, inputs_key)
               if expected is None or not _agrees(check, m, expected, ctx))


def diagnose(check: Check, inputs: dict[str, Any], answer: Any, ctx: Context,
             expected: Any = None) -> Diagnosis | None:
    """`expected`: the reference's answer, when the caller has it already."""
    key = _fingerprint(inputs)
    if expected is None:
        expected = reference_answer(check, inputs, key)
    pool = candidates(check)
    matched = [m for m in pool if not m.fallback and fits(check, m, inputs, answer, ctx, expected, key)]
    if not matched:
        matched = [m for m in pool if m.fallback and fits(check, m, inputs, answer, ctx, expected, key)]
    try:
        seen = observe(check, inputs, answer, expected, ctx)
    except Exception:  # an observation is a courtesy; a strange answer must not break grading
        seen = None
    if not matched:
        return Diagnosis((), seen) if seen else None
    return Diagnosis(tuple(m.id for m in matched), seen or "", tuple(_hint_of(m, ctx, answer) for m in matched))



# ---------------------------------------------------------------- errors


def _raised_by(check: Check, overrides: dict, inputs: dict) -> tuple[str, str] | None:
    """(type, message) of the exception a mutant raises on these inputs, or None if it returns."""
    raised = _raised_at(check, overrides, inputs)
    return None if raised is None else raised[:2]


def diagnose_error(check: Check, inputs: dict[str, Any], error: RaisedError) -> Diagnosis | None:
    """The student's code raised `error` where the reference returns: which mistake raises it?

    An entry explains it when it recognises the error's text itself (`if mask:` on an array), or
    when one of its mutants, given the same inputs, fails the same way at the same operation: the
    same exception type and the same message (Q @ K on n_k != d_k fails in matmul with the sizes
    the student's code reported), in the same kind of operation (a product, or another: torch
    words a failed broadcast the same in both). The same type alone proves nothing: `.T` on a
    batch and a softmax without keepdims raise ValueError too. A message that matches only with its numbers
    masked counts when exactly one entry fits that way (the judge's raised.explaining: check.py decides
    with it too). Nothing fits: None (a generic hint)."""
    def raised_by(mis: Misconception, torch: bool):
        if mis.matches is not None:          # told by its answer: no raised error explains it
            return None
        raised = [_raised_at(check, o, inputs) for o in mis.variants()]
        if torch and mis.torch_alternatives:
            raised += _torch_raised(check, mis, inputs)
        return [(kind, text, operation_kind(line)) for kind, text, line in filter(None, raised)]

    matched = explaining(error, candidates(check), lambda mis, err: mis.raises is not None and mis.raises(err),
                         raised_by)
    return _error_diagnosis(error, matched) if matched else None


def _torch_raised(check: Check, mis: Misconception, inputs: dict) -> list[tuple[str, str, str] | None]:
    """What `mis`'s torch-written mutants raise on these inputs (as `_raised_at`), kept on disk and
    made once on a machine, in a process of its own (torch_raised.py): torch is never imported in
    the grader for it (seconds of CPU under its GIL, and its memory to the end of the run)."""
    def make():      # here: only if that process could not say
        return [_raised_at(check, alt(), inputs) for alt in mis.torch_alternatives]

    def made_apart():
        found = torch_raised(check, mis, inputs)
        return found if found is not None else [None if r is None else list(r) for r in make()]

    from autograder.checks.reference_cache import lock_for, stored_json
    from autograder.diagnosis.torch_raised import fits, torch_raised

    key = [check.id, mis.stem, mis.id, _fingerprint(inputs), _explain_digest()]
    with lock_for(("raised", *key)):      # lanes that meet the same error wait for one answer
        found = stored_json("raised", key, made_apart)
    if not fits(found, len(mis.torch_alternatives)):
        return make()
    return [None if r is None else tuple(r) for r in found]


@lru_cache(maxsize=None)
def _explain_digest() -> str:
    """This module's code and mutant_raised's: how a raised error is described is part of what is kept."""
    from autograder.diagnosis import mutant_raised

    digest = hashlib.sha256(Path(__file__).read_bytes())
    digest.update(Path(mutant_raised.__file__).read_bytes())
    return digest.hexdigest()[:16]


def _error_diagnosis(error: RaisedError, matched: list[Misconception]) -> Diagnosis:
    lead = raised_lead(error.type, error.line, error.cell)
    return Diagnosis(tuple(m.id for m in matched), "", tuple(_hint_of(m, None) for m in matched), lead=lead)


# ---------------------------------------------------------------- explanations the student's own checks rule out


@dataclass(frozen=True)
class Record:
    """What one file's checks came to, for weighing explanations against it: the checks that
    passed, and the answer (with its Context) of each check that failed with an answer."""
    passed: tuple[Check, ...]
    failed: dict[str, tuple[Check, Any, Context]]     # check id -> (check, the student's answer, ctx)
    graded: tuple[Check, ...]                         # every check graded (passed, failed or raised)

    def right_functions(self) -> frozenset[str]:
        """The graded names (`softmax`, `MultiHeadAttention`) every check of which passed."""
        passed_ids = {c.id for c in self.passed}
        return right_functions((c.id, c.id in passed_ids) for c in self.graded)


def narrowed(found: Diagnosis | None, check: Check, record: Record, expected_of) -> Diagnosis | None:
    """`found` without the explanations the student's own check results rule out.

    An entry is weighed on the functions the student got wrong: its mutants' versions of the
    functions every check of which passed are set aside (a mistake made in numpy's merge_heads need
    not be made in the torch module too), and what is left must still be the student's mistake:
    no check the student passed may fail with it, and on every failed check it changes (the one
    explained among them) it must give the student's own answer. An entry whose mistake lies in a
    function the student got right keeps nothing that gives those answers (an interleaved split
    also merges interleaved, but its multi-head output is not the student's) and is dropped. Entries
    told by a property of the answer (`matches`) are kept: their mutant is only an example. At
    least one explanation stays. `expected_of(check)` -> (inputs, expected, ctx)."""
    if found is None or len(found.ids) < 2:
        return found
    pool = {m.id: m for m in candidates(check)}
    right = record.right_functions()
    keep = kept(found.ids, lambda mis_id: _ruled_out(pool.get(mis_id), check, record, right, expected_of))
    if len(keep) == len(found.ids):
        return found
    return Diagnosis(tuple(found.ids[n] for n in keep), found.observation,
                     tuple(found.hints[n] for n in keep), found.lead)


def in_source(found: Diagnosis | None, check: Check, source: str | None) -> Diagnosis | None:
    """`found` without the entries whose hint quotes a construct the student's file lacks
    (judge/quoted.py: the rule check.py applies too); None: the source is not known, all kept."""
    if found is None or not found.ids or source is None:
        return found
    pool = {m.id: m for m in candidates(check)}
    keep = [n for n, mis_id in enumerate(found.ids) if mis_id not in pool or shown(pool[mis_id].quotes, source)]
    if len(keep) == len(found.ids):
        return found
    return Diagnosis(tuple(found.ids[n] for n in keep), found.observation,
                     tuple(found.hints[n] for n in keep), found.lead)


def weighs_together(checks) -> bool:
    """Whether the student's results of these checks are weighed together (`weighed`): several
    explanations of one check, or an exercise that explains its checks with each other's answers."""
    from autograder.checks import EXERCISES

    return any(EXERCISES[c.exercise].together is not None for c in checks if c.exercise in EXERCISES)


def weighed(found: dict[str, Diagnosis | None], record: Record, expected_of,
            visible: frozenset[str] | None = None) -> dict[str, Diagnosis | None]:
    """Each failed check's diagnosis weighed with the student's other results: first by its
    exercise's own reading of them together (`Exercise.together`: a hand computation's mistake told
    where it started), then without the explanations the results rule out (`narrowed`).
    `visible`: the ids of the checks students see; a visible check's explanations are ruled out by
    visible results only, as the handout's check.py rules them out, so both say the same."""
    from autograder.checks import EXERCISES

    weighed_found = dict(found)
    for stem in dict.fromkeys(c.exercise for c in record.graded):
        together = EXERCISES[stem].together if stem in EXERCISES else None
        if together is not None:
            weighed_found.update(together(found, record, expected_of))
    by_id = {c.id: c for c in record.graded}
    seen = record if visible is None else _only(record, visible)
    return {cid: narrowed(d, by_id[cid], seen if visible is not None and cid in visible else record, expected_of)
            if cid in by_id else d for cid, d in weighed_found.items()}


def _only(record: Record, ids: frozenset[str]) -> Record:
    """`record` as if only the checks `ids` had been graded."""
    return Record(passed=tuple(c for c in record.passed if c.id in ids),
                  failed={cid: got for cid, got in record.failed.items() if cid in ids},
                  graded=tuple(c for c in record.graded if c.id in ids))


def _ruled_out(mis: Misconception | None, explained: Check, record: Record, right: frozenset[str],
               expected_of) -> bool:
    if mis is None:
        return False
    if made_in_right(mis.lies_in, right):
        return True
    if mis.matches is not None:
        return False
    passed = [p.id for p in record.passed if mis.applies_to(p.id)]
    failed = [f for f in record.failed if mis.applies_to(f)]
    return all(variant_ruled_out(tuple(overrides), right, explained.id, passed, failed,
                                 _MutantEvidence(mis, n, overrides, record, expected_of))
               for n, overrides in enumerate(mis.variants()))


class _MutantEvidence:
    """What one variant of a mistake does on the student's checks, its functions `set_aside` left
    right (the judge's narrowing.Evidence): the grader runs it."""

    def __init__(self, mis: Misconception, n: int, overrides: dict, record: Record, expected_of):
        self.mis, self.n, self.overrides, self.record, self.expected_of = mis, n, overrides, record, expected_of
        self.checks = {c.id: c for c in record.graded}

    def answer(self, check: Check, aside: tuple[str, ...]):
        kept_overrides = {name: wrong for name, wrong in self.overrides.items() if name not in aside}
        key = ("mutant", self.mis.id, self.mis.stem, self.n, "without", aside)
        return _run(check, key, kept_overrides, self.expected_of(check)[0])

    def fails(self, check_id, aside):
        check = self.checks[check_id]
        _, expected, ctx = self.expected_of(check)
        return _fails(check, self.answer(check, aside), expected, ctx)

    def raised(self, check_id, aside):
        return self.answer(self.record.failed[check_id][0], aside) is _FAILED

    def right(self, check_id, aside):
        check, _, ctx = self.record.failed[check_id]
        return _agrees(check, self.answer(check, aside), self.expected_of(check)[1], ctx)

    def yours(self, check_id, aside):
        check, answer, ctx = self.record.failed[check_id]
        return _agrees(check, answer, self.answer(check, aside), ctx)


def _fails(check: Check, answer, expected, ctx: Context) -> bool:
    if answer is _FAILED:
        return True
    try:
        with warnings.catch_warnings(), np.errstate(all="ignore"):
            warnings.simplefilter("ignore")
            return bool(check.compare(answer, expected, ctx))
    except Exception:  # a mutant's answer the check cannot read fails it
        return True
