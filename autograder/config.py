"""course.yml: load, validate, and say where a mistake is (file, key path, line)."""

from __future__ import annotations

import os
from functools import lru_cache
from pathlib import Path
from typing import TYPE_CHECKING, Literal, Union

from pydantic import (BaseModel, ConfigDict, Field, SerializeAsAny, ValidationError, create_model, field_serializer,
                      field_validator)

from autograder.sandbox.outcome import Limits

if TYPE_CHECKING:
    import yaml

# PyYAML is imported where a course file is parsed: a file validated before comes from
# autograder/course_cache.py, and the models build their validators when first used
# (defer_build), so a cold `attnkit check` pays for neither.

KIT_ROOT = Path(__file__).resolve().parent.parent
DEFAULT_COURSE = KIT_ROOT / "course.yml"


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


class _Strict(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True, defer_build=True)


class Tolerance(_Strict):
    rtol: float = Field(ge=0, le=1)
    atol: float = Field(ge=0, le=1)


class Tolerances(_Strict):
    """How close an array must be, by the dtype it is compared in. An exercise's own tolerances
    (`tolerances.hand`, `tolerances.scaling`) are declared by its descriptor (Exercise.tolerances)
    and validated with their types wherever a course is validated (CourseConfig._exercises_own)."""
    model_config = ConfigDict(extra="allow", frozen=True, defer_build=True)   # checked against the descriptors after
    # defaults made when needed (defer_build: a default made here would build the validator now)
    float64: Tolerance = Field(default_factory=lambda: Tolerance(rtol=1e-5, atol=1e-8))
    float32: Tolerance = Field(default_factory=lambda: Tolerance(rtol=1e-4, atol=1e-5))


class CheckConfig(_Strict):
    points: float = Field(ge=0, le=1000)
    hidden: bool = False


class ExerciseConfig(_Strict):
    title: str
    checks: dict[str, Union[CheckConfig, float]]

    @field_validator("checks")
    @classmethod
    def _points_only_shorthand(cls, checks):
        return {cid: c if isinstance(c, CheckConfig) else CheckConfig(points=c) for cid, c in checks.items()}


class VariantsConfig(_Strict):
    """Per-student variants (docs/variants.md): each student's numbers drawn from the course and their id."""
    enabled: bool = False
    # What varies: the hand computation's inputs (and the handout's text showing them), the seeds of
    # the code checks' random inputs.
    vary: tuple[Literal["hand", "code"], ...] = ("hand", "code")
    # An environment variable whose value keys the draw, so a student id alone does not give the numbers.
    secret_env: str | None = Field(None, pattern=r"^[A-Za-z_][A-Za-z0-9_]*$")


class CourseConfig(_Strict):
    course: str
    assignment: str = "self_attention"
    seed: int = Field(ge=0, lt=2**63)
    limits: Limits = Field(default_factory=Limits)      # the sandbox's own type, validated here
    # Serialized as what it holds (the exercises' own tolerances too: the cluster's transport, the
    # fingerprints); validated again with the exercises' types, the defaults included.
    tolerances: SerializeAsAny[Tolerances] = Field(default_factory=Tolerances, validate_default=True)
    hints: Literal["diagnose", "generic", "off"] = "diagnose"
    show_hidden: bool = False
    # Both attention.py and attention.ipynb hold work: grade both and keep the better ("best"),
    # or always grade one form. (An untouched stub is never preferred to work.)
    both_forms: Literal["best", "py", "ipynb"] = "best"
    variants: VariantsConfig = Field(default_factory=VariantsConfig)
    exercises: dict[str, ExerciseConfig]

    @field_validator("tolerances")
    @classmethod
    def _exercises_own(cls, tolerances: Tolerances) -> BaseModel:
        return with_exercises_own(tolerances)

    @field_serializer("tolerances")
    def _dumped_as_held(self, tolerances: BaseModel, info) -> dict:
        """As what it holds, through the held model's own serializer: a course read back from the
        cache holds tolerances built without validation, whose serializer pydantic builds when
        first asked from Python (a parent's serializer would find it not built)."""
        return tolerances.model_dump(mode=info.mode)

    def check(self, check_id: str) -> CheckConfig:
        stem = check_id.split(".", 1)[0]
        return self.exercises[stem].checks[check_id]

    def max_points(self, stem: str) -> float:
        return sum(c.points for c in self.exercises[stem].checks.values())


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
    course = course_cache.remembered(raw, CourseConfig, _tolerances_model())
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
    try:
        course = CourseConfig.model_validate(data)
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


def exercise_tolerances() -> dict[str, tuple]:
    """Every exercise's own tolerance settings (name -> (type, default)), from the descriptors."""
    from autograder.checks import EXERCISES    # the checks import this module: read when a course loads

    declared: dict[str, tuple] = {}
    for exercise in EXERCISES.values():
        for name, spec in exercise.tolerances.items():
            if name in declared or name in Tolerances.model_fields:
                raise ValueError(f"tolerances.{name} is declared twice (again by {exercise.stem})")
            declared[name] = spec
    return declared


def with_exercises_own(tolerances: Tolerances) -> BaseModel:
    """The exercises' own tolerances (Exercise.tolerances) in their types, defaults filled in; a
    name no exercise declares is an error."""
    return _tolerances_model().model_validate(tolerances.model_dump())


@lru_cache(maxsize=1)
def _tolerances_model() -> type[BaseModel]:
    """One model per process (two courses' tolerances compare equal only as instances of one class)."""
    return create_model("CourseTolerances", __base__=_Strict, __module__=__name__,
                        **{name: (info.annotation, info) for name, info in Tolerances.model_fields.items()},
                        **exercise_tolerances())


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
