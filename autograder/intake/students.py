"""The students of a class folder, and each one's folder opened without following a link.

A class folder holds one folder per student, or nbgrader's `submitted/<student>/<assignment>/`.
A student folder or assignment folder that is a symbolic link could lead to another student or
to the solutions: it is listed, refused, and never read. The folders that are graded are opened
component by component with O_NOFOLLOW, so one swapped for a link after listing is not opened.
"""

from __future__ import annotations

import os
import stat
from dataclasses import dataclass, field
from pathlib import Path

from autograder.intake.files import DIR_FLAGS, descend, ignored


@dataclass(frozen=True)
class Student:
    """A student of a class folder: their name and the folder graded as theirs."""
    name: str
    folder: Path
    # Why nothing is graded from this folder ("" when it is graded): a student folder or
    # assignment folder that is a symbolic link could lead to another student or the solutions.
    refused: str = ""
    # An LMS's flat download (autograder.intake.lms): (the name the student gave a file, its name in
    # `folder`), graded as if those files were the student's folder. Empty: `folder` is theirs.
    uploads: tuple[tuple[str, str], ...] = ()
    lms_id: str = ""        # the LMS's number for the student, read from its file or folder names
    # The name the class folder gave the submission (Canvas's `lastfirst_12345`, a folder's name)
    # when `name` is the student's identity from the roster instead (autograder.intake.identify).
    given_as: str = ""
    lms_late: bool = False  # the LMS's download marks it late (Canvas's `LATE_`), without saying when
    # What of the class folder it was read from, as the instructor finds it there (said, not compared).
    source: str = field(default="", compare=False)
    # One of several submissions that claim one student (autograder.intake.identify): whose
    # (their id); this one is graded apart under its own key, on that student's numbers.
    claim_of: str = ""
    # Canvas's download names it as it names its Test Student (Student View's fake user): set
    # aside unless the roster says it is a student.
    named_test_student: bool = False


def find_students(class_dir: Path, assignment: str, exclude: tuple[Path, ...] = ()) -> list[Student]:
    """One folder per student; nbgrader's `submitted/<student>/<assignment>/` layout is read too.
    Hidden folders, zip litter (__MACOSX) and the folders in `exclude` (OUT, when it lies inside
    the class folder) are not students. A student folder (or its assignment folder) that is a
    symbolic link is listed, refused: it is never read."""
    class_dir = Path(class_dir)
    if not class_dir.is_dir():
        raise FileNotFoundError(f"{class_dir}: no such folder")
    root = class_dir / "submitted" if (class_dir / "submitted").is_dir() else class_dir
    root = Path(os.path.realpath(root))      # the instructor's own path may pass through links
    skip = {_real(p) for p in exclude}
    students = []
    for folder in sorted(root.iterdir(), key=lambda p: p.name):
        if ignored(folder.name) or _real(folder) in skip:
            continue
        if folder.is_symlink():
            if folder.is_dir():
                students.append(Student(folder.name, folder, source=folder.name, refused=(
                    f"the submission folder {folder.name} is a symbolic link, not a folder of its own; "
                    f"nothing was graded from it")))
            continue
        if not folder.is_dir():
            continue
        nested = folder / assignment
        if nested.is_symlink():
            students.append(Student(folder.name, nested, source=f"{folder.name}/{assignment}", refused=(
                f"the assignment folder {folder.name}/{assignment} is a symbolic link, not a folder of its own; "
                f"nothing was graded from it")))
            continue
        students.append(Student(folder.name, nested if nested.is_dir() else folder,
                                source=f"{folder.name}/{assignment}" if nested.is_dir() else folder.name))
    return students


def _real(path: Path) -> str:
    try:
        return os.path.realpath(path)
    except (OSError, ValueError):
        return str(path)


def open_confined(folder: Path) -> int:
    """A descriptor of `folder`, reached from its parent's parent without following a link in
    the last two components (the student's folder and nbgrader's assignment folder)."""
    folder = Path(folder)
    parts = folder.parts
    fd = os.open(Path(*parts[:-2]) if len(parts) > 2 else Path(parts[0]), DIR_FLAGS & ~getattr(os, "O_NOFOLLOW", 0))
    return descend(fd, parts[-2:] if len(parts) > 2 else parts[1:])


def _listing(folder: Path, max_depth: int = 4, max_entries: int = 2000) -> list[str]:
    """Name, kind, size and mtime of what lies in a student's folder, bounded in depth and count
    so that a deep or huge tree costs nothing: what intake could grade. Walked by descriptor
    without following a link, like intake, so nothing outside the folder is looked at."""
    try:
        top = open_confined(folder)
    except OSError:
        return ["unreadable"]
    lines, stack = [], [(top, "", 0)]
    try:
        while stack:
            fd, rel, depth = stack.pop()
            try:
                with os.scandir(fd) as it:
                    entries = sorted((e for _, e in zip(range(max_entries), it)), key=lambda e: e.name)
                for entry in entries:
                    if len(lines) >= max_entries:
                        break
                    try:
                        st = entry.stat(follow_symlinks=False)
                    except OSError:
                        continue
                    lines.append(f"{rel}/{entry.name}:{st.st_mode:o}:{st.st_size}:{st.st_mtime_ns}:{st.st_ino}")
                    if stat.S_ISDIR(st.st_mode) and depth < max_depth:
                        try:
                            stack.append((os.open(entry.name, DIR_FLAGS, dir_fd=fd), f"{rel}/{entry.name}",
                                          depth + 1))
                        except OSError:
                            pass
            finally:
                os.close(fd)
    finally:
        for fd, _, _ in stack:
            os.close(fd)
    return lines
