"""The downloads learning platforms give an instructor, read as one submission per student.

folders  one folder per student (or nbgrader's `submitted/<student>/<assignment>/`): roster.py
canvas   Canvas's "Download Submissions": one flat folder of `lastfirst_12345_67890_attention.py`
         (`lastfirst_LATE_12345_...` when late; a re-submitted file becomes `attention-1.py`, which
         is Canvas's renaming, not the student's: graded as `attention.py`, no note), grouped by
         the Canvas user id 12345; the student's key is `lastfirst_12345`
moodle   Moodle's "Download submissions" in folders: `Full Name_12345_assignsubmission_file_/`
         (12345 is Moodle's participant number), or flat `Full Name_12345_assignsubmission_file_x.py`;
         the student's key is `Full Name_12345`, never the whole folder name

gradescope Gradescope's "Export Submissions", unzipped: submission_metadata.yml and one
         `submission_<id>/` folder each (intake/gradescope_export.py); the student's key is their
         email, else their SID; the file's names and times come with it

`auto` (the default) tells them apart by their names. A student's upload that is an archive is
unpacked (autograder.intake.archives) into a private temporary folder, never into the class folder,
together with the student's loose files, and that folder is graded (`staged`).
"""

from __future__ import annotations

import os
import re
import shutil
import tempfile
from contextlib import contextmanager
from dataclasses import dataclass, replace
from enum import Enum
from pathlib import Path

from autograder.intake.archives import MAX_ARCHIVE_BYTES, ArchiveRefused, Budget, extract, is_archive
from autograder.intake.files import Flag, Folder, ignored
from autograder.intake.roster import Person
from autograder.intake.students import Student, _listing, find_students
from autograder.results import Why

CANVAS_FILE = re.compile(r"^(?P<who>[^\W_]+)_(?P<late>LATE_)?(?P<id>\d+)_(?:\d+_)?(?P<name>.+)$")
CANVAS_RENAMED = re.compile(r"^(?P<stem>.+?)-(?P<n>\d{1,3})(?P<suffix>\.[A-Za-z0-9]+)$")   # a re-submission's `-1`
MOODLE_NAME = re.compile(r"^(?P<who>.+?)_(?P<id>\d+)_assign(?P<plugin>submission|feedback)_(?P<kind>[a-z]+)_(?P<name>.*)$")
NOTHING_GRADABLE = Why.nothing_gradable      # CheckResult.reason: files were there, none gradable


class Layout(str, Enum):
    AUTO = "auto"
    FOLDERS = "folders"
    CANVAS = "canvas"
    MOODLE = "moodle"
    GRADESCOPE = "gradescope"


@dataclass(frozen=True)
class ClassFolder:
    layout: Layout
    students: list[Student]
    strays: tuple[str, ...] = ()     # entries that belong to no student (said, never graded)
    # Who the students are and when each handed in, where the download says it (Gradescope's
    # export): the roster when none is given, and student key -> submission time as written.
    people: tuple[Person, ...] | None = None
    times: dict[str, str] | None = None


def read_class(class_dir: Path, assignment: str, exclude: tuple[Path, ...] = (),
               layout: Layout | str = Layout.AUTO) -> ClassFolder:
    """The students of `class_dir` in the given layout (recognised by the names when AUTO)."""
    class_dir, layout = Path(class_dir), Layout(layout)
    if layout is Layout.AUTO:
        layout = detect(class_dir)
    if layout is Layout.FOLDERS:
        return ClassFolder(layout, find_students(class_dir, assignment, exclude))
    if layout is Layout.GRADESCOPE:
        return _gradescope_export(class_dir, assignment, exclude)
    class_dir = Path(os.path.realpath(class_dir))     # the instructor's own path may pass through links
    skip = {os.path.realpath(p) for p in exclude}
    entries = [e for e in os.scandir(class_dir) if not ignored(e.name) and os.path.realpath(e.path) not in skip]
    pattern = CANVAS_FILE if layout is Layout.CANVAS else MOODLE_NAME
    groups: dict[tuple[str, str], list[tuple[str, str]]] = {}
    folders: dict[tuple[str, str], str] = {}
    strays = []
    for entry in sorted(entries, key=lambda e: e.name):
        match = pattern.match(entry.name)
        if match is None or (layout is Layout.MOODLE and match["plugin"] != "submission"):
            strays.append(entry.name)
            continue
        key = (match["who"], match["id"])
        if entry.is_dir(follow_symlinks=False) and layout is Layout.MOODLE and match["kind"] == "file":
            folders[key] = entry.name
        elif entry.is_file(follow_symlinks=False) and match["name"]:
            groups.setdefault(key, []).append((match["name"], entry.name))
        else:
            strays.append(entry.name)
    if layout is Layout.CANVAS:
        groups = {key: _as_uploaded(files) for key, files in groups.items()}
    students = []
    for key in sorted(set(groups) | set(folders)):
        name = f"{key[0]}_{key[1]}"
        if key in folders and key not in groups:
            students.append(Student(name, class_dir / folders[key], lms_id=key[1]))
        else:
            uploads = list(groups.get(key, ()))
            if key in folders:      # a folder and flat files for one student: the folder is noted, not guessed
                strays.append(folders[key])
            late = layout is Layout.CANVAS and any(CANVAS_FILE.match(real)["late"] for _, real in uploads)
            students.append(Student(name, class_dir, uploads=tuple(uploads), lms_id=key[1], lms_late=late))
    return ClassFolder(layout, students, tuple(strays))


def _gradescope_export(class_dir: Path, assignment: str, exclude: tuple[Path, ...]) -> ClassFolder:
    """Each `submission_<id>/` folder the metadata lists, named by its first submitter's email or
    SID (or the folder's name when neither is a usable id, or another submission has it)."""
    from autograder.intake.identify import SAFE_ID
    from autograder.intake.gradescope_export import METADATA, export_root, read_export

    root = export_root(class_dir)
    if root is None:
        raise FileNotFoundError(f"{class_dir}: no {METADATA} (is it Gradescope's Export Submissions, unzipped?)")
    root = Path(os.path.realpath(root))
    entries = read_export(root / METADATA)
    listed = {e.folder for e in entries}
    skip = {os.path.realpath(p) for p in exclude}
    strays = [e.name for e in sorted(os.scandir(root), key=lambda e: e.name) if e.name not in listed
              and e.name != METADATA and not ignored(e.name) and os.path.realpath(e.path) not in skip]
    students, people, times = [], [], {}
    for entry in entries:
        folder = root / entry.folder
        first = entry.submitters[0] if entry.submitters else None
        key = first.key if first is not None else ""
        name = key if key and SAFE_ID.match(key) and key not in times else entry.folder
        if not SAFE_ID.match(name) or name in times:
            strays.append(f"{entry.folder} ({METADATA} line {entry.line}: listed twice, or not a name OUT can use)")
            continue
        if folder.is_symlink():
            students.append(Student(name, folder, refused=f"the submission folder {entry.folder} is a symbolic "
                                                          f"link, not a folder of its own; nothing was graded from it"))
        elif not folder.is_dir():
            strays.append(f"{entry.folder} ({METADATA} line {entry.line}: no such folder)")
            continue
        else:
            nested = folder / assignment
            students.append(Student(name, nested if nested.is_dir() and not nested.is_symlink() else folder))
        times[name] = entry.created_at
        if first is not None:
            people.append(Person(first.name, "", first.sid, "", first.email, entry.line))
    return ClassFolder(Layout.GRADESCOPE, students, tuple(strays), tuple(people), times)


def _as_uploaded(files: list[tuple[str, str]]) -> list[tuple[str, str]]:
    """The names the student gave their files: Canvas's `-1`, `-2` taken off a re-submitted file,
    unless the student also handed in a file of that name (then both keep theirs)."""
    given = {name for name, _ in files}
    out = []
    for name, real in files:
        renamed = CANVAS_RENAMED.match(name)
        plain = f"{renamed['stem']}{renamed['suffix']}" if renamed else name
        out.append((plain if plain not in given else name, real))
    return out


def detect(class_dir: Path) -> Layout:
    """Canvas when most top-level files are named as Canvas names them, Moodle when most
    folders or files are named as Moodle does, else one folder per student."""
    from autograder.intake.gradescope_export import export_root

    if export_root(class_dir) is not None:
        return Layout.GRADESCOPE
    names = [e for e in os.scandir(class_dir) if not ignored(e.name)]
    moodle = sum(bool(MOODLE_NAME.match(e.name)) for e in names)
    canvas = sum(bool(CANVAS_FILE.match(e.name)) for e in names if e.is_file(follow_symlinks=False))
    if moodle and moodle * 2 >= len(names):
        return Layout.MOODLE
    if canvas and canvas * 2 >= len(names):
        return Layout.CANVAS
    return Layout.FOLDERS


def listing(student: Student) -> list[str]:
    """What the fingerprint of a student's submission is made of (see grading.student.fingerprint)."""
    if not student.uploads:
        return _listing(student.folder)
    lines = []
    for given, real in student.uploads:
        try:
            st = os.stat(student.folder / real, follow_symlinks=False)
            lines.append(f"{given}:{real}:{st.st_mode:o}:{st.st_size}:{st.st_mtime_ns}:{st.st_ino}")
        except OSError:
            lines.append(f"{given}:{real}:missing")
    return lines


@contextmanager
def staged(folder: Path, student: Student):
    """(the folder to grade, notes for the feedback): `folder` itself when it holds no archive
    and the student has no flat uploads; else a private temporary folder with the student's
    files and their archives unpacked, removed afterwards."""
    with Folder(folder) as root:
        if student.uploads:
            entries = list(student.uploads)
        else:
            names, _ = root.listdir(())
            visible = [n for n in names if not ignored(n) and _kind(root, n) == "file"]
            if not any(is_archive(n) for n in visible):
                yield folder, ()
                return
            entries = [(n, n) for n in visible]
        tmp = tempfile.mkdtemp(prefix="attnkit-upload-")     # 0700, the grader's own
        try:
            yield Path(tmp, "files"), _unpack(root, entries, tmp)
        finally:
            shutil.rmtree(tmp, ignore_errors=True)


def _kind(root: Folder, name: str) -> str:
    try:
        return root.kind((name,))
    except OSError:
        return "other"


def _unpack(root: Folder, entries: list[tuple[str, str]], tmp: str) -> tuple[str, ...]:
    """The loose files copied first (they win a clash), then each archive unpacked beside them."""
    files, archives = os.path.join(tmp, "files"), os.path.join(tmp, "archives")
    os.mkdir(files, 0o700)
    os.mkdir(archives, 0o700)
    notes, budget = [], Budget()
    loose = [e for e in entries if not is_archive(e[0])]
    for given, real in loose + [e for e in entries if is_archive(e[0])]:
        data = _read_upload(root, given, real, notes)
        if data is None:
            continue
        if is_archive(given):
            path = os.path.join(archives, str(len(os.listdir(archives))))
            _write_new(path, data)
            try:
                count = extract(path, given, files, budget)
                notes.append(f"your upload {given} was unpacked and its {count} files graded as your submission")
            except ArchiveRefused as err:
                notes.append(str(err))
        elif not _write_new(os.path.join(files, given), data):
            notes.append(f"{real} was not graded: another file of yours is also called {given}")
    return tuple(notes + budget.notes)


@contextmanager
def gathered(folder: Path, student: Student):
    """(the folder holding what the student handed in, notes), nothing of it opened: for a run
    whose worker unpacks the archives itself (autograder/cluster/). `folder` itself, or for flat
    uploads a private temporary folder with them under the names the student gave them."""
    if not student.uploads:
        yield folder, ()
        return
    tmp = tempfile.mkdtemp(prefix="attnkit-upload-")
    try:
        notes: list[str] = []
        with Folder(folder) as root:
            for given, real in student.uploads:
                data = _read_upload(root, given, real, notes)
                if data is not None and not _write_new(os.path.join(tmp, given), data):
                    notes.append(f"{real} was not graded: another file of yours is also called {given}")
        yield Path(tmp), tuple(notes)
    finally:
        shutil.rmtree(tmp, ignore_errors=True)


def _read_upload(root: Folder, given: str, real: str, notes: list[str]) -> bytes | None:
    """The bytes of one upload, or None (and why, in `notes`)."""
    from autograder.intake.files import MAX_BYTES

    if _kind(root, real) != "file":      # a link in the class folder could lead to anyone's file
        notes.append(f"{real} is a symbolic link or special file, not a file; it was not graded")
        return None
    limit = MAX_ARCHIVE_BYTES if is_archive(given) else MAX_BYTES
    data, _ = root.read((real,), limit=limit)
    if is_archive(given) and len(data) > limit:
        notes.append(f"your upload {given} is larger than {limit // 2**20} MB; it was not opened")
        return None
    return data


def _write_new(path: str, data: bytes) -> bool:
    try:
        fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL | getattr(os, "O_NOFOLLOW", 0), 0o600)
    except FileExistsError:
        return False
    with os.fdopen(fd, "wb") as fh:
        fh.write(data)
    return True


def with_notes(result, notes: tuple[str, ...]):
    """The result with what staging did said on every exercise (and flagged for the report)."""
    if not notes:
        return result
    said = "; ".join(notes)
    exercises = tuple(replace(e, note="; ".join(filter(None, (said, e.note))), flags=(*e.flags, Flag.ARCHIVE.value))
                      for e in result.exercises)
    return replace(result, exercises=exercises)


def uploaded_names(folder: Path, student: Student) -> list[str]:
    """What the student handed in, by name (litter left out): their flat uploads or their folder's entries."""
    if student.uploads:
        return [given for given, _ in student.uploads if not ignored(given)]
    with Folder(folder) as root:
        names, _ = root.listdir(())
    return [n for n in names if not ignored(n)]


def nothing_gradable(result, found: list[str]):
    """A submission with files but none gradable: every check keeps status "missing" (not handed
    in: an empty cell) with the reason NOTHING_GRADABLE and a message naming what was there,
    so the report and the terminal list it instead of a silent 0."""
    from autograder.reports.grades_csv import submitted

    if not found or any(submitted(e) for e in result.exercises):
        return result
    said = [e.note for e in result.exercises[:1] if e.note]
    why = (f"the submission holds {', '.join(found[:5])}{' ...' if len(found) > 5 else ''} but no file the "
           f"grader can grade (name each exercise's file as the contract does: "
           f"{', '.join(e.stem + '.py' for e in result.exercises)}, or .ipynb)")
    why = "; ".join([why, *said])
    return replace(result, exercises=tuple(
        replace(e, checks=tuple(replace(c, reason=NOTHING_GRADABLE, message=why) for c in e.checks))
        for e in result.exercises))
