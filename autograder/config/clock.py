"""course.yml's times, as the instructor writes them: a due date and an IANA zone, read and
checked where course.yml is validated, each at its own key and line; and the zone in which the
times an LMS writes without one are read (`course_zone`).

YAML reads an unquoted `due: 2026-03-02T23:59:00-05:00` as a date and time, not as text; the
due date is kept as the ISO 8601 text it stands for (with its offset, or without one when YAML's
value had none: then in `late.timezone`), so the course's data stays plain JSON. Like
constraints.py, these markers are read by pydantic only where a course file is validated.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import date, datetime, timedelta, timezone, tzinfo
from typing import Any


class SettingError(ValueError):
    """A setting that cannot be used, raised by a check across settings (__post_init__): `key` is
    the setting it is about, so that the message names that key's line."""

    def __init__(self, key: str, message: str):
        super().__init__(message)
        self.key = key


@dataclass(frozen=True)
class DueDate:
    """A date and time: ISO 8601 text, or the date and time YAML read from one (unquoted)."""

    def __get_pydantic_core_schema__(self, source: Any, handler: Any) -> Any:
        from pydantic_core import core_schema

        return core_schema.no_info_before_validator_function(_due_text, handler(source))


@dataclass(frozen=True)
class ZoneName:
    """An IANA time zone's name (America/Toronto), known to this Python's zone database."""

    def __get_pydantic_core_schema__(self, source: Any, handler: Any) -> Any:
        from pydantic_core import core_schema

        return core_schema.no_info_after_validator_function(_zone_name, handler(source))


def _due_text(value: Any) -> Any:
    if isinstance(value, datetime):
        return value.isoformat()
    if isinstance(value, date):
        value = value.isoformat()      # refused below: a date without a time of day
    if isinstance(value, str):
        parse_iso(value)               # a ValueError that says what is wrong, at this key
    return value


def _zone_name(name: str) -> str:
    named_zone(name)
    return name


def parse_due(text: str, zone: tzinfo | str | None) -> datetime:
    """A due date with its time zone: ISO 8601 with an offset, or without one in `zone` (an IANA
    name or a tzinfo). A date without a time of day is refused: read as midnight, it would be due a
    day early."""
    when = parse_iso(text)
    if when.tzinfo is None:
        if not zone:
            raise ValueError(f"{text!r} has no time zone: add its offset (2026-03-02T23:59:00-05:00) or set "
                             f"late.timezone (America/Toronto)")
        when = when.replace(tzinfo=named_zone(zone) if isinstance(zone, str) else zone)
    return when


def parse_iso(text: str) -> datetime:
    """A date and time as ISO 8601 writes it, with its offset if it has one; ValueError otherwise."""
    text = str(text).strip()
    try:
        when = datetime.fromisoformat(text)
    except ValueError:
        raise ValueError(f"{text!r} is not a date and time as ISO 8601 writes it "
                         f"(2026-03-02T23:59:00-05:00, or 2026-03-02 23:59 with timezone:)") from None
    if "T" not in text.upper() and " " not in text:
        raise ValueError(f"{text!r} is a date without a time of day (it would be due at its first minute): "
                         f"write the time too, 2026-03-02T23:59")
    return when


def named_zone(name: str) -> tzinfo:
    from zoneinfo import ZoneInfo, ZoneInfoNotFoundError

    try:
        return ZoneInfo(name)
    except (ZoneInfoNotFoundError, ValueError):
        raise ValueError(f"no time zone {name!r} (an IANA name such as America/Toronto or Europe/Paris)") from None


@dataclass(frozen=True)
class CourseZone:
    """The zone of the times an LMS writes without one (Moodle's worksheet, a --submitted-at file):
    course.yml's `late.timezone`, else the due date's own offset, said so."""
    zone: tzinfo
    said: str

    def mismatch(self, due: datetime) -> str:
        """A sentence when `late.timezone` and the due date's offset disagree at the due date."""
        own = due.utcoffset()
        theirs = due.astimezone(self.zone).utcoffset()
        if own is None or own == theirs:
            return ""
        return (f"late.timezone {self.zone} is {_offset(theirs)} on the due date, whose own offset is "
                f"{_offset(own)}: the due date is read as written; check which zone is meant")


def course_zone(late) -> CourseZone:
    """The zone course.yml's `late:` gives times written without one (see CourseZone)."""
    if late.timezone:
        return CourseZone(named_zone(late.timezone), f"{late.timezone} (course.yml late.timezone)")
    if late.due is not None:
        due = parse_iso(late.due)
        if due.tzinfo is not None:
            offset = due.utcoffset()
            return CourseZone(timezone(offset), f"UTC{_offset(offset)}, the due date's offset (set late.timezone, "
                                                f"e.g. America/Toronto, to follow daylight saving)")
    return CourseZone(timezone.utc, "UTC (course.yml gives no zone: set late.timezone)")


def _offset(delta: timedelta) -> str:
    minutes = int(delta.total_seconds() // 60)
    sign = "-" if minutes < 0 else "+"
    hours, mins = divmod(abs(minutes), 60)
    return f"{sign}{hours:02d}:{mins:02d}"
