"""course.yml: load it, validate it, say where a mistake is.

The settings' types are in course.py; a course validated before is read back without YAML or
pydantic (course_cache.py); the bounds of a setting are Constraints (constraints.py); where the
kit's files and caches are, paths.py (its names are also here).
"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING

from autograder.config.paths import DEFAULT_COURSE, KIT_DATA, KIT_ROOT, cache_dir  # noqa: F401
from autograder.speedups import on

if TYPE_CHECKING:
    import yaml

    from pydantic import ValidationError

    from autograder.config.course import CourseConfig


class ConfigError(Exception):
    """A course.yml that cannot be used; the message names the key and line."""


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
    text libyaml refuses is read again by PyYAML's own, whose error the messages are made from.
    A date or time (`due: 2026-03-02T23:59:00-05:00`, unquoted) is kept as the text written: the
    setting reads it (config/clock.py), and says at its line what is wrong with it (YAML's own
    reading fails without a line on `2026-02-30`)."""
    import yaml

    fast = getattr(yaml, "CSafeLoader", None)
    if fast is not None:
        try:
            return yaml.compose(text, Loader=fast), yaml.load(text, Loader=_as_text(fast))
        except yaml.YAMLError:
            pass
    return yaml.compose(text, Loader=yaml.SafeLoader), yaml.load(text, Loader=_as_text(yaml.SafeLoader))


def _as_text(loader: type) -> type:
    """`loader` with YAML's timestamps read as the text they are written as."""
    import yaml

    made = _TEXT_TIMESTAMPS.get(loader)
    if made is None:
        made = _TEXT_TIMESTAMPS[loader] = type(f"Text{loader.__name__}", (loader,), {})
        made.add_constructor("tag:yaml.org,2002:timestamp", yaml.SafeLoader.construct_scalar)
    return made


_TEXT_TIMESTAMPS: dict[type, type] = {}


def load_course(path: Path | str | None = None, *, known_checks: dict[str, list[str]] | None = None) -> CourseConfig:
    """Read and validate course.yml. `known_checks` ({stem: [check ids]}) lets the loader
    reject ids that no check implements and report checks that have no points."""
    path = Path(path) if path is not None else DEFAULT_COURSE
    try:
        raw = path.read_bytes()
        text = raw.decode("utf-8")
    except OSError as err:
        raise ConfigError(f"{path}: cannot read the course file ({err.strerror or err})") from None
    except UnicodeDecodeError as err:
        raise ConfigError(f"{path}: cannot read the course file ({err})") from None
    cache = None
    if on("course_cache"):
        # Imported here, not above: the sandbox's Limits, one of the course's types, takes its
        # bounds from constraints.py in this package, and importing that runs this file first.
        from autograder.config import course_cache as cache
    course = cache.remembered(raw) if cache is not None else None
    if course is None:
        course, root = _validated(path, text)
        if cache is not None:
            cache.remember(raw, course)
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

    from autograder.config.course import course_from_data

    try:
        course = course_from_data(data)
    except ValidationError as err:
        raise _located(err, path, root) from None
    return course, root


def _located(err: ValidationError, path: Path, root) -> ConfigError:
    """pydantic's errors as `file:line: key.path: message`, one per line."""
    from autograder.config.clock import SettingError

    lines = []
    for e in err.errors():
        loc = tuple(p for p in e["loc"] if not (isinstance(p, str) and p in ("CheckConfig", "float")))
        raised = (e.get("ctx") or {}).get("error")
        if isinstance(raised, SettingError):      # a check across settings, about one of them
            loc += (raised.key,)
        key = ".".join(str(p) for p in loc) or "(top level)"
        message = e["msg"].removeprefix("Value error, ")     # the kit's own sentence, as it wrote it
        lines.append(f"{path}:{_line_of(root, loc)}: {key}: {message}")
    return ConfigError("invalid course file\n  " + "\n  ".join(dict.fromkeys(lines)))


def validate_check_ids(course: CourseConfig, path: Path | str | None, known_checks: dict[str, list[str]]) -> None:
    """What load_course's `known_checks` does, for a course loaded without (`attnkit check` reads
    its course before it imports the checks, to start its children first)."""
    if not _ids_match(course, known_checks):
        path = Path(path) if path is not None else DEFAULT_COURSE
        _check_ids_match(course, known_checks, path, None, path.read_text(encoding="utf-8"))


def _ids_match(course: CourseConfig, known: dict[str, list[str]]) -> bool:
    return all(stem in known and set(ex.checks) == set(known[stem]) for stem, ex in course.exercises.items())


def _check_ids_match(course: CourseConfig, known: dict[str, list[str]], path: Path, root, text: str) -> None:
    if _ids_match(course, known):
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
