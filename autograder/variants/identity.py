"""Whose variant a folder is graded as, on the paths where the student grades their own work.

A per-student handout records its student in check_data/index.json (`student`); `attnkit check`,
`--watch` and `pytest autograder` in that folder grade against that student's numbers (their own
checking: what counts is the grader's, which takes the id from the class folder, nbgrader or
Gradescope, never from this file). Under JupyterHub the login is the student's id.
"""

from __future__ import annotations

import json
import os
from pathlib import Path

INDEX = Path("check_data") / "index.json"


def recorded_identity(folder: Path) -> str | None:
    """The student a handout folder was written for, or None (a handout of the course's own numbers)."""
    try:
        data = json.loads((Path(folder) / INDEX).read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return None
    student = data.get("student") if isinstance(data, dict) else None
    return student if isinstance(student, str) and student else None


def hub_identity() -> str | None:
    """The student's id as JupyterHub (and so nbgrader's exchange) knows it, when run under a hub."""
    return os.environ.get("JUPYTERHUB_USER") or None
