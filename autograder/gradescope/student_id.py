"""The student a Gradescope submission belongs to, from Gradescope's submission_metadata.json.

With variants (course.yml `variants:`) the grade is against this student's numbers. The id is the
one a Gradescope roster gives the student in `attnkit variants --roster` and `attnkit handout
--roster` (autograder/intake/roster.py, Person.key: the email, as Gradescope's roster has no login),
and the SID when there is no email. A group submission is graded as its first member's.
"""

from __future__ import annotations

import json
from pathlib import Path

METADATA = "submission_metadata.json"


MAX_BYTES = 16 * 1024 * 1024      # previous_submissions holds every earlier results.json


def read_metadata(root: Path) -> dict | None:
    """submission_metadata.json as data, or None (absent, unreadable, not an object)."""
    try:
        with open(Path(root) / METADATA, "rb") as fh:
            data = json.loads(fh.read(MAX_BYTES + 1)[:MAX_BYTES].decode("utf-8"))
    except (OSError, ValueError):
        return None
    return data if isinstance(data, dict) else None


def submission_student(root: Path, data: dict | None = None) -> str | None:
    """The submitter's id, or None (no metadata: graded on the course's own numbers)."""
    data = read_metadata(root) if data is None else data
    users = data.get("users") if isinstance(data, dict) else None
    if not isinstance(users, list) or not users or not isinstance(users[0], dict):
        return None
    first = users[0]
    for field in ("email", "sid"):
        value = first.get(field)
        if isinstance(value, (str, int)) and str(value).strip():
            return str(value).strip()
    return None
