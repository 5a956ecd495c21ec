"""The handout's check data: for each visible check, the calls it makes, their inputs, and how its
answer is judged, as JSON and a pickle-free .npz per exercise.

A check's calls are found by running the check on a recording stand-in for the student's module
(`Recorder`): what it is asked for is written down, and each answer is a placeholder that later
calls may take as an argument (merge_heads(split_heads(x))) and the check may unpack (a pair) or
keep (the scaling experiment's runs). A check compared with an answer ships the right answer and
the answers of the known mistakes; a check that tests a property with code (no_future, the scaling
experiment, the figure, the module's structure) ships the property's name and its parameters, which
check.py applies with judge/properties.py, the grader's own code for them; where the grader names
its mistakes by comparing arrays (`Check.match`), what that comparison needs as well ("match").

What is written is only what a student may see: nothing of a hidden check, no reference code, and
for the hand computation no answer at all (its self-check compares the student's steps with one
another). Mutants' answers are kept for visible checks only: they are computed from the same
visible inputs as the expected answer already shipped, so they tell nothing more about the key.
The statistics the scaling checks compare with are numbers for the visible calls' arguments.
"""

from __future__ import annotations

import io
import json
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np

from autograder.checks import CHECKS, EXERCISES
from autograder.checks.base import Check, Context
from autograder.checks.hand_computation import (ROUNDED_EARLY_MISTAKE, ROUNDING_STEPS, ROWS_SUM_TO_ONE,
                                                 SELF_CHECK_STEPS, given_inputs)
from autograder.config.course import CourseConfig
from autograder.checks.contract import RETURNS
from autograder.judge.answers import encode
from autograder.judge.narrowing import SHIPPED
from autograder.judge.observations import Observer
from autograder.judge.raised import RECOGNISERS as RAISED_RECOGNISERS
from autograder.judge.raised import operation_kind
from autograder.judge.recognisers import RECOGNISERS
from autograder.handout.unjailed import FORMAT
from autograder.variants.draw import Variant

# The draw the data comes from: the course's own numbers, or a student's variant (their id).
VARIANT = "course"


@dataclass(frozen=True)
class Placeholder:
    """The answer of the call `call` (its item `item`, for a function that returns a pair)."""
    call: int
    item: int | None = None
    arity: int = 0                  # a function that returns a tuple of this many: the check may unpack it

    def __getitem__(self, item: int) -> "Placeholder":
        if self.item is not None:
            raise TypeError("a call's answer is indexed once")
        return Placeholder(self.call, item)

    def __iter__(self):
        if not self.arity:
            raise NotReplayable("an answer unpacked by the check")
        return iter([self[item] for item in range(self.arity)])


class RecordedDict(dict):
    """The placeholder of a call that returns a dict (the scaling experiment): a check may copy it
    (Reseeded(answer)), and the copy still says which call it is."""

    def __init__(self, placeholder: Placeholder):
        super().__init__({RECORDED: placeholder})


RECORDED = "@recorded call"


class NotReplayable(Exception):
    """The check does something with an answer besides passing it on or picking an item."""


@dataclass
class Recorder:
    """Stands where the student's module stands when a check runs: writes its calls down."""
    returns: dict[str, object]                 # graded name -> return kind (the exercise's)
    calls: list[dict] = field(default_factory=list)
    dtypes: set = field(default_factory=set)

    def __getattr__(self, name: str):
        if name.startswith("_"):
            raise AttributeError(name)
        return lambda *args, **kwargs: self._record("call", name, list(args), kwargs)

    def fresh(self, name: str):
        """Called anew each time, as in the grader (whose other calls with scalar arguments are made once)."""
        return lambda *args, **kwargs: self._record("call", name, list(args), kwargs, fresh=True)

    def probe(self, name: str, args: list, *, read_only: bool = False, echo: bool = False):
        """A fresh call whose arguments check.py hands as the grader does (judge/arguments.py): an
        array passed twice is one array (its data key twice), read-only when asked; with `echo` the
        answer is (value, the array arguments as left)."""
        placeholder = self._record("call", name, list(args), {}, fresh=True,
                                   how={k: True for k, asked in (("read_only", read_only), ("echo", echo)) if asked})
        return Placeholder(placeholder.call, arity=2) if echo else placeholder

    def fresh_each(self, name: str, calls: list[dict]) -> list:
        """Each call recorded as a fresh call of its own: check.py replays them one by one."""
        return [self.fresh(name)(**kwargs) for kwargs in calls]

    def value(self, name: str):
        return self._record("value", name, [], {})

    def module_forward(self, class_name: str, init_args: list, state: dict, x, mask=None, **how):
        """check.py builds the module and hands its tensors as the grader does (`how`: echo, again,
        read_only; judge/torch_module.py)."""
        return self._record("module", class_name, list(init_args), {"state": state, "x": x, "mask": mask},
                            how={k: True for k, asked in how.items() if asked})

    def _record(self, op: str, name: str, args: list, kwargs: dict, fresh: bool = False,
                how: dict | None = None) -> Placeholder | RecordedDict:
        kind = self.returns.get(name, "array")
        self.calls.append({"op": op, "name": name, "args": args, "kwargs": kwargs, "returns": kind}
                          | ({"fresh": True} if fresh else {}) | (how or {}))
        if kind == "float_dict_dict":
            return RecordedDict(Placeholder(len(self.calls) - 1))
        arity = len(kind) - 1 if isinstance(kind, tuple) and kind[0] == "tuple" else 0
        return Placeholder(len(self.calls) - 1, arity=arity)


class Arrays:
    """The arrays of one exercise's data, named a0, a1, ... in the .npz; JSON points at them."""

    def __init__(self):
        self.arrays: dict[str, np.ndarray] = {}
        self._keys: dict[int, str] = {}     # id of an array stored -> its key: an input and a call's argument once

    def encode(self, value: Any):
        try:
            return encode(value, self._store, self._placeholder)
        except TypeError as err:
            raise NotReplayable(str(err)) from None

    def _store(self, array: np.ndarray) -> str:
        if array.dtype == object:
            raise NotReplayable("an array of objects")
        if id(array) in self._keys:
            return self._keys[id(array)]
        key = self._keys[id(array)] = f"a{len(self.arrays)}"
        self.arrays[key] = array
        return key

    def _placeholder(self, value: Any):
        if isinstance(value, Placeholder):
            return {"call": value.call, "item": value.item}
        if type(value) in (dict, RecordedDict) and RECORDED in value:     # not a Reseeded run: encode's
            return self.encode(value[RECORDED])
        return None


def exercise_data(stem: str, course: CourseConfig, variant: Variant | None = None) -> tuple[dict, dict[str, np.ndarray]]:
    """check_data/<stem>.json's content and its arrays, for the visible checks of `stem` (on a
    student's variant: their seed's inputs)."""
    arrays = Arrays()
    checks = []
    for check in CHECKS[stem]:
        cfg = course.check(check.id)
        if not cfg.hidden:
            checks.append(_check_data(check, course, arrays, variant) | {"id": check.id, "title": check.title,
                                                                          "points": cfg.points})
    hidden = sum(course.check(c.id).hidden for c in CHECKS[stem])
    limits = {"call_timeout": course.limits.call_timeout, "import_timeout": course.limits.import_timeout,
              "wall_factor": course.limits.wall_factor}
    return ({"format": FORMAT, "variant": variant.student if variant else VARIANT,
             "seed": variant.seed if variant else course.seed, "exercise": stem,
             "title": course.exercises[stem].title, "limits": limits, "checks": checks,
             "hidden": hidden, "graded": list(RETURNS.get(stem, ())), "both_forms": course.both_forms,
             "hand_values_later": stem == "hand_computation"}, arrays.arrays)


def _check_data(check: Check, course: CourseConfig, arrays: Arrays, variant: Variant | None = None) -> dict:
    """What check.py needs to run `check` and judge its answer as the grader does. A check it could
    not replay is a fault of the kit, said when the handout is written, not a check left out."""
    from autograder.grading.submission import expected_answer

    inputs, expected = expected_answer(check, course.seed, variant)
    recorder = Recorder(returns=EXERCISES[check.exercise].returns)
    try:
        template = check.run(recorder, inputs)
        if check.exercise == "hand_computation":
            return _hand_data(check, recorder, expected, course, inputs)
        calls = [step | {"args": arrays.encode(step["args"]), "kwargs": arrays.encode(step["kwargs"])["dict"]}
                 for step in recorder.calls]
        answer = arrays.encode(template)
    except (NotReplayable, TypeError, ValueError, KeyError, AttributeError) as err:
        raise NotReplayable(f"{check.id} cannot be replayed by check.py: its run computes with the answers "
                            f"({err})") from None
    prop = getattr(check.compare, "property", None)
    if prop is not None:
        params = check.compare.params(Context(course=course, inputs=inputs), expected)
        # A property check that the grader diagnoses by comparing arrays (`Check.match`) ships what
        # that needs, under "match"; check.py names its mistakes as it does an array check's.
        # Otherwise its mistakes are named by their recognisers or by the property itself.
        match = _arrays_data(check, check.match, inputs, expected, course, arrays) \
            if getattr(check.match, "names", None) else _property_data(check, inputs, expected, params, course, arrays)
        return {"kind": "property", "calls": calls, "answer": answer, "property": prop,
                "params": arrays.encode(params)} | ({"match": match} if match else {})
    if getattr(check.compare, "names", None) is None or check.expected_run is not None:
        raise NotReplayable(f"{check.id} cannot be judged by check.py: its compare is neither compare_arrays "
                            f"nor compare_property")
    return {"kind": "arrays", "calls": calls, "answer": answer,
            **_arrays_data(check, check.compare, inputs, expected, course, arrays)}


def _arrays_data(check: Check, compare, inputs: dict, expected, course: CourseConfig, arrays: Arrays) -> dict:
    """How check.py compares an answer with the right one and the known mistakes' (`compare`: a
    compare_arrays), and sees what is wrong in it."""
    tolerances = {name: {"rtol": tol.rtol, "atol": tol.atol}
                  for name, tol in (("float64", course.tolerances.float64), ("float32", course.tolerances.float32))}
    float32_inputs = any(isinstance(v, np.ndarray) and v.dtype == np.float32 for v in inputs.values())
    return {"names": list(compare.names), "weights": list(compare.weights),
            "expected": arrays.encode(_as_arrays(expected)), "tolerances": tolerances,
            "float32_inputs": float32_inputs, "mistakes": _mistakes(check, inputs, expected, course, arrays),
            SHIPPED: _narrowing(check, inputs, expected, course, arrays),
            **_observer_data(check, inputs, arrays)}


def _property_data(check: Check, inputs: dict, expected, params: dict, course: CourseConfig,
                   arrays: Arrays) -> dict | None:
    """How check.py names the mistakes of a property check the grader compares with its mutants by
    the property itself (no `Check.match` of arrays): by their recognisers, and each mutant's
    answer as the check's parameters made with it (an answer is the mutant's when the property
    finds nothing wrong with it against those). A check whose parameters do not hold the answer
    compared with (a std band), or with a `match` of its own that compares nothing (`scaling`'s
    seed and n_trials), ships recognisers only. The expected answer is shipped only where the
    parameters hold it already (the statistics of a large run, not a reference's run of the
    experiment). None: no mistake to name."""
    ctx = Context(course=course, inputs=inputs)
    compared = check.match is None and check.compare.params(ctx, expected) != check.compare.params(ctx, None)
    mistakes = _mistakes(check, inputs, expected, course, arrays, lambda a: check.compare.params(ctx, a), compared)
    if not mistakes:
        return None
    narrowing = _narrowing(check, inputs, expected, course, arrays, lambda a: check.compare.params(ctx, a)) \
        if compared else {}
    return {"agree": "property", "expected": arrays.encode(params.get("expected")),
            "inputs": arrays.encode(dict(inputs)), "mistakes": mistakes, SHIPPED: narrowing}


def _observer_data(check: Check, inputs: dict, arrays: Arrays) -> dict:
    """The check's inputs and the observer the descriptor names for its function (its kind and
    arguments), for check.py to see in a wrong answer what the grader sees, and to apply the
    recognisers of its mistakes."""
    observer = EXERCISES[check.exercise].observe.get(check.function)
    return {"inputs": arrays.encode(dict(inputs))} | (
        {"observer": observer.spec} if isinstance(observer, Observer) else {})


def _hand_data(check: Check, recorder: Recorder, expected, course: CourseConfig, inputs: dict) -> dict:
    """No answer: the shape, whether rows sum to 1, which earlier step this one follows from, and
    the grader's hint for an answer rounded early. A step's given inputs (Q, D_K, ...) come with
    their values ("given"), for a file that does not define them (`inputs`: a variant's numbers)."""
    from autograder.diagnosis.explain import candidates

    name = recorder.calls[0]["name"]
    step = SELF_CHECK_STEPS.get(name)
    first = ROUNDING_STEPS.get(name) if step is None else None
    follows = step or first
    given = given_inputs(inputs)
    calls = [{"op": "value", "name": n, "args": [], "kwargs": {}}
             | ({"given": given[n].tolist()} if n in given else {}) for n in (name, *(follows[1:] if follows else ()))]
    return {"kind": "hand", "calls": calls, "answer": {"tuple": [{"call": n, "item": None} for n in range(len(calls))]},
            "names": [name], "hand_atol": course.tolerances.hand,
            "hand": {"shape": list(np.shape(expected)), "rows_sum_to_one": name in ROWS_SUM_TO_ONE,
                     "from": list(step) if step else [], "rounding_from": list(first) if first else [],
                     "rounded_early": {"id": ROUNDED_EARLY_MISTAKE, "hint": next(
                         m.hint for m in candidates(check) if m.id == ROUNDED_EARLY_MISTAKE)}}}


def _as_arrays(answer):
    if isinstance(answer, tuple):
        return tuple(_as_arrays(a) for a in answer)
    return np.asarray(answer)


def _mistakes(check: Check, inputs: dict, expected, course: CourseConfig, arrays: Arrays,
              as_data=_as_arrays, compared: bool = True) -> list[dict]:
    """The mutants' answers on these inputs that differ from the right one, with their hints
    (each written as `as_data` makes it; none when the check compares no answer with a mutant's,
    `compared` False).
    An entry recognised by a property of the answer is named by its recogniser, which check.py
    applies with judge/recognisers.py; one whose recogniser is not there is named after hand-in.
    What its mutants raise on these inputs is shipped as (type, message, the kind of operation
    that raised, torch-written or not), and the recogniser of an error's words by its name
    (judge/raised.py): never the mutant's code. The hint keeps its "{dtype}", which check.py
    names from the answer as the grader does."""
    from autograder.diagnosis.explain import _FAILED, _agrees, _fingerprint, _run, candidates, mutant_answers
    from autograder.diagnosis.mutant_raised import raised_at

    ctx = Context(course=course, inputs=inputs)
    key = _fingerprint(inputs)      # the inputs hashed once, for every mutant's cached run
    named = {function: name for name, function in RECOGNISERS.items()}
    raised_named = {function: name for name, function in RAISED_RECOGNISERS.items()}
    out = []
    for mis in candidates(check):
        if mis.matches is not None and mis.matches not in named:
            continue
        wrong = [a for a in mutant_answers(check, mis, inputs, key) if not _agrees(check, a, expected, ctx)] \
            if compared else []
        numpy_written = len(mis.variants())
        # A numpy-written variant that ran (its answer cached by mutant_answers) raised nothing on
        # these inputs: only the others are run again to see what they raise.
        raised = [(None if n < numpy_written and _run(check, ("mutant", mis.id, mis.stem, n), overrides, inputs,
                                                         key) is not _FAILED
                   else raised_at(check, overrides, inputs), n >= numpy_written)
                  for n, overrides in enumerate(mis.variants(errors=True))] if mis.matches is None else []
        raises = sorted({(kind, text, operation_kind(line), by_torch) for found, by_torch in raised if found
                         for kind, text, line in [found]})
        try:
            encoded = [arrays.encode(as_data(a)) for a in wrong]
        except NotReplayable:
            continue
        recogniser = {"recogniser": named[mis.matches]} if mis.matches is not None else {}
        by_words = {"raised_recogniser": raised_named[mis.raises]} if mis.raises in raised_named else {}
        if encoded or raises or recogniser or by_words:
            quotes = {"quotes": mis.quotes} if mis.quotes else {}
            out.append({"id": mis.id, "hint": mis.hint, "fallback": bool(mis.fallback),
                        "answers": encoded, "raises": [list(r) for r in raises]} | recogniser | by_words | quotes)
    return out


def _narrowing(check: Check, inputs: dict, expected, course: CourseConfig, arrays: Arrays,
               as_data=_as_arrays) -> dict:
    """What each known mistake's variants do on this check, with the functions the student may get
    right set aside (judge/narrowing.py: check.py rules out explanations with it, as the grader
    does): per mistake id its variants' functions done wrong, and per set of functions set aside
    ("," joined) whether the variant fails the check, raises, or its answer (written as `as_data`)
    when that is not the right one. Nothing is said where it leaves the check right."""
    from autograder.diagnosis.explain import _FAILED, _agrees, _fails, _fingerprint, _run, candidates

    ctx = Context(course=course, inputs=inputs)
    key = _fingerprint(inputs)      # the inputs hashed once, for every mutant's cached run
    graded = {c.function for c in CHECKS[check.exercise]}
    out = {}
    for mis in candidates(check):
        if mis.matches is not None:
            continue
        variants = []
        for n, overrides in enumerate(mis.variants()):
            outcomes = {}
            for aside in _subsets(sorted(set(overrides) & graded)):
                if len(aside) == len(overrides):
                    continue
                kept = {name: wrong for name, wrong in overrides.items() if name not in aside}
                # nothing set aside: the variant itself, as mutant_answers ran it (cached)
                answer = _run(check, ("mutant", mis.id, mis.stem, n) + (("without", aside) if aside else ()), kept,
                              inputs, key)
                outcome = {"fails": True, "raised": True} if answer is _FAILED else \
                    {"fails": _fails(check, answer, expected, ctx)}
                if answer is not _FAILED and not _agrees(check, answer, expected, ctx):
                    try:
                        outcome["answer"] = arrays.encode(as_data(answer))
                    except NotReplayable:
                        outcome["raised"] = True      # unreadable by check.py: like the grader's, it fits nothing
                if outcome.get("fails") or len(outcome) > 1:
                    outcomes[",".join(aside)] = outcome
            variants.append({"overridden": sorted(overrides), "outcomes": outcomes})
        out[mis.id] = {"variants": variants} | ({"lies_in": list(mis.lies_in)} if mis.lies_in else {})
    return out


def _subsets(names: list[str]) -> list[tuple[str, ...]]:
    subsets: list[tuple[str, ...]] = [()]
    for name in names:
        subsets += [(*subset, name) for subset in subsets]
    return [tuple(sorted(s)) for s in subsets]


def check_data_files(course: CourseConfig, variant: Variant | None = None, *,
                     compressed: bool = True) -> dict[str, bytes]:
    """check_data/'s files by name: index.json and each exercise's .json and .npz; on a student's
    variant, index.json records whose it is (`student`: what `attnkit check` grades the folder as).
    `compressed` False: each .npz's arrays stored as they are (a zip that holds it compresses it
    whole, faster than array by array)."""
    files = {}
    for stem in course.exercises:
        spec, arrays = exercise_data(stem, course, variant)
        # one line: json's C encoder (an indented dump takes its Python one, several times slower)
        files[f"{stem}.json"] = (json.dumps(spec, separators=(",", ":")) + "\n").encode("utf-8")
        buf = io.BytesIO()
        (np.savez_compressed if compressed else np.savez)(buf, **arrays)
        files[f"{stem}.npz"] = buf.getvalue()
    index = {"format": FORMAT, "variant": variant.student if variant else VARIANT, "course": course.course,
             "assignment": course.assignment, "seed": variant.seed if variant else course.seed,
             "exercises": list(course.exercises)} | ({"student": variant.student} if variant else {})
    files["index.json"] = (json.dumps(index, indent=1) + "\n").encode("utf-8")
    return files


def write_check_data(folder: Path, course: CourseConfig, variant: Variant | None = None) -> list[Path]:
    """check_data_files written into `folder`."""
    folder.mkdir(parents=True, exist_ok=True)
    written = []
    for name, data in check_data_files(course, variant).items():
        (folder / name).write_bytes(data)
        written.append(folder / name)
    return written
