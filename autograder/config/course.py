"""The course's settings as frozen dataclasses, their data, and pydantic's validation of them.

The bounds are written as `Constraints` (constraints.py), so that reading a course validated
before (course_cache.py) imports neither pydantic nor PyYAML. The tolerances' type is made from the
exercises' descriptors, which may declare their own: the exercises' checks name these types only
in annotations.
"""

from __future__ import annotations

import dataclasses
import json
import weakref
from dataclasses import dataclass, field
from functools import lru_cache
from typing import TYPE_CHECKING, Annotated, Any, Literal, Union

from autograder.config.clock import DueDate, SettingError, ZoneName, parse_due
from autograder.config.constraints import Constraints
from autograder.sandbox.outcome import Limits

FORBID_EXTRA = {"extra": "forbid"}     # pydantic's config of each type: a misspelt key is an error


@dataclass(frozen=True)
class Tolerance:
    """How close a number must be: `rtol` relative, `atol` absolute."""
    __pydantic_config__ = FORBID_EXTRA
    rtol: Annotated[float, Constraints(ge=0, le=1)]
    atol: Annotated[float, Constraints(ge=0, le=1)]


@dataclass(frozen=True)
class Tolerances:
    """How close an array must be, by the dtype it is compared in. A course's tolerances are a
    `course_tolerances()`, which adds each exercise's own (`tolerances.hand`, `tolerances.scaling`),
    declared by its descriptor (Exercise.tolerances)."""
    __pydantic_config__ = FORBID_EXTRA
    float64: Tolerance = Tolerance(rtol=1e-5, atol=1e-8)
    float32: Tolerance = Tolerance(rtol=1e-4, atol=1e-5)


if TYPE_CHECKING:
    CourseTolerances = Tolerances    # made at run time from the descriptors: course_tolerances()

Points = Annotated[float, Constraints(ge=0, le=1000)]


@dataclass(frozen=True)
class CheckConfig:
    """A check's settings in course.yml: its points, and whether students see its message."""
    __pydantic_config__ = FORBID_EXTRA
    points: Points
    hidden: bool = False


@dataclass(frozen=True)
class ExerciseConfig:
    """An exercise's settings in course.yml: its title and its checks' settings."""
    __pydantic_config__ = FORBID_EXTRA
    title: str
    # a check's points alone (`attention.softmax.rows: 1`) or its settings; held as CheckConfig
    checks: dict[str, Union[CheckConfig, Points]]

    def __post_init__(self) -> None:
        object.__setattr__(self, "checks", {cid: c if isinstance(c, CheckConfig) else CheckConfig(points=c)
                                            for cid, c in self.checks.items()})


@dataclass(frozen=True)
class VariantsConfig:
    """Per-student variants (docs/variants.md): each student's numbers drawn from the course and their id."""
    __pydantic_config__ = FORBID_EXTRA
    enabled: bool = False
    # What varies: the hand computation's inputs (and the handout's text showing them), the seeds of
    # the code checks' random inputs.
    vary: tuple[Literal["hand", "code"], ...] = ("hand", "code")
    # An environment variable whose value keys the draw, so a student id alone does not give the numbers.
    secret_env: Annotated[str, Constraints(pattern=r"^[A-Za-z_][A-Za-z0-9_]*$")] | None = None


@dataclass(frozen=True)
class LateConfig:
    """Late work (docs/report.md, "Late work"): the due date and the penalty past it."""
    __pydantic_config__ = FORBID_EXTRA
    # ISO 8601 with its offset ("2026-03-02T23:59:00-05:00", quoted or not), or without one and
    # `timezone` set. None: only on Gradescope, where the assignment's own due date is used
    # (autograder/gradescope/late.py).
    due: Annotated[str, DueDate()] | None = None
    # An IANA zone, "America/Toronto": the due date's when it has no offset, and that of every time
    # an LMS writes without one (Moodle's worksheet); without it, the due date's offset.
    timezone: Annotated[str, ZoneName()] | None = None
    penalty: Annotated[float, Constraints(ge=0, le=100)] = 0      # percent of the score off per started `per`
    per: Literal["day", "hour"] = "day"
    grace_minutes: Annotated[float, Constraints(ge=0, le=10080)] = 0
    max_penalty: Annotated[float, Constraints(ge=0, le=100)] = 100   # percent: the penalty's cap
    no_credit_after_days: Annotated[float, Constraints(gt=0)] | None = None
    extensions: str | None = None        # a CSV (student,due), relative to course.yml

    def __post_init__(self):
        if self.due is not None:
            try:
                parse_due(self.due, self.timezone)
            except ValueError as err:       # said at the due date's line
                raise SettingError("due", str(err)) from None


@dataclass(frozen=True, kw_only=True)
class CourseConfig:
    """A course (course.yml), validated: its exercises, points, seed, limits and tolerances."""
    __pydantic_config__ = FORBID_EXTRA
    course: str
    assignment: str = "self_attention"
    seed: Annotated[int, Constraints(ge=0, lt=2**63)]
    limits: Limits = field(default_factory=Limits)      # the sandbox's own type, validated here
    # A course_tolerances(): the exercises' own too. The name is resolved where a course is
    # validated or read back (course_types_namespace): the type is made from the exercises'
    # descriptors, which import this module.
    tolerances: CourseTolerances = field(default_factory=lambda: course_tolerances()())
    hints: Literal["diagnose", "generic", "off"] = "diagnose"
    show_hidden: bool = False
    # Both attention.py and attention.ipynb hold work: grade both and keep the better ("best"),
    # or always grade one form. (An untouched stub is never preferred to work.)
    both_forms: Literal["best", "py", "ipynb"] = "best"
    variants: VariantsConfig = field(default_factory=VariantsConfig)
    late: LateConfig | None = None
    exercises: dict[str, ExerciseConfig]

    def check(self, check_id: str) -> CheckConfig:
        stem = check_id.split(".", 1)[0]
        return self.exercises[stem].checks[check_id]

    def max_points(self, stem: str) -> float:
        return sum(c.points for c in self.exercises[stem].checks.values())


def course_data(course: CourseConfig) -> dict:
    """The course as JSON-able data, every setting with its value (the exercises' own tolerances
    too): what the cluster's transport, the fingerprints, the report and the cache keep."""
    data = _jsonable(dataclasses.asdict(course))
    if data.get("late") is None:       # a course without late work hashes and fingerprints as before
        data.pop("late", None)
    return data


_COURSE_JSON: tuple[weakref.ref, str] | None = None


def course_json(course: CourseConfig) -> str:
    """`json.dumps(course_data(course))`, made once for a course (the last one asked for): a class
    run asks for it several times for every student, for the result's fingerprint and the
    feedback page's stamp, and making it is not cheap. A course is frozen; one made anew with
    `dataclasses.replace` is another object and gets its own text."""
    global _COURSE_JSON
    held = _COURSE_JSON
    if held is not None and held[0]() is course:
        return held[1]
    text = json.dumps(course_data(course))
    _COURSE_JSON = (weakref.ref(course), text)
    return text


def _jsonable(value: Any) -> Any:
    if isinstance(value, dict):
        return {key: _jsonable(item) for key, item in value.items()}
    if isinstance(value, (list, tuple)):
        return [_jsonable(item) for item in value]
    return value


def course_from_data(data: Any) -> CourseConfig:
    """A course from data (course_data's, or a course file's): validated. Raises pydantic's
    ValidationError."""
    return _adapter().validate_python(data)


@lru_cache(maxsize=1)
def _adapter():
    """pydantic's validator of CourseConfig, built once per process. The annotations are strings
    (`from __future__ import annotations`); pydantic resolves them in the types' modules, and a
    name none of them defines in the locals of the frame that builds the adapter: CourseTolerances,
    made from the exercises' descriptors."""
    from pydantic import TypeAdapter

    CourseTolerances = course_tolerances()   # noqa: F841 -- resolves CourseConfig.tolerances' annotation
    return TypeAdapter(CourseConfig)


def course_types_namespace() -> dict[str, type]:
    """The names the course's annotations use that no module defines (for typing.get_type_hints)."""
    return {"CourseTolerances": course_tolerances()}


def exercise_tolerances() -> dict[str, tuple[Any, Any]]:
    """Every exercise's own tolerance settings (name -> (type, default)), from the descriptors."""
    from autograder.checks import EXERCISES    # read once, where the course's types are first made

    base = {f.name for f in dataclasses.fields(Tolerances)}
    declared: dict[str, tuple] = {}
    for exercise in EXERCISES.values():
        for name, spec in exercise.tolerances.items():
            if name in declared or name in base:
                raise ValueError(f"tolerances.{name} is declared twice (again by {exercise.stem})")
            declared[name] = spec
    return declared


@lru_cache(maxsize=1)
def course_tolerances() -> type[Tolerances]:
    """The course's tolerances: Tolerances and the exercises' own, in the types and with the
    defaults their descriptors declare. One type per process (two courses' tolerances compare
    equal only as instances of one class)."""
    own = [(name, annotation, field(default=default)) for name, (annotation, default) in exercise_tolerances().items()]
    return dataclasses.make_dataclass("CourseTolerances", own, bases=(Tolerances,), frozen=True,
                                      namespace={"__module__": __name__, "__pydantic_config__": FORBID_EXTRA,
                                                 "__doc__": "Tolerances, and each exercise's own."})
