"""A course file validated once is read again without YAML or validation.

`attnkit check` reads course.yml on every run; parsing it (PyYAML's modules, their regular
expressions) and validating it (pydantic's import and schema machinery) cost a cold check more
than the rest of the grader's start. The course's data (course.course_data), made after it was
validated, is kept as JSON under the key of everything the result depends on: the file's bytes and
the modules that define the course's types (course.py, constraints.py, limits.py). A file seen before gets the same
CourseConfig back, its dataclasses built from that data field by field (no validation: the data
is of a validated course). A cache that cannot be read, or does not fit the types, is a miss: the
file is then read and validated as always.

Kept beside the reference answers: ``$ATTNKIT_CACHE_DIR/course``, else
``$XDG_CACHE_HOME/attnkit/course`` or ``~/.cache/attnkit/course``.
"""

from __future__ import annotations

import dataclasses
import functools
import hashlib
import json
import os
import tempfile
import types
import typing
from pathlib import Path
from typing import Any

from autograder.config import clock, constraints, limits
from autograder.config import course as course_types
from autograder.config.course import CourseConfig, course_data
from autograder.config.paths import cache_dir


def cache_folder() -> Path:
    return cache_dir("course")


def _key(raw: bytes) -> str:
    h = hashlib.sha256(raw)
    for module in (course_types, clock, constraints, limits):     # the types the data is built back into
        h.update(Path(module.__file__).read_bytes())
    return h.hexdigest()


def remembered(raw: bytes) -> CourseConfig | None:
    """The course validated before from these bytes, or None (never seen, or a cache that does not fit)."""
    try:
        data = json.loads((cache_folder() / f"{_key(raw)}.json").read_text(encoding="utf-8"))
        return rebuilt(CourseConfig, data)
    except (OSError, ValueError, TypeError, KeyError, RuntimeError):    # RuntimeError: no home folder
        return None


def remember(raw: bytes, course: CourseConfig) -> None:
    """Keep the validated course of these bytes (best effort: a read-only home only costs time)."""
    tmp = None
    try:
        folder = cache_folder()
        folder.mkdir(parents=True, exist_ok=True)
        fd, tmp = tempfile.mkstemp(dir=folder, prefix=".course-", suffix=".json")
        with os.fdopen(fd, "w", encoding="utf-8") as fh:
            fh.write(json.dumps(course_data(course)))
        os.replace(tmp, folder / f"{_key(raw)}.json")     # whole or not at all, for a reader beside
        tmp = None
    except (OSError, RuntimeError):
        pass
    finally:
        if tmp is not None:
            Path(tmp).unlink(missing_ok=True)


def rebuilt(cls: type, data: Any) -> Any:
    """The dataclass `cls` built from its own course_data, field by field, without validation.
    Raises TypeError for a field type it cannot rebuild or data that does not fit (the caller
    validates)."""
    if not isinstance(data, dict):
        raise TypeError(f"not the data of {cls.__name__}")
    hints = _field_types(cls)
    # course_data leaves out a setting that is None by default (`late:`): it keeps its default
    optional = {f.name for f in dataclasses.fields(cls) if f.default is None}
    if data.keys() - hints.keys() or hints.keys() - data.keys() - optional:
        raise TypeError(f"not the data of {cls.__name__}")
    return cls(**{name: _value(hints[name], value) for name, value in data.items()})


@functools.lru_cache(maxsize=None)
def _field_types(cls: type) -> dict[str, Any]:
    """A dataclass's fields (those its __init__ takes) and their types, Annotated's bounds dropped:
    read once per type (the course holds an ExerciseConfig and checks' CheckConfig per exercise)."""
    hints = typing.get_type_hints(cls)
    return {f.name: hints[f.name] for f in dataclasses.fields(cls) if f.init}


def _value(annotation: Any, value: Any) -> Any:
    origin = typing.get_origin(annotation)
    if dataclasses.is_dataclass(annotation) and isinstance(annotation, type):
        return rebuilt(annotation, value)
    if origin is dict:
        key_type, value_type = typing.get_args(annotation)
        if key_type is not str or not isinstance(value, dict):
            raise TypeError("only dict[str, ...] is rebuilt")
        return {k: _value(value_type, v) for k, v in value.items()}
    if origin in (typing.Union, types.UnionType):
        # A validated union holds one of its members; a dict is the data of the dataclass member
        # (course.yml's `check: 1` shorthand is validated into a CheckConfig).
        classes = [a for a in typing.get_args(annotation) if dataclasses.is_dataclass(a)]
        if isinstance(value, dict) and len(classes) == 1:
            return rebuilt(classes[0], value)
        if isinstance(value, (dict, list)):
            raise TypeError("an ambiguous union")
        return value
    if origin is tuple:
        args = typing.get_args(annotation)
        if len(args) != 2 or args[1] is not Ellipsis or not isinstance(value, list):
            raise TypeError("only tuple[X, ...] is rebuilt")
        return tuple(_value(args[0], v) for v in value)
    if origin is typing.Literal or annotation in (str, int, float, bool):
        if not isinstance(value, (str, int, float, bool)):
            raise TypeError("a scalar expected")
        return float(value) if annotation is float else value
    raise TypeError(f"cannot rebuild {annotation!r}")
