"""Each student's feedback page back to the LMS, as the zip its bulk feedback upload reads
(`attnkit grade ... --export canvas-feedback | moodle-feedback`).

canvas-feedback  OUT/export-canvas-feedback.zip for Canvas's "Re-Upload Submissions": a file per
                 student named as Canvas's download named that student's file,
                 `lastfirst_<user id>_<attachment id>_feedback.html`. Canvas reads the first two
                 all-digit parts of the name as the user and one of their submission's files, and
                 attaches the page to that student's submission as a comment.
moodle-feedback  OUT/export-moodle-feedback.zip for the assignment's "Upload multiple feedback
                 files in a zip": `Full Name_<participant id>_assignsubmission_file_feedback.html`,
                 the prefix as Moodle's download wrote it; Moodle matches the participant id.

Each entry is one student's self-contained page (OUT/feedback/<id>.html) and nothing else; a
student whose download gave no such name (a folder layout, a Canvas name without its file's
id) has no entry, and the run says who.
"""

from __future__ import annotations

import re
import zipfile
from pathlib import Path

from autograder.intake.students import Student

FORMATS = ("canvas-feedback", "moodle-feedback")
PAGE = "feedback.html"


def zip_name(fmt: str) -> str:
    return f"export-{fmt}.zip"


def entry_name(fmt: str, student: Student) -> str | None:
    """What the student's page is called in the zip, from the names the LMS's download gave
    their files (or their Moodle folder), read as the class was (autograder.intake.lms): the
    LMS's id is the student's own, never one a name merely holds. None when it gave none to match."""
    from autograder.intake.lms import canvas_readings, moodle_reading

    if not student.lms_id:
        return None
    if fmt == "canvas-feedback":
        for _, real in student.uploads:
            for r in canvas_readings(real):
                if r.lms_id == student.lms_id and r.file_id:
                    # Canvas reads the first two all-digit parts as user and file: the name holds no others.
                    who = r.who.replace("_", "")
                    return f"{who if who and not re.fullmatch('[0-9]+', who) else 'student'}_{r.lms_id}_" \
                           f"{r.file_id}_{PAGE}"
    if fmt == "moodle-feedback":
        named = [(student.folder.name, True)] if not student.uploads else [(real, False) for _, real in student.uploads]
        for name, is_folder in named:
            m = moodle_reading(name, is_folder)
            if m is not None and m["id"] == student.lms_id:
                # Moodle splits the name at its first four `_`: the full name holds none.
                return f"{m['who'].replace('_', ' ')}_{m['id']}_assignsubmission_file_{PAGE}"
    return None


def write_feedback_zip(out: Path, fmt: str, entries: dict[str, str]) -> tuple[Path, list[str]]:
    """OUT/export-<fmt>.zip of `entries` (student id -> name in the zip); the students left
    out (no page written)."""
    out = Path(out)
    path, left = out / zip_name(fmt), []
    tmp = path.with_name(f".{path.name}.tmp")
    with zipfile.ZipFile(tmp, "w", zipfile.ZIP_DEFLATED) as zf:
        for student, name in sorted(entries.items(), key=lambda kv: kv[1]):
            page = out / "feedback" / f"{student}.html"
            if not page.is_file():
                left.append(student)
                continue
            zf.write(page, name)
    tmp.replace(path)
    return path, left
