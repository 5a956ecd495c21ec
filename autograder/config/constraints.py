"""Constraints on a course setting's value (`Annotated[float, Constraints(gt=0, le=3600)]`).

The course's settings are plain frozen dataclasses (course.py, the sandbox's Limits, an
exercise's own tolerances), so that a cold `attnkit check`, which reads a course validated before,
imports neither pydantic nor annotated_types. pydantic reads these constraints where a course file
is validated: it asks each Annotated metadata object for its core schema, and this one adds its
bounds to the number's (or its pattern to the string's), so the messages are pydantic's own
("Input should be greater than 0").
"""

from __future__ import annotations

from dataclasses import dataclass, fields
from typing import Any


@dataclass(frozen=True)
class Constraints:
    """Bounds on a number (`gt`, `ge`, `lt`, `le`) or a pattern for a string: a course setting's
    allowed values, read by pydantic where course.yml is validated."""
    gt: float | None = None
    ge: float | None = None
    lt: float | None = None
    le: float | None = None
    pattern: str | None = None        # a string setting's regular expression

    def __get_pydantic_core_schema__(self, source: Any, handler: Any) -> Any:
        schema = handler(source)      # float, int or str: their core schemas take these keys
        schema.update({f.name: getattr(self, f.name) for f in fields(self) if getattr(self, f.name) is not None})
        return schema
