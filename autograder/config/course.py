"""The course's settings as frozen dataclasses, their data, and pydantic's validation of them.

The bounds are written as `Constraints` (constraints.py), so that reading a course validated
before (course_cache.py) imports neither pydantic nor PyYAML. Every setting of course.yml is
declared here (or in limits.py), those only one exercise reads too (`tolerances.hand`,
`tolerances.scaling`): the exercises' checks read them from the course they are given.
"""

from __future__ import annotations

import dataclasses
import json
import weakref
from dataclasses import dataclass, field
from functools import lru_cache
from typing import Annotated, Any, Literal, Union

from autograder.config.clock import DueDate, SettingError, ZoneName, parse_due
from autograder.config.constraints import Constraints
from autograder.config.limits import Limits

FORBID_EXTRA = {"extra": "forbid"}     # pydantic's config of each type: a misspelt key is an error


@dataclass(frozen=True)
class Tolerance:
    """How close a number must be: `rtol` relative, `atol` absolute."""
    __pydantic_config__ = FORBID_EXTRA
    rtol: Annotated[float, Constraints(ge=0, le=1)]
    atol: Annotated[float, Constraints(ge=0, le=1)]


@dataclass(frozen=True)
class ScalingTolerance:
    """`tolerances.scaling`: how far the scaling experiment's statistics may be from the theory."""
    __pydantic_config__ = FORBID_EXTRA
    std_rel: Annotated[float, Constraints(gt=0, lt=1)] = 0.15        # std_unscaled within 15% of sqrt(d), scaled of 1
    entropy_slack: Annotated[float, Constraints(ge=0, lt=1)] = 0.05  # nats a "falling" curve may rise between two dims


@dataclass(frozen=True)
class Tolerances:
    """How close an answer must be: an array by the dtype it is compared in; a hand answer's entry
    (`hand`, the hand computation); the scaling experiment's statistics (`scaling`)."""
    __pydantic_config__ = FORBID_EXTRA
    float64: Tolerance = Tolerance(rtol=1e-5, atol=1e-8)
    float32: Tolerance = Tolerance(rtol=1e-4, atol=1e-5)
    hand: Annotated[float, Constraints(gt=0, lt=1)] = 0.006     # the absolute error allowed per entry of a hand answer
    scaling: ScalingTolerance = ScalingTolerance()

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
    tolerances: Tolerances = field(default_factory=Tolerances)
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
    """pydantic's validator of CourseConfig, built once per process."""
    from pydantic import TypeAdapter

    return TypeAdapter(CourseConfig)
