"""The downloads learning platforms give an instructor, read as one submission per student.

Whose each submission is comes from the fields the platform writes itself, never from text a
student chose (the name in their profile, their file's name). Each platform's names were read
from its own source; docs/report.md ("LMS downloads") says where, and tests/lms_downloads.py
builds each as the version it stands for writes it.

folders    one folder per student (or nbgrader's `submitted/<student>/<assignment>/`): the folder's
           name is the instructor's or nbgrader's (autograder.intake.students)
canvas     Canvas's "Download Submissions", one flat folder of
           `lastfirst[_LATE]_<user id>_<file id>_<file name>` (`..._<user id>_text.html` for a text
           entry, `_link.html` for a URL). lastfirst is the student's sortable name, lower case,
           every character that is not a letter, digit or `_` dropped; the file name is the
           student's own. Both ends are the student's text, so every reading of the fixed middle
           (`_[LATE_]<digits>_<digits>_`, ASCII digits) is tried, and a name that reads as two
           users' is set aside, never guessed. A re-submitted `attention-1.py` is Canvas's renaming,
           not the student's: graded as `attention.py`. The key is `lastfirst_<user id>`.
moodle     Moodle's "Download submissions": a folder per student and plugin,
           `Full Name_<participant>_assignsubmission_<plugin>` (4.1 and later) or the same with a
           trailing `_` (3.x), read from its end; or flat files,
           `Full Name_<participant>_assignsubmission_<plugin>_<file name>`, read from the first `_`
           (Moodle writes the full name with each `_` turned into a space); a flat name that holds a
           second `_<number>_assignsubmission_<plugin>_` could be either participant's and is set
           aside. An online text (`onlinetext`, an .html file) is the student's submission when they
           handed in no file, else listed beside it. The key is `Full Name_<participant>`.
gradescope Gradescope's "Export Submissions", unzipped: submission_metadata.yml and one
           `submission_<id>/` folder each (autograder.intake.gradescope_export); the key is the first
           submitter's email, else their SID; the file's names and times come with it.

Two submissions of one student (one participant's folder in both Moodle namings, one user id
under two names) are both kept under keys of their own; autograder.intake.identify says so.

`auto` (the default) takes an LMS's layout when at least half the class folder's names fit it. A
folder that looks like a download (a name holds Moodle's `assignsubmission`, or Canvas's names
are among more files than folders) but of which fewer fit stops with the names that did not
fit (LayoutUnclear), as does a `--layout` that no name fits. A student's upload that is an
archive is unpacked (autograder.intake.archives) into a private temporary folder, never into the
class folder, together with the student's loose files, and that folder is graded (`staged`).
"""

from __future__ import annotations

import os
import re
import shutil
import tempfile
import unicodedata
from contextlib import contextmanager
from dataclasses import dataclass, field, replace
from enum import Enum
from pathlib import Path

from autograder.intake.archives import MAX_ARCHIVE_BYTES, ArchiveRefused, Budget, extract, is_archive
from autograder.intake.files import Flag, Folder, ignored
from autograder.intake.roster import Person
from autograder.intake.students import Student, _listing, find_students
from autograder.results import Why
from autograder.judge.words import counted

# Digits are ASCII: Python's \d also matches fullwidth and Arabic-Indic digits, which a student
# can type into their name and no platform writes as an id.
CANVAS_MIDDLE = re.compile(r"_(?:(?P<late>LATE)_)?(?P<id>[0-9]+)_(?:(?P<file>[0-9]+)_(?P<name>.+)|"
                           r"(?P<online>text|link)\.html)$", re.S)
CANVAS_RENAMED = re.compile(r"^(?P<stem>.+?)-(?P<n>[0-9]{1,3})(?P<suffix>\.[A-Za-z0-9]+)$")   # a re-submission's `-1`
CANVAS_TEST_STUDENT = "studenttest"      # Canvas's Student View user, "Student, Test", as its download names it
MOODLE_FOLDER = re.compile(r"^(?P<who>.+)_(?P<id>[0-9]+)_assign(?P<part>submission|feedback)_"
                           r"(?P<plugin>[a-z][a-z0-9]*)(?P<trailing>_?)$", re.S)
MOODLE_FILE = re.compile(r"^(?P<who>[^_]+)_(?P<id>[0-9]+)_assign(?P<part>submission|feedback)_"
                         r"(?P<plugin>[a-z][a-z0-9]*)_(?P<name>.+)$", re.S)
MOODLE_MARK = re.compile(r"_(?P<id>[0-9]+)_assign(?:submission|feedback)_[a-z][a-z0-9]*_")
MOODLE_LOOK = re.compile(r"assign(?:submission|feedback)", re.I)
NOTHING_GRADABLE = Why.nothing_gradable      # CheckResult.reason: files were there, none gradable


class Layout(str, Enum):
    AUTO = "auto"
    FOLDERS = "folders"
    CANVAS = "canvas"
    MOODLE = "moodle"
    GRADESCOPE = "gradescope"


class LayoutUnclear(ValueError):
    """The class folder looks like an LMS's download, but too few of its names fit it (or none
    fits the layout asked for): said with the names that did not fit, before anyone is graded."""


@dataclass(frozen=True)
class ClassFolder:
    layout: Layout
    students: list[Student]
    strays: tuple[str, ...] = ()     # entries named like no submission of the layout (said, never graded)
    # Who the students are and when each handed in, where the download says it (Gradescope's
    # export): the roster when none is given, and student key -> submission time as written.
    people: tuple[Person, ...] | None = None
    times: dict[str, str] | None = None
    # Entries that are a submission's, set aside and said (never graded): (name, why).
    set_aside: tuple[tuple[str, str], ...] = ()
    naming: str = ""                 # which of the layout's namings the names are in, as said

    def not_read(self) -> tuple[tuple[str, str], ...]:
        """Everything of the class folder graded for nobody, with why (the report lists it)."""
        why = (f"named like no {self.layout.value} submission" if self.layout in (Layout.CANVAS, Layout.MOODLE)
               else "not a submission the export lists")
        return (*((name, why) for name in self.strays), *self.set_aside)


def read_class(class_dir: Path, assignment: str, exclude: tuple[Path, ...] = (),
               layout: Layout | str = Layout.AUTO) -> ClassFolder:
    """The students of `class_dir` in the given layout (recognised by the names when AUTO).
    Raises LayoutUnclear for a folder that looks like a download but does not read as one."""
    class_dir, layout = Path(class_dir), Layout(layout)
    forced = layout is not Layout.AUTO
    if layout is Layout.AUTO:
        layout = detect(class_dir, exclude)
    if layout is Layout.FOLDERS:
        return ClassFolder(layout, find_students(class_dir, assignment, exclude))
    if layout is Layout.GRADESCOPE:
        return _gradescope_export(class_dir, assignment, exclude)
    class_dir = Path(os.path.realpath(class_dir))     # the instructor's own path may pass through links
    entries = sorted(_entries(class_dir, exclude), key=lambda e: e.name)
    read = _read_canvas if layout is Layout.CANVAS else _read_moodle
    submissions, strays, set_aside = read(entries)
    if forced and not submissions and not set_aside and entries:
        raise LayoutUnclear(f"{class_dir}: --layout {layout.value}, but no name there is named as {_NAMING[layout]} "
                            f"({_shown(strays)})")
    return ClassFolder(layout, _students(class_dir, submissions, layout), tuple(strays), set_aside=tuple(set_aside),
                       naming=_naming(layout, submissions))


_NAMING = {Layout.CANVAS: "Canvas's download names a file (`lastfirst_<user id>_<file id>_<name>`)",
           Layout.MOODLE: "Moodle's download names a submission (`Full Name_<participant>_assignsubmission_file`)"}


@dataclass
class _Submission:
    """One student's submission as the download holds it: a folder of its own, or flat uploads."""
    who: str                 # the name the platform wrote (Canvas's lastfirst, Moodle's full name)
    lms_id: str              # Canvas's user id, Moodle's participant number
    folder: str = ""
    uploads: list[tuple[str, str]] = field(default_factory=list)   # (the student's file name, its name here)
    late: bool = False
    naming: str = ""


def _entries(class_dir: Path, exclude: tuple[Path, ...]) -> list[os.DirEntry]:
    skip = {os.path.realpath(p) for p in exclude}
    return [e for e in os.scandir(class_dir) if not ignored(e.name) and os.path.realpath(e.path) not in skip]


def _shown(names: list[str], most: int = 10) -> str:
    return ", ".join(names[:most]) + (f" and {len(names) - most} more" if len(names) > most else "")


# ---------------------------------------------------------------- Canvas

@dataclass(frozen=True)
class CanvasName:
    """One way to read a name of Canvas's download."""
    who: str          # lastfirst
    lms_id: str       # the user id
    file_id: str      # the attachment id ("" for a text entry or URL)
    name: str         # the student's file name
    late: bool


def canvas_readings(name: str) -> list[CanvasName]:
    """Every way `name` reads as Canvas writes a download's file name, left to right."""
    out = []
    for at in (i for i, c in enumerate(name) if c == "_"):
        m = CANVAS_MIDDLE.match(name, at)
        if m is None or not _canvas_lastfirst(name[:at]):
            continue
        given = f"{m['online']}.html" if m["online"] else m["name"]
        out.append(CanvasName(name[:at], m["id"], m["file"] or "", given, bool(m["late"])))
    return out


def _canvas_lastfirst(text: str) -> bool:
    """Whether Canvas could have written `text` as a lastfirst: lower case letters (of any
    script), digits, marks and `_`; never an ASCII capital (so never its own `LATE`)."""
    return all(c == "_" or c.isalnum() or unicodedata.category(c)[0] == "M" for c in text) \
        and not any("A" <= c <= "Z" for c in text)


def _read_canvas(entries: list[os.DirEntry]) -> tuple[list[_Submission], list[str], list[tuple[str, str]]]:
    by_key: dict[tuple[str, str], _Submission] = {}
    strays, set_aside = [], []
    for entry in entries:
        readings = canvas_readings(entry.name)
        users = sorted({r.lms_id for r in readings})
        if not readings or not entry.is_file(follow_symlinks=False):
            strays.append(entry.name)      # a link could lead to anyone's file: never an upload
        elif len(users) > 1:
            set_aside.append((entry.name, f"reads as the file of Canvas users {' or '.join(users)}: whose it is "
                                          f"cannot be told from its name; not graded"))
        else:
            r = readings[0]
            sub = by_key.setdefault((r.who, r.lms_id), _Submission(r.who, r.lms_id, naming="flat"))
            sub.uploads.append((r.name, entry.name))
            sub.late = sub.late or r.late
    for sub in by_key.values():
        sub.uploads = _as_uploaded(sub.uploads)
    return list(by_key.values()), strays, set_aside


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


# ---------------------------------------------------------------- Moodle

def moodle_reading(name: str, is_folder: bool) -> re.Match | None:
    """How Moodle's download wrote `name` (who, id, part, plugin; a flat file's name), or None."""
    return (MOODLE_FOLDER if is_folder else MOODLE_FILE).match(name)


def _read_moodle(entries: list[os.DirEntry]) -> tuple[list[_Submission], list[str], list[tuple[str, str]]]:
    folders: dict[str, list[tuple[re.Match, str]]] = {}       # participant -> its plugins' folders
    flat: dict[tuple[str, str], _Submission] = {}
    strays, set_aside = [], []
    for entry in entries:
        is_folder = entry.is_dir(follow_symlinks=False)
        m = moodle_reading(entry.name, is_folder) if is_folder or entry.is_file(follow_symlinks=False) else None
        if m is None or m["part"] != "submission":
            strays.append(entry.name)
        elif is_folder:
            folders.setdefault(m["id"], []).append((m, entry.name))
        elif (other := MOODLE_MARK.search("_" + m["name"])) is not None:
            set_aside.append((entry.name, f"names participants {m['id']} and {other['id']}: Moodle writes no `_` "
                                          f"in a full name, so this is participant {m['id']}'s upload of a file "
                                          f"named like another's; whose it is cannot be told; not graded"))
        else:
            sub = flat.setdefault((m["who"], m["id"]), _Submission(m["who"], m["id"], naming="flat"))
            sub.uploads.append((m["name"], entry.name))
    submissions = list(flat.values())
    for participant, found in folders.items():
        files = [(m, name) for m, name in found if m["plugin"] == "file"]
        has_files = files or any(s.lms_id == participant for s in flat.values())
        # The files are the submission; an online text beside them is said, alone it is graded.
        graded = files or ([] if has_files else found[:1])
        for m, name in graded:
            submissions.append(_Submission(m["who"], participant, folder=name,
                                           naming="3.x" if m["trailing"] else "4.1+"))
        for m, name in found:
            if (m, name) not in graded:
                set_aside.append((name, f"participant {participant}'s {m['plugin']} submission, beside the files "
                                        f"graded as theirs; not graded"))
    return submissions, strays, set_aside


def _naming(layout: Layout, submissions: list[_Submission]) -> str:
    """Which of the platform's namings the download is in, as the terminal says it."""
    kinds = sorted({s.naming for s in submissions})
    if layout is Layout.CANVAS or not kinds:
        return ""
    said = {"3.x": "folders as Moodle 3.x names them (a trailing _)", "4.1+": "folders as Moodle 4.1 and later name them",
            "flat": "flat files (Moodle's download without folders)"}
    return "; ".join(said[k] for k in kinds)


def _students(class_dir: Path, submissions: list[_Submission], layout: Layout) -> list[Student]:
    """One Student per submission, keyed `who_id`; a second submission under the same key
    (one participant's folder in both namings) keyed `who_id (2)`: both kept, neither replaced."""
    submissions = sorted(submissions, key=lambda s: (f"{s.who}_{s.lms_id}", s.folder or s.uploads[0][1]))
    used: set[str] = set()
    students = []
    for sub in submissions:
        key, n = f"{sub.who}_{sub.lms_id}", 1
        while key in used:
            n += 1
            key = f"{sub.who}_{sub.lms_id} ({n})"
        used.add(key)
        source = sub.folder or (sub.uploads[0][1] + (f" and {len(sub.uploads) - 1} more files"
                                                     if len(sub.uploads) > 1 else ""))
        students.append(Student(key, class_dir / sub.folder if sub.folder else class_dir, uploads=tuple(sub.uploads),
                                 lms_id=sub.lms_id, lms_late=sub.late, source=source,
                                 named_test_student=layout is Layout.CANVAS and sub.who == CANVAS_TEST_STUDENT))
    return students


# ---------------------------------------------------------------- Gradescope

def _gradescope_export(class_dir: Path, assignment: str, exclude: tuple[Path, ...]) -> ClassFolder:
    """Each `submission_<id>/` folder the metadata lists, named by its first submitter's email or
    SID; when several submissions have the same first submitter (or theirs is no usable id), each
    is named by its folder, Gradescope's own name for it, and says whose it claims to be."""
    from autograder.intake.identify import SAFE_ID
    from autograder.intake.gradescope_export import METADATA, export_root, read_export

    root = export_root(class_dir)
    if root is None:
        raise FileNotFoundError(f"{class_dir}: no {METADATA} (is it Gradescope's Export Submissions, unzipped?)")
    root = Path(os.path.realpath(root))
    entries = read_export(root / METADATA)
    listed = {e.folder for e in entries}
    strays = [e.name for e in sorted(_entries(root, exclude), key=lambda e: e.name)
              if e.name not in listed and e.name != METADATA]
    keys = [e.submitters[0].key if e.submitters else "" for e in entries]
    students, people, times, seen = [], {}, {}, set()
    for entry, key in zip(entries, keys):
        folder = root / entry.folder
        own = bool(key) and SAFE_ID.match(key) is not None and keys.count(key) == 1
        name = key if own else entry.folder
        if not SAFE_ID.match(name) or entry.folder in seen:
            strays.append(f"{entry.folder} ({METADATA} line {entry.line}: listed twice, or not a name OUT can use)")
            continue
        seen.add(entry.folder)
        claim = "" if own else key
        if folder.is_symlink():
            students.append(Student(name, folder, refused=f"the submission folder {entry.folder} is a symbolic "
                                                          f"link, not a folder of its own; nothing was graded from it",
                                    claim_of=claim, source=entry.folder))
        elif not folder.is_dir():
            strays.append(f"{entry.folder} ({METADATA} line {entry.line}: no such folder)")
            continue
        else:
            nested = folder / assignment
            students.append(Student(name, nested if nested.is_dir() and not nested.is_symlink() else folder,
                                    claim_of=claim, source=entry.folder))
        times[name] = entry.created_at
        first = entry.submitters[0] if entry.submitters else None
        if first is not None and key not in people:
            people[key] = Person(first.name, "", first.sid, "", first.email, entry.line)
    return ClassFolder(Layout.GRADESCOPE, students, tuple(strays), tuple(people.values()), times)


# ---------------------------------------------------------------- which layout

def detect(class_dir: Path, exclude: tuple[Path, ...] = ()) -> Layout:
    """Moodle or Canvas when at least half the names (litter and OUT left out) are named as that
    platform names them; one folder per student when nothing there looks like a download.
    Raises LayoutUnclear for a folder that looks like a download of which fewer names fit."""
    from autograder.intake.gradescope_export import export_root

    if export_root(class_dir) is not None:
        return Layout.GRADESCOPE
    entries = _entries(Path(class_dir), exclude)
    folders = {e.name for e in entries if e.is_dir(follow_symlinks=False)}
    moodle = [e.name for e in entries if moodle_reading(e.name, e.name in folders)]
    canvas = [e.name for e in entries if e.name not in folders and canvas_readings(e.name)]
    for layout, fit in ((Layout.MOODLE, moodle), (Layout.CANVAS, canvas)):
        if fit and 2 * len(fit) >= len(entries):
            return layout
    looks = [e.name for e in entries if MOODLE_LOOK.search(e.name)]
    if looks:
        raise LayoutUnclear(_unclear(class_dir, Layout.MOODLE, moodle, entries, f"{len(looks)} names hold "
                                                                                f"`assignsubmission`"))
    if canvas and len(entries) - len(folders) >= len(folders):
        raise LayoutUnclear(_unclear(class_dir, Layout.CANVAS, canvas, entries, f"{len(canvas)} files are named "
                                                                                f"as Canvas names them"))
    return Layout.FOLDERS


def _unclear(class_dir: Path, layout: Layout, fit: list[str], entries, why: str) -> str:
    misfits = sorted(e.name for e in entries if e.name not in set(fit))
    return (f"{class_dir} looks like {layout.value.capitalize()}'s download ({why}), but only {len(fit)} of its "
            f"{len(entries)} names are named as {_NAMING[layout]}, and a layout is taken when at least half are. "
            f"Not named so: {_shown(misfits)}. Rename or remove those, or choose: --layout {layout.value} grades the "
            f"ones that fit (the others listed, not graded), --layout folders grades each folder as a student. "
            f"Nothing was graded.")


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
                notes.append(f"your upload {given} was unpacked and its {counted(count, 'file')} graded as your submission")
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
    if not found or any(e.handed_in for e in result.exercises):
        return result
    said = [e.note for e in result.exercises[:1] if e.note]
    why = (f"the submission holds {', '.join(found[:5])}{' ...' if len(found) > 5 else ''} but no file the "
           f"grader can grade (name each exercise's file as the contract does: "
           f"{', '.join(e.stem + '.py' for e in result.exercises)}, or .ipynb)")
    why = "; ".join([why, *said])
    return replace(result, exercises=tuple(
        replace(e, checks=tuple(replace(c, reason=NOTHING_GRADABLE, message=why) for c in e.checks))
        for e in result.exercises))
