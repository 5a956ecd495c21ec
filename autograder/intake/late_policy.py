"""Late work: when each student's work was due, when it came, and what that costs
(course.yml `late:`, an extensions file; docs/report.md, "Late work").

A penalty is `penalty` percent of the score for each started day (or hour) past the due date
and its grace period, capped at `max_penalty`; past `no_credit_after_days` the work earns
nothing. A submission whose time cannot be known is said so ("time unknown"), never taken
as on time: it gets no penalty and its status says it.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from datetime import datetime, timedelta, tzinfo
from pathlib import Path

from autograder.config.clock import parse_due
from autograder.intake.student_csv import joined, student_rows


class LateError(ValueError):
    """A due date or an extensions row that cannot be used; the message says where."""


def read_extensions(path: Path, zone: tzinfo | str | None, students: set[str]) -> dict[str, datetime]:
    """student -> their own due date, from a CSV `student,due` (a date without an offset in
    `zone`); every bad row named by its line."""
    out, problems = {}, []
    for where, student, due in student_rows(path, "due", LateError):
        if student not in students:
            problems.append(f"{where}: no student {student!r} in this class or its roster")
            continue
        try:
            out[student] = parse_due(due, zone)
        except ValueError as err:
            problems.append(f"{where}: {err}")
    if problems:
        raise LateError(joined(problems))
    return out


@dataclass(frozen=True)
class Lateness:
    """One student's standing against their due date."""
    due: datetime
    submitted_at: datetime | None     # None: the time cannot be known
    flagged_late: bool = False        # the LMS said late (Canvas's LATE) without saying when
    percent: float = 0.0              # the penalty, percent of the score

    @property
    def late_by(self) -> timedelta | None:
        return None if self.submitted_at is None else self.submitted_at - self.due

    @property
    def late(self) -> bool:
        return self.flagged_late if self.submitted_at is None else self.percent > 0 or self.late_by > timedelta(0)

    def penalty(self, raw: float) -> float:
        return round(raw * self.percent / 100, 2)

    def said(self) -> str:
        """How the feedback page and grades.csv say it."""
        if self.submitted_at is None:
            return ("handed in late (the LMS says so), at a time that cannot be known: no penalty applied"
                    if self.flagged_late else "submission time unknown: no penalty applied")
        if self.late_by <= timedelta(0):
            return f"on time (handed in {_when(self.submitted_at)}, due {_when(self.due)})"
        return (f"handed in {_duration(self.late_by)} after the due date ({_when(self.due)}): "
                f"{self.percent:g}% off")


def lateness(config, due: datetime, submitted_at: datetime | None, flagged_late: bool = False) -> Lateness:
    if submitted_at is None:
        return Lateness(due, None, flagged_late)
    late_by = submitted_at - due - timedelta(minutes=config.grace_minutes)
    if late_by <= timedelta(0):
        return Lateness(due, submitted_at)
    if config.no_credit_after_days is not None and late_by > timedelta(days=config.no_credit_after_days):
        return Lateness(due, submitted_at, percent=100.0)
    unit = timedelta(days=1) if config.per == "day" else timedelta(hours=1)
    started = math.ceil(late_by / unit)
    return Lateness(due, submitted_at, percent=min(config.max_penalty, started * config.penalty))


def _when(moment: datetime) -> str:
    return moment.isoformat(timespec="minutes")


def _duration(delta: timedelta) -> str:
    minutes = int(delta.total_seconds() // 60)
    days, rest = divmod(minutes, 24 * 60)
    hours, mins = divmod(rest, 60)
    parts = [f"{days} day{'s' * (days != 1)}" if days else "", f"{hours} h" if hours else "",
             f"{mins} min" if mins and not days else ""]
    return " ".join(p for p in parts if p) or "under a minute"

