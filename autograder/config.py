"""course.yml: the course's settings as frozen dataclasses; load, validate, say where a mistake is.

The settings are plain dataclasses, their bounds written as `Constraints` (autograder/constraints.py):
pydantic validates them where a course file is read for the first time (`_validated`), and a cold
`attnkit check`, which reads a course validated before (autograder/course_cache.py), imports
neither pydantic nor PyYAML.
"""

from __future__ import annotations

import dataclasses
import json
import os
import weakref
from dataclasses import dataclass, field
from functools import lru_cache
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Any, Literal, Union

from autograder.constraints import Constraints
from autograder.sandbox.outcome import Limits
from autograder.speedups import on

if TYPE_CHECKING:
    import yaml

    from pydantic import ValidationError

KIT_ROOT = Path(__file__).resolve().parent.parent
# The course, solutions/ and exercises/: the checkout's own, or, installed from a wheel, the
# copies that ship inside the package (autograder/data links to the checkout's in a clone).
KIT_DATA = KIT_ROOT if (KIT_ROOT / "course.yml").is_file() else Path(__file__).resolve().parent / "data"
DEFAULT_COURSE = KIT_DATA / "course.yml"
FORBID_EXTRA = {"extra": "forbid"}     # pydantic's config of each type: a misspelt key is an error


def cache_dir(part: str) -> Path:
    """Where the kit keeps what it computed once (`part`: reference, course, preflight):
    $ATTNKIT_CACHE_DIR/part, else $XDG_CACHE_HOME/attnkit/part, else ~/.cache/attnkit/part."""
    explicit = os.environ.get("ATTNKIT_CACHE_DIR")
    if explicit:
        return Path(explicit) / part
    base = os.environ.get("XDG_CACHE_HOME") or str(Path.home() / ".cache")
    return Path(base) / "attnkit" / part


class ConfigError(Exception):
    """A course.yml that cannot be used; the message names the key and line."""


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
    # ISO 8601 with its offset ("2026-03-02T23:59:00-05:00"), or without one and `timezone` set.
    # None: only on Gradescope, where the assignment's own due date is used (autograder/gradescope/late.py).
    due: str | None = None
    timezone: str | None = None          # an IANA zone, "America/Toronto": the due date's, and Moodle's times'
    penalty: Annotated[float, Constraints(ge=0, le=100)] = 0      # percent of the score off per started `per`
    per: Literal["day", "hour"] = "day"
    grace_minutes: Annotated[float, Constraints(ge=0, le=10080)] = 0
    max_penalty: Annotated[float, Constraints(ge=0, le=100)] = 100   # percent: the penalty's cap
    no_credit_after_days: Annotated[float, Constraints(gt=0)] | None = None
    extensions: str | None = None        # a CSV (student,due), relative to course.yml

    def __post_init__(self):
        from autograder.reports.late_policy import parse_due

        if self.due is not None:
            parse_due(self.due, self.timezone)       # a ValueError that says what is wrong, at this key


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
    run asks for it for every student, for the result's fingerprint and the feedback page's stamp
    (2,000 students: 6,000 times, about 1.5 ms each). A course is frozen; one made anew with
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


def _line_of(node: yaml.Node | None, loc: tuple) -> int | None:
    """Follow a pydantic error location through the YAML node tree to a 1-based line."""
    import yaml

    line = node.start_mark.line + 1 if node is not None else None
    for key in loc:
        if isinstance(node, yaml.MappingNode):
            match = next(((k, v) for k, v in node.value if k.value == str(key)), None)
            if match is None:
                break
            node = match[1]
            line = match[0].start_mark.line + 1
        elif isinstance(node, yaml.SequenceNode) and isinstance(key, int) and key < len(node.value):
            node = node.value[key]
            line = node.start_mark.line + 1
        else:
            break
    return line


def _repeated_keys(node: yaml.Node | None, prefix: str = "", seen: set | None = None):
    """(key path, first line, repeated line) for each key written twice in one mapping."""
    import yaml

    seen = set() if seen is None else seen
    if node is None or id(node) in seen:      # an alias met again: walked already
        return
    seen.add(id(node))
    if isinstance(node, yaml.MappingNode):
        lines: dict[str, int] = {}
        for key, value in node.value:
            name = f"{prefix}.{key.value}" if prefix else str(key.value)
            line = key.start_mark.line + 1
            if isinstance(key, yaml.ScalarNode) and key.value in lines:
                yield name, lines[key.value], line
            elif isinstance(key, yaml.ScalarNode):
                lines[key.value] = line
            yield from _repeated_keys(value, name, seen)
    elif isinstance(node, yaml.SequenceNode):
        for index, item in enumerate(node.value):
            yield from _repeated_keys(item, f"{prefix}[{index}]", seen)


def _parsed(text: str) -> tuple[yaml.Node | None, object]:
    """(the node tree, the data) of a YAML text: with libyaml's loader where PyYAML has it (a
    tenth of the time: `attnkit check` reads the course on every run), else PyYAML's own. A
    text libyaml refuses is read again by PyYAML's own, whose error the messages are made from."""
    import yaml

    fast = getattr(yaml, "CSafeLoader", None)
    if fast is not None:
        try:
            return yaml.compose(text, Loader=fast), yaml.load(text, Loader=fast)
        except yaml.YAMLError:
            pass
    return yaml.compose(text, Loader=yaml.SafeLoader), yaml.load(text, Loader=yaml.SafeLoader)


def load_course(path: Path | str | None = None, *, known_checks: dict[str, list[str]] | None = None) -> CourseConfig:
    """Read and validate course.yml. `known_checks` ({stem: [check ids]}) lets the loader
    reject ids that no check implements and report checks that have no points."""
    from autograder import course_cache

    path = Path(path) if path is not None else DEFAULT_COURSE
    try:
        raw = path.read_bytes()
        text = raw.decode("utf-8")
    except OSError as err:
        raise ConfigError(f"{path}: cannot read the course file ({err.strerror or err})") from None
    except UnicodeDecodeError as err:
        raise ConfigError(f"{path}: cannot read the course file ({err})") from None
    course = course_cache.remembered(raw) if on("course_cache") else None
    if course is None:
        course, root = _validated(path, text)
        course_cache.remember(raw, course)
    else:
        root = None     # parsed only if a check id is wrong (the message names its line)
    if known_checks is not None:
        _check_ids_match(course, known_checks, path, root, text)
    return course


def _validated(path: Path, text: str) -> tuple[CourseConfig, "yaml.Node | None"]:
    """The course file parsed and validated (the ConfigError names the line of each mistake)."""
    import yaml

    try:
        root, data = _parsed(text)
    except yaml.YAMLError as err:
        mark = getattr(err, "problem_mark", None)
        where = f"{path}:{mark.line + 1}" if mark else str(path)
        raise ConfigError(f"{where}: not valid YAML: {getattr(err, 'problem', err)}") from None
    if not isinstance(data, dict):
        raise ConfigError(f"{path}:1: expected a mapping of settings (course, seed, exercises, ...)")
    twice = [f"{path}:{first} and {path}:{again}: {key} appears twice" for key, first, again in _repeated_keys(root)]
    if twice:   # YAML's loaders keep the last silently: the first would be ignored without a word
        raise ConfigError("invalid course file\n  " + "\n  ".join(twice))
    from pydantic import ValidationError

    try:
        course = course_from_data(data)
    except ValidationError as err:
        raise _located(err, path, root) from None
    return course, root


def _located(err: ValidationError, path: Path, root) -> ConfigError:
    """pydantic's errors as `file:line: key.path: message`, one per line."""
    lines = []
    for e in err.errors():
        loc = tuple(p for p in e["loc"] if not (isinstance(p, str) and p in ("CheckConfig", "float")))
        key = ".".join(str(p) for p in loc) or "(top level)"
        lines.append(f"{path}:{_line_of(root, loc)}: {key}: {e['msg']}")
    return ConfigError("invalid course file\n  " + "\n  ".join(dict.fromkeys(lines)))


def exercise_tolerances() -> dict[str, tuple[Any, Any]]:
    """Every exercise's own tolerance settings (name -> (type, default)), from the descriptors."""
    from autograder.checks import EXERCISES    # the checks import this module: read when a course loads

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


def _check_ids_match(course: CourseConfig, known: dict[str, list[str]], path: Path, root, text: str) -> None:
    ok = all(stem in known and set(ex.checks) == set(known[stem]) for stem, ex in course.exercises.items())
    if ok:
        return
    if root is None:
        root, _ = _parsed(text)
    problems = []
    for stem, ex in course.exercises.items():
        if stem not in known:
            problems.append(f"{path}:{_line_of(root, ('exercises', stem))}: exercises.{stem}: "
                            f"no such exercise (known: {', '.join(known)})")
            continue
        for cid in ex.checks:
            if cid not in known[stem]:
                problems.append(f"{path}:{_line_of(root, ('exercises', stem, 'checks', cid))}: "
                                f"exercises.{stem}.checks.{cid}: no such check")
        for cid in known[stem]:
            if cid not in ex.checks:
                problems.append(f"{path}:{_line_of(root, ('exercises', stem, 'checks'))}: "
                                f"exercises.{stem}.checks: no points given for {cid} (give it 0 to drop it)")
    if problems:
        raise ConfigError("invalid course file\n  " + "\n  ".join(problems))
