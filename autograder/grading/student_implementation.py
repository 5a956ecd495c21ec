"""The submission's functions as the checks call them (`StudentImplementation`): through the
sandbox's session of one file, plain data back or a StudentCallError that says what the call did."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from autograder.checks.base import RaisedError, StudentCallError
from autograder.checks.contract import RETURNS
from autograder.judge import calls
from autograder.intake.facts import stubs
from autograder.sandbox.outcome import Reason

if TYPE_CHECKING:
    import numpy as np

NOT_IMPLEMENTED = "NotImplementedError"


class StudentImplementation:
    """The submission's functions, called through the sandbox. Each call returns plain data or
    raises StudentCallError (a function that hung is not called again: the sandbox answers at once)."""

    def __init__(self, session, stem: str, filename: str, defined_in_skipped: dict[str, int] | None = None,
                 source: str = ""):
        self._session, self._stem, self._filename = session, stem, filename
        self._source = source      # read for stubs only when a call returns None
        self._defined_in_skipped = defined_in_skipped or {}   # name -> a skipped cell that defines it
        self._cache: dict[tuple, Any] = {}
        self.dtypes: set[str] = set()

    @property
    def source(self) -> str:
        """The student's code, as graded (a hint names only what it holds: judge/quoted.py)."""
        return self._source

    def __getattr__(self, name: str):
        if name.startswith("_") or name not in RETURNS[self._stem]:
            raise AttributeError(name)
        return lambda *args, **kwargs: self._call(name, args, kwargs)

    def fresh(self, name: str):
        """`name`, called anew each time: a check that calls twice with the same seed wants two answers."""
        if name not in RETURNS[self._stem]:
            raise AttributeError(name)
        return lambda *args, **kwargs: self._call(name, args, kwargs, cached=False)

    def fresh_each(self, name: str, calls: list[dict]) -> list:
        """`name` called anew with each keyword arguments of `calls`, in one request to the child
        (each call a round trip would cost more than a small run itself); raises at the first
        call that does not answer, as calling one after another would."""
        if name not in RETURNS[self._stem]:
            raise AttributeError(name)
        outcomes = self._session.call_each(name, list(calls), returns=RETURNS[self._stem][name])
        return [self._unwrap(name, outcome) for outcome in outcomes]

    def probe(self, name: str, args: list, *, read_only: bool = False, echo: bool = False):
        """`name(*args)` called anew, its arrays read-only when asked; with `echo`, (the answer, the
        array arguments as the call left them). An array passed twice is one array in the call."""
        if name not in RETURNS[self._stem]:
            raise AttributeError(name)
        outcome = self._session.call(name, list(args), {}, returns=RETURNS[self._stem][name], read_only=read_only,
                                     echo=echo)
        return self._unwrap(name, outcome)

    def _call(self, name: str, args: tuple, kwargs: dict, cached: bool = True):
        key = _cache_key(name, args, kwargs) if cached else None
        if key is not None and key in self._cache:
            return self._unwrap(name, self._cache[key])
        outcome = self._session.call(name, list(args), kwargs, returns=RETURNS[self._stem][name])
        if key is not None:
            self._cache[key] = outcome
        return self._unwrap(name, outcome)

    def value(self, name: str):
        outcome = self._session.attribute(name, returns="array")
        if outcome.status == "bad_return" and outcome.dtype == "NoneType":   # a constant still None
            raise StudentCallError(name, "not_implemented", f"not implemented yet: {name} is still None")
        return self._unwrap(name, outcome)

    def module_forward(self, class_name: str, init_args: list, state: dict, x: np.ndarray, mask=None, **how):
        """The module's forward on x (and mask), its tensors handed as `how` asks (echo, again,
        read_only: the judge's torch_module.forward)."""
        kwargs = {} if mask is None else {"mask": mask}
        outcome = self._session.call_module(class_name, init_args=list(init_args), init_kwargs={}, state=state,
                                            forward_args=[x], forward_kwargs=kwargs,
                                            returns=RETURNS[self._stem][class_name],
                                            how={k: True for k, asked in how.items() if asked})
        return self._unwrap(class_name, outcome)

    def _unwrap(self, name: str, outcome):
        error = raised_error(outcome) if outcome.status == "raised" else None
        if outcome.status == "ok":
            self.dtypes.update(d for d in _flat(outcome.dtype) if d)
            return outcome.value
        message = outcome.message or outcome.status
        if outcome.status == "raised" and error.type == NOT_IMPLEMENTED:
            raise StudentCallError(name, "not_implemented", f"not implemented yet: {name} raises NotImplementedError")
        if outcome.status == "bad_return" and outcome.dtype == "NoneType":
            stub = calls.stub_returned_none(name, outcome.dtype, stubs(self._source, self._stem))
            if stub is not None:
                raise StudentCallError(name, "not_implemented", stub)
        if outcome.reason == Reason.REFUSED:
            raise StudentCallError(name, "refused", f"{name} was {message}")
        if outcome.reason == Reason.SANDBOX:      # the sandbox failed, not the student: graded again next run
            raise StudentCallError(name, "grader_error", f"the grader could not run {name} ({message}); "
                                                         f"it is graded again on the next run")
        text = {
            "missing": calls.missing(self._filename, name, self._defined_in_skipped.get(name)),
            "raised": f"{name} raised {message}",
            "timeout": f"{name} did not return within the time limit ({message})",
            "crashed": f"{name} crashed the process: {message}",
            "bad_return": f"{name} {message}",    # the sandbox says what the call did: "returned ...", "gave ..."
            "not_run": f"{self._filename} could not be run: {message}",
        }.get(outcome.status, f"{name}: {message}")
        raise StudentCallError(name, outcome.status, text, error)


def _flat(dtypes) -> list:
    """The dtype names of an answer, a pair's and an echoed call's (nested lists) one list."""
    if isinstance(dtypes, (list, tuple)):
        return [d for item in dtypes for d in _flat(item)]
    return [dtypes]


def raised_error(outcome) -> RaisedError:
    """The typed error of a raised call, as the sandbox located it (`operation`: what raised)."""
    typed = outcome.error
    if typed is None:
        return RaisedError(type="", text=outcome.message or "", operation="", line=None, cell=None)
    return RaisedError(type=typed.type, text=typed.text, operation=typed.operation, line=typed.line,
                       cell=typed.cell)


def _cache_key(name: str, args: tuple, kwargs: dict):
    """Calls with only scalar arguments (the scaling experiment) are made once per session."""
    values = list(args) + list(kwargs.values())
    flat = [v for x in values for v in (x if isinstance(x, tuple) else (x,))]
    if all(isinstance(v, (int, float, str, type(None))) for v in flat):
        return (name, repr(args), repr(sorted(kwargs.items())))
    return None
