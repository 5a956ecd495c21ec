"""The LMS's own gradebook column an export writes into (`attnkit grade --assignment NAME`).

The roster the instructor gave is the LMS's gradebook export: its header names every assignment,
Canvas's as `Self-Attention Lab (881245)` with a "Points Possible" row under it, Moodle's grade
export as `Assignment: Self-Attention Lab (Real)`; Moodle's grading worksheet is one assignment's,
its column `Grade` and its points `Maximum Grade`. `--assignment` is matched against those names
(case and spacing aside, with or without Canvas's id); the export then writes the score under that
exact header, so the LMS updates that assignment instead of creating another, scaled to its
points when they differ from the course's. Without `--assignment`, the course's id names a new
column, as before.
"""

from __future__ import annotations

import csv
import io
import re
from dataclasses import dataclass
from pathlib import Path

from autograder.intake.roster import MAX_BYTES, RosterError, _norm, is_canvas
from autograder.intake.student_csv import csv_text

# The columns of Canvas's gradebook export that say who a row is (kept in the export: Canvas's
# import needs them); every other column is an assignment or a total.
CANVAS_WHO = ("student", "id", "sisuserid", "sisloginid", "integrationid", "rootaccount", "section")
_CANVAS_ID = re.compile(r"\s*\((\d+)\)\s*$")
_MOODLE_ITEM = re.compile(r"^\s*[^:]+:\s*(.*?)\s*\((?:real|letter|percentage)\)\s*$", re.I)


@dataclass(frozen=True)
class Target:
    """Where the score goes: `column` (the header cell, exactly as the LMS wrote it), worth
    `points` there (None: unknown, the course's points kept); `who`: the roster's columns that
    name a row (Canvas), in their order."""
    column: str
    points: float | None = None
    who: tuple[str, ...] = ()
    header: tuple[str, ...] = ()          # the roster's header (a worksheet is written back whole)
    worksheet: bool = False               # Moodle's grading worksheet: every column kept
    missing_as_zero: bool = False

    def cells(self, person_cells: tuple[str, ...], columns: tuple[str, ...]) -> list[str]:
        """`columns` of a roster row (empty where the row has none)."""
        index = {h: i for i, h in enumerate(self.header)}
        return [person_cells[index[c]] if c in index and index[c] < len(person_cells) else "" for c in columns]


def read_target(path: Path, wanted: str | None, course_assignment: str, *, missing_as_zero: bool = False) -> Target:
    """The column `wanted` names in the roster at `path` (RosterError naming the file and line
    when none or several match); without `wanted`, a new column named `course_assignment`."""
    path = Path(path)
    text = csv_text(path, RosterError, "the LMS's gradebook export", MAX_BYTES)
    rows = csv.reader(io.StringIO(text, newline=""))
    header = tuple(next(rows, None) or ())
    normal = [_norm(h) for h in header]
    canvas = is_canvas(normal)
    who = tuple(h for h, n in zip(header, normal) if n in CANVAS_WHO) if canvas else ()
    if "identifier" in normal and "grade" in normal and "maximumgrade" in normal:     # Moodle's worksheet
        points = _worksheet_points(rows, normal.index("maximumgrade"))
        return Target(header[normal.index("grade")], points, (), header, worksheet=True,
                      missing_as_zero=missing_as_zero)
    if not wanted:
        return Target(course_assignment, None, who, header, missing_as_zero=missing_as_zero)
    found = [i for i, h in enumerate(header) if _names(h, wanted)]
    assignments = [h for h, n in zip(header, normal) if n not in CANVAS_WHO and _looks_graded(h)]
    if not found:
        listed = "; ".join(assignments[:12]) or "none"
        raise RosterError(f"{path} line 1: no column named {wanted!r} (--assignment); the assignments there are: "
                          f"{listed}")
    if len(found) > 1:
        raise RosterError(f"{path} line 1: {len(found)} columns match {wanted!r}: "
                          f"{'; '.join(header[i] for i in found)}; give the one you mean with its id")
    column = found[0]
    points = _canvas_points(text, column, path) if canvas else None
    return Target(header[column], points, who, header, missing_as_zero=missing_as_zero)


def _names(header: str, wanted: str) -> bool:
    """Whether the header cell is the assignment `wanted` names: exactly, without Canvas's
    `(id)`, or as Moodle's grade export writes it (`Assignment: NAME (Real)`)."""
    plain = lambda t: " ".join(t.split()).casefold()  # noqa: E731
    want = plain(wanted)
    moodle = _MOODLE_ITEM.match(header)
    return want in {plain(header), plain(_CANVAS_ID.sub("", header)), plain(moodle[1]) if moodle else None}


def _looks_graded(header: str) -> bool:
    return bool(_CANVAS_ID.search(header) or _MOODLE_ITEM.match(header))


def _canvas_points(text: str, column: int, path: Path) -> float | None:
    """The column's "Points Possible" (Canvas's second row), or None when the export has none."""
    rows = csv.reader(io.StringIO(text, newline=""))
    next(rows, None)
    for row in rows:
        if row and row[0].strip().lower() == "points possible":
            cell = row[column].strip() if column < len(row) else ""
            try:
                points = float(cell)
            except ValueError:
                raise RosterError(f"{path} line {rows.line_num}: Points Possible of this column is {cell!r}, "
                                  f"not a number") from None
            return points if points > 0 else None
        if any(c.strip() for c in row):
            return None
    return None


def _worksheet_points(rows, index: int) -> float | None:
    for row in rows:
        try:
            return float(row[index]) if index < len(row) and float(row[index]) > 0 else None
        except ValueError:
            continue
    return None


def scaled(score: float, course_points: float, target: Target | None) -> float:
    """The score in the column's points (two decimals), or as it is."""
    if target is None or not target.points or not course_points or target.points == course_points:
        return score
    return round(score * target.points / course_points, 2)
