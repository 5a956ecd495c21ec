"""A course file validated once is read again without YAML or validation.

`attnkit check` reads course.yml on every run; parsing it (PyYAML's modules, their regular
expressions) and validating it (pydantic's schema machinery, its plugin scan) cost a cold check
more than the rest of the grader's start. The course's dump, made after it was validated, is kept
as JSON under the key of everything the result depends on: the file's bytes, the modules that
define the course's types (autograder/config.py, the sandbox's Limits) and pydantic's version.
A file seen before gets the same CourseConfig back, built from that dump with the models'
``model_construct`` (no validation: the dump is of a validated course). A cache that cannot be
read, or does not fit the types, is a miss: the file is then read and validated as always.

Kept beside the reference answers: ``$ATTNKIT_CACHE_DIR/course``, else
``$XDG_CACHE_HOME/attnkit/course`` or ``~/.cache/attnkit/course``.
"""

from __future__ import annotations

import dataclasses
import hashlib
import json
import os
import tempfile
import types
import typing
from pathlib import Path
from typing import Any

from pydantic import BaseModel

from autograder.config import cache_dir


def cache_folder() -> Path:
    return cache_dir("course")


def _key(raw: bytes) -> str:
    import pydantic

    from autograder import config
    from autograder.sandbox import outcome

    h = hashlib.sha256(raw)
    for module in (config, outcome):     # the types the dump is built back into
        h.update(Path(module.__file__).read_bytes())
    # the defaults of the exercises' own tolerances, declared by their descriptors
    for descriptor in sorted((Path(config.__file__).parent / "checks").glob("*/__init__.py")):
        h.update(descriptor.read_bytes())
    h.update(pydantic.VERSION.encode())
    return h.hexdigest()


def remembered(raw: bytes, model: type[BaseModel], tolerances: type[BaseModel]) -> BaseModel | None:
    """The course validated before from these bytes, or None (never seen, or a cache that does not fit).
    `tolerances`: the model of its tolerances with the exercises' own (config's), in which they are
    built back too: validating them again built pydantic's validators, 14 ms of a cold check."""
    try:
        dumped = json.loads((cache_folder() / f"{_key(raw)}.json").read_text(encoding="utf-8"))
        course = constructed(model, dumped)
        return course.model_copy(update={"tolerances": constructed(tolerances, dumped["tolerances"])})
    except (OSError, ValueError, TypeError, KeyError, RuntimeError):    # RuntimeError: no home folder
        return None


def remember(raw: bytes, course: BaseModel) -> None:
    """Keep the validated course of these bytes (best effort: a read-only home only costs time)."""
    tmp = None
    try:
        folder = cache_folder()
        folder.mkdir(parents=True, exist_ok=True)
        fd, tmp = tempfile.mkstemp(dir=folder, prefix=".course-", suffix=".json")
        with os.fdopen(fd, "w", encoding="utf-8") as fh:
            dumped = json.loads(course.model_dump_json())
            # the tolerances are a model made at load (with the exercises' own): dumped as themselves
            dumped["tolerances"] = json.loads(course.tolerances.model_dump_json())
            fh.write(json.dumps(dumped))
        os.replace(tmp, folder / f"{_key(raw)}.json")     # whole or not at all, for a reader beside
        tmp = None
    except (OSError, RuntimeError):
        pass
    finally:
        if tmp is not None:
            Path(tmp).unlink(missing_ok=True)


def constructed(model: type[BaseModel], data: dict) -> BaseModel:
    """`model` built from its own validated dump, field by field, without validation. Raises
    TypeError for a field type it cannot rebuild or data that does not fit (the caller validates)."""
    if not isinstance(data, dict):
        raise TypeError(f"not a dump of {model.__name__}")
    fields = model.model_fields
    extra = set(data) - set(fields)
    if extra and model.model_config.get("extra") != "allow":
        raise TypeError(f"not a dump of {model.__name__}")
    # a model that allows extra keys (config.Tolerances: the exercises' own) gets them as plain
    # data; `remembered` builds the tolerances again in the model that declares them
    return model.model_construct(**{name: _value(fields[name].annotation, value) if name in fields else value
                                    for name, value in data.items()})


def _value(annotation: Any, value: Any) -> Any:
    origin = typing.get_origin(annotation)
    if isinstance(annotation, type) and issubclass(annotation, BaseModel):
        return constructed(annotation, value)
    if dataclasses.is_dataclass(annotation) and isinstance(annotation, type):
        if not isinstance(value, dict):
            raise TypeError(f"not a dump of {annotation.__name__}")
        return annotation(**value)
    if origin is dict:
        key_type, value_type = typing.get_args(annotation)
        if key_type is not str or not isinstance(value, dict):
            raise TypeError("only dict[str, ...] is rebuilt")
        return {k: _value(value_type, v) for k, v in value.items()}
    if origin in (typing.Union, types.UnionType):
        # A validated union holds one of its members; a dict is the dump of the model member
        # (course.yml's `check: 1` shorthand is validated into a CheckConfig).
        models = [a for a in typing.get_args(annotation) if isinstance(a, type) and issubclass(a, BaseModel)]
        if isinstance(value, dict) and len(models) == 1:
            return constructed(models[0], value)
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
