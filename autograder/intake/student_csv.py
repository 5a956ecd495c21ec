"""A small CSV of the instructor's keyed by student (`student,<column>`: submission times,
extensions): read under a size cap, its header checked, each row with where it is for messages."""

from __future__ import annotations

import csv
import io
from collections.abc import Iterator
from pathlib import Path

MAX_BYTES = 4 * 2**20


def student_rows(path: Path, column: str, error: type[Exception]) -> Iterator[tuple[str, str, str]]:
    """(where: "FILE line N", student, the row's `column`) for each non-empty row; raises `error`
    when the file cannot be read or its header lacks `student` or `column`."""
    path = Path(path)
    try:
        text = path.read_bytes()[:MAX_BYTES].decode("utf-8-sig")
    except (OSError, UnicodeDecodeError) as err:
        raise error(f"{path}: {err}") from None
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
