"""A student's result as OUT holds it, whatever kit or course graded it: what `attnkit grade
--student ID` keeps of the others while it grades one student again. Kept only when the run
folder's key signed it (a forged or edited file is not believed)."""

from __future__ import annotations

import json
from pathlib import Path

from autograder.grading.student import MAX_RESULT_BYTES, Student, load_previous, result_path
from autograder.results import SubmissionResult


def kept_result(out: Path, student: Student, key: bytes) -> tuple[str, SubmissionResult] | None:
    """(the fingerprint the result was stored with, the result), or None."""
    path = result_path(out, student.name)
    try:
        if path.stat().st_size > MAX_RESULT_BYTES:
            return None
        stored = json.loads(path.read_text(encoding="utf-8"))["extra_data"]["fingerprint"]
    except Exception:  # noqa: BLE001 - no result, or a damaged one: nothing kept
        return None
    if not isinstance(stored, str) or not stored:
        return None
    previous = load_previous(out, student, stored, key)
    return (stored, previous) if previous is not None else None
