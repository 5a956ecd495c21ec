"""A student's upload made into one folder to grade: their loose files and their archives unpacked
into a private temporary folder of the grader's (0700), never into the class folder; the loose
files win a clash. An LMS's flat uploads (Canvas, Moodle) take the names the student gave them.

Staging is reading a student's bytes, so it runs in a bounded child charged to the student
(autograder/intake/bounded.py), within their account's totals (autograder/intake/budget.py): the
bytes staged (a sparse file counts by its size), the files, the entries looked at, the archives
opened. What does not fit is left out and said; the rest is staged. Only source files (.py,
.ipynb) are copied with their bytes: any other loose file is staged empty (intake only lists it,
for the notes that name what was handed in). The same child reads the staged folder
(autograder/intake/load.py), so one fork reads a submission:

    with read(folder, student, stems) as found:      # found.folder, .sources, .notes, .uploaded
        ...grade found.sources...

A Dask cluster's client gathers and packs a student's files the same way (autograder/cluster/packing.py).
"""

from __future__ import annotations

import os
from contextlib import contextmanager
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Iterator

from autograder.sandbox import helper_process
from autograder.intake import SOURCE_SUFFIXES, bounded, budget
from autograder.intake.archives import MAX_ARCHIVE_BYTES, ArchiveRefused, Budget, extract, is_archive
from autograder.intake.scratch import scratch_folder
from autograder.intake.files import MAX_BYTES, Flag, Folder, ignored, normal_stem
from autograder.intake.students import Student
from autograder.judge.words import counted
from autograder.results import Why

NOTHING_GRADABLE = Why.nothing_gradable      # CheckResult.reason: files were there, none gradable


@dataclass(frozen=True)
class Read:
    """A submission as read: the folder graded (the student's, or the staged copy), each stem's
    source, what staging said, and the names the student handed in."""
    folder: Path
    sources: dict
    notes: tuple[str, ...]
    uploaded: tuple[str, ...]
    more: tuple = ()        # what a Reader's operation made of the same sources, as data


@dataclass(frozen=True)
class Reader:
    """An operation of another helper that reads a submission as `read_here` does and makes more
    of it in the same child (the class run's fingerprints: integrity/class_code.py): its answer is
    read_here's with `more`, a list. `args` follow read_here's."""
    helper: helper_process.Helper
    op: str
    args: tuple = ()


@contextmanager
def read(folder: Path, student: Student, stems: tuple[str, ...], reader: Reader | None = None) -> Iterator[Read]:
    """The submission in `folder` (the student's, opened without following links) staged and its
    `stems` loaded, in one bounded child charged to the current account (with `reader`, by its
    operation); the staged copy is removed on leaving. Past the submission's limits as a whole
    (its CPU time spent before it was read at all) every stem is a LoadError that says so."""
    from autograder.intake.load import LoadError, loaded_answer

    with scratch_folder() as tmp:
        where, fds = bounded.folder_arg(folder)
        args = [where, [list(u) for u in student.uploads], tmp, list(stems)]
        try:
            if reader is None:
                answer = bounded.run("read", args, fds=fds, item=False)
            else:
                answer = bounded.run(reader.op, [*args, *reader.args], fds=fds, item=False, helper=reader.helper)
        except bounded.OverLimit as err:
            why = not_read(err)
            budget.current().leave_out(str(err), "your submission")
            yield Read(folder, {stem: LoadError(stem, "", why) for stem in stems}, (), ())
            return
        try:
            staged, notes, uploaded = bool(answer["staged"]), answer["notes"], answer["uploaded"]
            more = answer.get("more", [])
            if not (all(isinstance(n, str) for n in notes) and all(isinstance(n, str) for n in uploaded)
                    and isinstance(more, list)):
                raise TypeError("notes that are not text")
        except (KeyError, TypeError) as err:
            raise bounded.ParserUnavailable(f"the reader gave an answer that is not one ({err})") from None
        yield Read(Path(tmp, "files") if staged else Path(folder), loaded_answer(answer, tuple(stems)),
                   tuple(notes), tuple(uploaded), tuple(more))


def not_read(err: Exception) -> str:
    """What a student is told when their submission's totals were spent before it was read."""
    return f"your submission was not read: {err}; nothing of it was graded"


def read_here(where, uploads: list, tmp: str, stems: list[str]) -> dict:
    """What `read` runs in its child."""
    return loaded_here(where, uploads, tmp, stems)[0]


def loaded_here(where, uploads: list, tmp: str, stems: list[str]) -> tuple[dict, Path, dict]:
    """(read_here's answer, the folder read, each stem's SourceFile or LoadError): a Reader's
    operation makes more of the same sources."""
    from autograder.intake import load

    folder, notes, uploaded = stage(Path(bounded.folder_of(where)), [tuple(u) for u in uploads], tmp, tuple(stems))
    loaded = load.loaded_here(folder, tuple(stems)) if stems else {}
    answer = {"staged": folder != Path(bounded.folder_of(where)), "notes": list(notes), "uploaded": uploaded,
              **load.plain_answer(loaded)}
    return answer, folder, loaded


def stage(folder: Path, uploads: list[tuple[str, str]], tmp: str,
          stems: tuple[str, ...] = ()) -> tuple[Path, tuple[str, ...], list[str]]:
    """(the folder to grade, notes, the names handed in), staged into `tmp` in this process (a
    child): `folder` itself when it holds no archive and there are no flat uploads. `stems`: the
    exercises graded, whose files are staged first (reading_order)."""
    with Folder(folder) as root:
        if uploads:
            entries = uploads
            uploaded = [given for given, _ in uploads if not ignored(given)]
        else:
            names, _ = root.listdir(())
            uploaded = [n for n in names if not ignored(n)]
            visible = [n for n in uploaded if _kind(root, n) == "file"]
            if not any(is_archive(n) for n in visible):
                return folder, (), uploaded
            entries = [(n, n) for n in visible]
        return Path(tmp, "files"), _unpack(root, entries, tmp, stems), uploaded


def _kind(root: Folder, name: str) -> str:
    try:
        return root.kind((name,))
    except OSError:
        return "other"


def reading_order(stems: tuple[str, ...]):
    """The key that sorts a student's uploads (given name, real name) in the order they are staged:
    the source files named for an exercise of `stems`, then the archives, then the other source
    files, then any other file. What is left out when a total is reached is the least likely to be
    graded: a thousand scratch files never crowd out the archive that holds the work."""
    wanted = set(stems)

    def rank(entry: tuple[str, str]) -> int:
        given = entry[0].lower()
        if is_archive(given):
            return 1
        if given.endswith(SOURCE_SUFFIXES):
            return 0 if normal_stem(given) in wanted else 2
        return 3
    return rank


def _unpack(root: Folder, entries: list[tuple[str, str]], tmp: str, stems: tuple[str, ...]) -> tuple[str, ...]:
    """The loose files copied first (they win a clash), then each archive unpacked beside them,
    within the account's totals."""
    files = os.path.join(tmp, "files")
    os.mkdir(files, 0o700)
    account = budget.current()
    notes: list[str] = []
    unpacked = Budget(held_to=f"the {account.limits.staged_mb} MB a submission may stage")
    for given, real in sorted(entries, key=reading_order(stems)):
        if is_archive(given):
            _unpack_archive(root, given, real, files, account, unpacked, notes)
        else:
            copy_loose(root, given, real, files, account, notes)
    return tuple(notes + unpacked.notes)


def copy_loose(root: Folder, given: str, real: str, files: str, account: budget.Account, notes: list[str]) -> None:
    fd = open_upload(root, real, notes)
    if fd is None:
        return
    try:
        size = min(os.fstat(fd).st_size, MAX_BYTES + 1)
        source = given.lower().endswith(SOURCE_SUFFIXES)
        over = account.take_all({"files": 1, "staged_bytes": size if source else 0})
        if over is not None:
            account.leave_out(account.over(over), given)
            return
        data = read_at_most(fd, MAX_BYTES + 1) if source else b""   # another file: only its name is read
    finally:
        os.close(fd)
    if not write_new(os.path.join(files, given), data):
        notes.append(f"{real} was not graded: another file of yours is also called {given}")


def _unpack_archive(root: Folder, given: str, real: str, files: str, account: budget.Account, unpacked: Budget,
                    notes: list[str]) -> None:
    if not account.take("archives"):
        account.leave_out(account.over("archives"), given)
        return
    fd = open_upload(root, real, notes)
    if fd is None:
        return
    try:
        if os.fstat(fd).st_size > MAX_ARCHIVE_BYTES:
            notes.append(f"your upload {given} is larger than {MAX_ARCHIVE_BYTES // 2**20} MB; it was not opened")
            return
        unpacked.bytes_left, unpacked.files_left = account.left("staged_bytes"), account.left("files")
        unpacked.members_left = account.left("entries")
        before = (unpacked.bytes_left, unpacked.files_left, unpacked.members_left)
        try:
            count = extract(helper_process.fd_path(fd), given, files, unpacked)
            notes.append(f"your upload {given} was unpacked and its {counted(count, 'file')} graded as your submission")
        except ArchiveRefused as err:
            notes.append(str(err))
        for what, was, now in zip(("staged_bytes", "files", "entries"), before,
                                  (unpacked.bytes_left, unpacked.files_left, unpacked.members_left)):
            account.take(what, max(0, was - now))
    finally:
        os.close(fd)


def open_upload(root: Folder, real: str, notes: list[str]) -> int | None:
    """A descriptor of one upload (a regular file of the folder, never through a link: a link in
    the class folder could lead to anyone's file), or None (and why, in `notes`)."""
    if _kind(root, real) != "file":
        notes.append(f"{real} is a symbolic link or special file, not a file; it was not graded")
        return None
    try:
        return root.open_file((real,))
    except OSError as err:
        notes.append(f"{real} could not be read ({err.strerror or err}); it was not graded")
        return None


def read_at_most(fd: int, limit: int) -> bytes:
    chunks, size = [], 0
    while size < limit:
        chunk = os.read(fd, min(1 << 20, limit - size))
        if not chunk:
            break
        chunks.append(chunk)
        size += len(chunk)
    return b"".join(chunks)


def write_new(path: str, data: bytes) -> bool:
    try:
        fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL | getattr(os, "O_NOFOLLOW", 0), 0o600)
    except FileExistsError:
        return False
    with os.fdopen(fd, "wb") as fh:
        fh.write(data)
    return True


# ---------------------------------------------------------------- what the feedback says


def with_notes(result, notes: tuple[str, ...], flag: Flag = Flag.ARCHIVE):
    """The result with what staging did (or, `flag` LEFT_OUT, what was not read) said on every
    exercise, and flagged for the report."""
    if not notes:
        return result
    said = "; ".join(notes)
    exercises = tuple(replace(e, note="; ".join(filter(None, (said, e.note))), flags=(*e.flags, flag.value))
                      for e in result.exercises)
    return replace(result, exercises=exercises)


def nothing_gradable(result, found: tuple[str, ...] | list[str]):
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
