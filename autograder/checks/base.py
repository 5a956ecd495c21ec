"""What a check is, and the two kinds of implementation it can be run against.

A check is data: an id, inputs made from a seeded generator, a `run` that calls the
functions under test through an implementation, and a `compare` that says what differs
and where. The same `run` is applied to the student's submission (through the sandbox),
to the reference, and to the misconception mutants, so that diagnosis is "which
implementation produces what the student produced".
"""

from __future__ import annotations

import hashlib
import importlib
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Callable

import numpy as np

# What differs and where is said by the student's own checker (the judge's answers.py): a
# student reads the same sentence on their laptop as in the grader's feedback.
from autograder.judge.answers import array_problem, arrays_agree, near_one, weights_problem  # noqa: F401
# And so is what a check that tests a property with code finds wrong (the judge's properties.py).
from autograder.judge.properties import PROPERTIES
# A torch module is built and loaded as the grader builds a student's (torch_module.py).
from autograder.judge import arguments, torch_module

if TYPE_CHECKING:   # the course's types are made from the exercises, whose checks these are
    from autograder.config.course import CourseConfig, Tolerance

Inputs = dict[str, Any]


@dataclass(frozen=True)
class Check:
    """One check of an exercise: its inputs, how the answer is made and compared, and its
    title (the course's points are set in course.yml)."""
    id: str                                   # "<stem>.<function>.<case>", also the course.yml key
    title: str                                # what is checked, in a student's words
    inputs: Callable[[np.random.Generator], Inputs]
    run: Callable[[Any, Inputs], Any]         # (implementation, inputs) -> answer
    compare: Callable[[Any, Any, "Context"], list[str]]  # (answer, expected, ctx) -> problems
    random: bool = True                       # inputs depend on the seed
    # How the expected answer is made, when not by `run` on the reference (e.g. a larger run).
    expected_run: Callable[[Any, Inputs], Any] | None = None
    # How diagnosis compares the student's answer with a mutant's, when `compare` cannot
    # (a property check that ignores the expected answer). None: `compare` does.
    match: Callable[[Any, Any, "Context"], list[str]] | None = None
    # What to try when this check is hidden and fails: names the kind of input, never its values.
    advice: str = ""
    # The inputs of a student's variant (autograder/variants), for a check whose numbers vary with
    # it other than by the seed (the hand computation). None: only the seed varies.
    variant_inputs: Callable[[Any], Inputs] | None = None

    @property
    def exercise(self) -> str:
        return self.id.split(".", 1)[0]

    @property
    def task(self) -> str:
        """The task id shared with the stub: "<stem>.<function>"."""
        return ".".join(self.id.split(".")[:2])

    @property
    def function(self) -> str:
        return self.id.split(".")[1]


@dataclass
class Context:
    """What a comparison needs besides the two answers.

    A compare function never sees what the student's code returned as it was: every value is
    converted in the sandbox's child and validated again in the grader, so arrays arrive as float64
    numpy arrays (tensors and nested lists too), numbers as float, dicts as plain dicts. What was
    returned is kept in `dtypes`: the original type of each value the check's calls returned (one
    per item of a tuple), all calls of the check together: numpy's dtype name for an array or a
    numpy scalar ("float64", "float32", "float16", "int64", "bool"), torch's without "torch." for a
    tensor ("float32", "bfloat16"), "list" or "tuple" for nested sequences, the Python type for a
    number ("float", "int"), "dict" and "Figure" for those kinds. Compare with `tol`, which is the
    course's float32 tolerance when any of them (or any float32 input) is low precision, else
    float64's; decide on `dtypes` only for what the tolerance does not cover.
    """
    course: CourseConfig
    inputs: Inputs
    dtypes: set[str] = field(default_factory=set)  # the original dtype names of the answers (see above)

    @property
    def tol(self) -> Tolerance:
        loose = any(d in ("float32", "float16", "bfloat16") for d in self.dtypes) or any(
            isinstance(v, np.ndarray) and v.dtype == np.float32 for v in self.inputs.values())
        return self.course.tolerances.float32 if loose else self.course.tolerances.float64


def rng_for(seed: int, check_id: str) -> np.random.Generator:
    """Each check gets its own stream, stable across runs and independent of check order."""
    digest = int.from_bytes(hashlib.sha256(check_id.encode()).digest()[:8], "big")
    return np.random.default_rng([seed, digest])


@dataclass(frozen=True)
class RaisedError:
    """What a call raised: the exception's type, its message without the location, the operation
    that raised (when known), and where in the submission."""
    type: str
    text: str = ""
    operation: str = ""
    line: int | None = None
    cell: int | None = None


class StudentCallError(Exception):
    """A call into the submission did not return a usable value (raised, hung, crashed...)."""

    def __init__(self, function: str, status: str, message: str, error: RaisedError | None = None):
        super().__init__(message)
        self.function, self.status, self.message = function, status, message
        self.error = error            # for status "raised": what was raised


class ReferenceImplementation:
    """The reference module of a stem, with some names replaced (that is what a mutant is)."""

    def __init__(self, stem: str, overrides: dict[str, Any] | None = None):
        self.stem = stem
        self._module = importlib.import_module(f"reference.{stem}")
        self._overrides = overrides or {}
        self.dtypes: set[str] = set()

    def __getattr__(self, name: str):
        if name.startswith("_"):
            raise AttributeError(name)
        return self._overrides[name] if name in self._overrides else getattr(self._module, name)

    @property
    def overrides(self) -> dict[str, Any]:
        """The names replaced (empty: the reference itself), for caches that key on them."""
        return dict(self._overrides)

    def value(self, name: str):
        return np.asarray(self.__getattr__(name), dtype=np.float64)

    def probe(self, name: str, args: list, *, read_only: bool = False, echo: bool = False):
        """`name(*args)` on copies of the arrays (one copy of an array passed several times), as the
        student's side hands them (judge/arguments.py): read-only when asked; with `echo`, (the
        answer, the array arguments as the call left them)."""
        copies: dict[int, Any] = {}
        args = [copies.setdefault(id(a), a.copy()) if isinstance(a, np.ndarray) else a for a in args]
        args, _ = arguments.handed(args, {}, read_only=read_only)
        answer = self.__getattr__(name)(*args)
        return (answer, arguments.after(args)) if echo else answer

    def fresh(self, name: str):
        """`name`, called anew each time (the student's side caches calls with scalar arguments)."""
        return self.__getattr__(name)

    def fresh_each(self, name: str, calls: list[dict]) -> list:
        """`name` called anew with each keyword arguments of `calls` (the student's side makes
        them in one request)."""
        fn = self.__getattr__(name)
        return [fn(**kwargs) for kwargs in calls]

    def module_forward(self, class_name: str, init_args: list, state: dict[str, np.ndarray],
                       x: np.ndarray, mask: np.ndarray | None = None, **how):
        """(output, weights) of the module's forward on x (and mask); `how` as the student's side
        takes it (echo, again, read_only: judge/torch_module.py)."""
        if class_name in self._overrides:      # a mutant's module: its numpy twin where it has one
            twin = getattr(self._overrides[class_name], "numpy_forward", None)
        else:
            twin = getattr(self._module, "NUMPY_FORWARD", {}).get(class_name)
        if twin is not None:     # the module computed in numpy, without importing torch; it changes no input
            out, weights = twin(*init_args, state, x, mask)
            answer = np.asarray(out, dtype=np.float64), np.asarray(weights, dtype=np.float64)
            given = [np.array(a) for a in (x, mask) if a is not None]
            return (answer, tuple(given)) if how.get("echo") else answer
        import torch

        cls = self.__getattr__(class_name)
        forward_kwargs = {} if mask is None else {"mask": torch.from_numpy(np.asarray(mask))}
        found = torch_module.forward(cls, class_name, list(init_args), {}, state, [torch.from_numpy(np.asarray(x))],
                                     forward_kwargs, how)
        out, weights = found[0] if how.get("echo") else found
        answer = out.detach().double().numpy(), weights.detach().double().numpy()
        return (answer, tuple(t.detach().numpy() for t in found[1])) if how.get("echo") else answer


# ---------------------------------------------------------------- comparisons
def compare_arrays(*names: str, weights: tuple[str, ...] = ("weights",)):
    """A compare for answers that are one array or a tuple of arrays named `names`.

    Its `values_only` attribute compares the values alone, without the properties of weights
    (rows summing to 1): diagnosis uses it to ask whether an answer is what a mutant gives.
    """

    def named(answer, expected):
        """(name, got, expected) for each array: one array, or a tuple of them, by `names`."""
        answers = (answer,) if len(names) == 1 else tuple(answer)
        expecteds = (expected,) if len(names) == 1 else tuple(expected)
        return zip(names, answers, expecteds)

    def compare(answer, expected, ctx: Context) -> list[str]:
        problems = []
        for name, got, exp in named(answer, expected):
            problem = None
            if name in weights and np.shape(got) == np.shape(exp):
                problem = weights_problem(name, got)
            problem = problem or array_problem(name, got, exp, ctx.tol)
            if problem:
                problems.append(problem)
        return problems

    def agrees(answer, expected, ctx: Context) -> bool:
        """`not compare(answer, expected, ctx)` of the values alone, said without its sentences."""
        return all(arrays_agree(got, exp, ctx.tol) for _, got, exp in named(answer, expected))

    if weights:
        compare.values_only = compare_arrays(*names, weights=())
    else:
        compare.agrees = agrees
    compare.names, compare.weights = names, weights   # for the handout's checker, which compares the same way
    return compare


def compare_property(name: str, params: Callable[["Context", Any], dict]):
    """A compare by a property tested with code (the judge's properties.PROPERTIES[name]) with the parameters
    `params(ctx, expected)` gives. Its `property` and `params` attributes are for the handout's
    checker, which applies the same property with those parameters written into its data."""

    def compare(answer, expected, ctx: Context) -> list[str]:
        return PROPERTIES[name](answer, params(ctx, expected))

    compare.property, compare.params = name, params
    return compare
