"""The instructor's CSV files (rosters, gradebook exports, overrides, submission times,
extensions): read under a size cap with a message that says what is wrong; a small one keyed by
student (`student,<column>`) row by row, its header checked, each row with where it is."""

from __future__ import annotations

import csv
import io
from collections.abc import Iterator
from pathlib import Path

MAX_BYTES = 4 * 2**20


def csv_text(path: Path, error: type[Exception], what: str, max_bytes: int = MAX_BYTES) -> str:
    """The text of the CSV at `path` (a byte-order mark dropped); `error` naming the file when it
    cannot be read, is larger than `max_bytes` (`what` says which file was expected) or is not UTF-8."""
    path = Path(path)
    try:
        with open(path, "rb") as fh:
            raw = fh.read(max_bytes + 1)      # never more than the cap in memory
    except OSError as err:
        raise error(f"{path}: {err.strerror or err}") from None
    if len(raw) > max_bytes:
        raise error(f"{path}: larger than {max_bytes // 2**20} MB; is it {what}?")
    try:
        return raw.decode("utf-8-sig")
    except UnicodeDecodeError as err:
        raise error(f"{path}: not UTF-8 (byte {err.start}); save it as \"CSV UTF-8\"") from None


def student_rows(path: Path, column: str, error: type[Exception]) -> Iterator[tuple[str, str, str]]:
    """(where: "FILE line N", student, the row's `column`) for each non-empty row; raises `error`
    when the file cannot be read or its header lacks `student` or `column`."""
    path = Path(path)
    text = csv_text(path, error, f"a CSV of student,{column}")
    reader = csv.reader(io.StringIO(text, newline=""))
    header = [h.strip().lower() for h in next(reader, [])]
    if "student" not in header or column not in header:
        raise error(f"{path} line 1: expected the header student,{column} (found {','.join(header) or 'nothing'})")
    for row in reader:
        if not any(c.strip() for c in row):
            continue
        cells = {h: (row[i].strip() if i < len(row) else "") for i, h in enumerate(header)}
        yield f"{path} line {reader.line_num}", cells["student"], cells[column]


def joined(problems: list[str]) -> str:
    """At most ten problems in one message, and how many more."""
    return "; ".join(problems[:10]) + (f" (and {len(problems) - 10} more)" if len(problems) > 10 else "")
