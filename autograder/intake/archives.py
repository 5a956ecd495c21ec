"""A student's upload that is an archive (`.zip`, `.tar.gz`, `.tgz`, `.tar`), opened safely into a
folder the grader owns.

An archive is the student's to write, so every member is judged before a byte is written:
its name must stay below the folder (no absolute path, no drive letter, no `..`; for tar,
tarfile's own "data" filter decides, or its rules where the interpreter lacks it: tar_filter.py),
only regular files and folders are taken (a link, a device or a FIFO is skipped and said), at
most MAX_MEMBERS members are looked at, and sizes are bounded twice: the sizes the archive
declares (a zip bomb declares a huge one, or a compression ratio no source file has) refuse the
archive before extraction starts, and the bytes actually written are counted while extracting,
so an archive that lies about its sizes is stopped at the same limits. An archive inside the
archive is opened once more, into a folder named after it; one inside that is left as it is.
Files are created with O_EXCL and O_NOFOLLOW in folders this module made, so nothing outside
`dest` is ever written.

All of it happens in a bounded child (autograder/intake/bounded.py): the sizes above bound what
the archive declares about its members, but not what tarfile or zipfile do with its headers on
the way (a pax header parsed in quadratic time, a long-name header of gigabytes read whole).
"""

from __future__ import annotations

import hashlib
import os
import stat
import tarfile
import zipfile
import zlib
from dataclasses import dataclass, field
from pathlib import PurePosixPath

from autograder.intake import tar_filter

ARCHIVE_SUFFIXES = (".zip", ".tar.gz", ".tgz", ".tar")
MAX_ARCHIVE_BYTES = 64 * 1024 * 1024     # the upload itself; an LMS caps uploads at tens of MB
MAX_MEMBERS = 1_000                      # a real submission holds a dozen files
MAX_MEMBER_BYTES = 16 * 1024 * 1024      # one file (intake grades files of at most 2 MB)
MAX_TOTAL_BYTES = 64 * 1024 * 1024       # everything extracted from one student's archives
MAX_RATIO = 200                          # text compresses 3-10x; a bomb 1000x and more
RATIO_FROM = 1024 * 1024                 # small members may compress as well as they like
NESTING = 1                              # archives inside an archive opened: one level
_CHUNK = 1 << 16
_O_NEW = os.O_WRONLY | os.O_CREAT | os.O_EXCL | getattr(os, "O_NOFOLLOW", 0) | getattr(os, "O_CLOEXEC", 0)


class ArchiveRefused(Exception):
    """The archive is not opened at all (a bomb, too many members, not an archive)."""


def is_archive(name: str) -> bool:
    return name.lower().endswith(ARCHIVE_SUFFIXES)


def archive_stem(name: str) -> str:
    lower = name.lower()
    return name[: -len(next(s for s in ARCHIVE_SUFFIXES if lower.endswith(s)))]


@dataclass
class Budget:
    """What one student's archives may still write, shared by an archive and those inside it."""
    bytes_left: int = MAX_TOTAL_BYTES
    notes: list[str] = field(default_factory=list)


def extract(path: str, shown: str, dest: str, budget: Budget) -> int:
    """Extract the archive at `path` (called `shown` in messages) into the folder `dest`; returns
    how many files were written. Skipped members are said in budget.notes; ArchiveRefused when
    the archive as a whole is refused (nothing of it is kept then). Done in a bounded child:
    past its limits, the archive is refused; bounded.ParserUnavailable when the grader could not
    run one (its failure, not the student's)."""
    from autograder.intake import bounded

    before = _entries(dest)
    try:
        memo = bounded.digest(_file_digest(path), shown, str(budget.bytes_left))
        answer = bounded.run("archive", [path, shown, dest, budget.bytes_left], memo=memo)
        if not isinstance(answer, dict):
            raise bounded.ParserUnavailable("the archive's reader gave no answer")
        if "refused" in answer:
            raise ArchiveRefused(str(answer["refused"]))
        count, left, notes = answer["count"], answer["bytes_left"], answer["notes"]
        if not (type(count) is int and type(left) is int and 0 <= left <= budget.bytes_left
                and isinstance(notes, list)):
            raise bounded.ParserUnavailable("the archive's reader gave an answer that is not one")
    except bounded.OverLimit as err:
        _remove_new(dest, before)
        raise ArchiveRefused(f"{shown} was not opened: {err} (an archive of exercises takes a small part "
                             f"of that)") from None
    except BaseException:
        _remove_new(dest, before)
        raise
    budget.bytes_left = left
    budget.notes.extend(str(n) for n in notes)
    return count


def unpacked_here(path: str, shown: str, dest: str, bytes_left: int) -> dict:
    """What `extract` runs in its bounded child: {"count", "bytes_left", "notes"} or {"refused"}."""
    budget = Budget(bytes_left)
    try:
        count = _extract(path, shown, dest, budget)
    except ArchiveRefused as err:
        return {"refused": str(err)}
    return {"count": count, "bytes_left": budget.bytes_left, "notes": budget.notes}


def _extract(path: str, shown: str, dest: str, budget: Budget, depth: int = 0) -> int:
    """`extract`, in this process."""
    written: list[str] = []
    try:
        try:
            if zipfile.is_zipfile(path):
                _extract_zip(path, shown, dest, budget, written)
            elif tarfile.is_tarfile(path):
                _extract_tar(path, shown, dest, budget, written)
            else:
                raise ArchiveRefused(f"{shown} is not a zip or tar archive that can be read")
        except (zipfile.BadZipFile, tarfile.TarError, EOFError, OSError, ValueError, NotImplementedError,
                zlib.error) as err:
            raise ArchiveRefused(f"{shown} could not be opened ({type(err).__name__}: {err})") from None
    except ArchiveRefused:
        for relpath in written:       # half an archive is not graded: a bomb leaves nothing behind
            try:
                os.unlink(os.path.join(dest, relpath))
            except OSError:
                pass
        raise
    if depth < NESTING:
        for relpath in [r for r in written if is_archive(r)]:
            inner, inner_shown = os.path.join(dest, relpath), f"{shown}/{relpath}"
            target = os.path.join(dest, archive_stem(relpath))
            try:
                os.mkdir(target, 0o700)
                _extract(inner, inner_shown, target, budget, depth + 1)
                os.unlink(inner)
            except ArchiveRefused as err:
                budget.notes.append(str(err))
            except OSError as err:
                budget.notes.append(f"{inner_shown} was not opened: {err.strerror or err}")
    return len(written)


def _file_digest(path: str) -> bytes:
    h = hashlib.sha256()
    with open(path, "rb") as fh:
        while chunk := fh.read(1 << 20):
            h.update(chunk)
    return h.digest()


def _entries(dest: str) -> set[str]:
    """Every path below `dest` (it holds what one student uploaded: a few files)."""
    found = set()
    for root, dirs, files in os.walk(dest):
        found.update(os.path.join(root, name) for name in dirs + files)
    return found


def _remove_new(dest: str, before: set[str]) -> None:
    """Removes what a child that was stopped half-way wrote below `dest`: files, then folders."""
    for path in sorted(_entries(dest) - before, key=len, reverse=True):
        try:
            if os.path.isdir(path) and not os.path.islink(path):
                os.rmdir(path)
            else:
                os.unlink(path)
        except OSError:
            pass


def member_path(name: str) -> tuple[str, ...] | None:
    """The parts of a member's name below the folder, or None when it would leave it."""
    name = name.replace("\\", "/")
    if name.startswith("/") or (len(name) > 1 and name[1] == ":"):
        return None
    parts = tuple(p for p in PurePosixPath(name).parts if p not in ("", "."))
    if not parts or ".." in parts:
        return None
    return parts


def _litter(parts: tuple[str, ...]) -> bool:
    from autograder.intake.files import ignored

    return any(ignored(p) for p in parts)


def _extract_zip(path: str, shown: str, dest: str, budget: Budget, written: list[str]) -> None:
    with zipfile.ZipFile(path) as zf:
        infos = zf.infolist()
        if len(infos) > MAX_MEMBERS:
            raise ArchiveRefused(f"{shown} holds {len(infos)} members, more than the {MAX_MEMBERS} a submission "
                                 f"may hold; it was not opened")
        declared = sum(i.file_size for i in infos)
        if declared > budget.bytes_left:
            raise ArchiveRefused(f"{shown} would unpack to {declared / 2**20:.0f} MB, more than the "
                                 f"{MAX_TOTAL_BYTES // 2**20} MB a submission may hold; it was not opened")
        for info in infos:
            if info.file_size > RATIO_FROM and info.file_size > MAX_RATIO * max(1, info.compress_size):
                raise ArchiveRefused(f"{shown}: {info.filename} is compressed {info.file_size // max(1, info.compress_size)}"
                                     f" to 1, as only a zip bomb is; the archive was not opened")
        for info in infos:
            mode = info.external_attr >> 16
            # no file-type bits (zips made on Windows, or by Python's writestr) is a plain file
            kind = "dir" if info.is_dir() else "file" if stat.S_IFMT(mode) in (0, stat.S_IFREG) else "other"
            with_reader = (lambda i=info: zf.open(i)) if kind == "file" else None
            _take(info.filename, kind, info.file_size, with_reader, shown, dest, budget, written, crc=info.CRC)


def _extract_tar(path: str, shown: str, dest: str, budget: Budget, written: list[str]) -> None:
    with tarfile.open(path) as tf:
        for count, member in enumerate(iter(tf.next, None)):
            if count >= MAX_MEMBERS:
                raise ArchiveRefused(f"{shown} holds more than the {MAX_MEMBERS} members a submission may hold; "
                                     f"it was not opened")
            if member.size > budget.bytes_left:
                raise ArchiveRefused(f"{shown}: {member.name} is {member.size / 2**20:.0f} MB, more than the "
                                     f"{MAX_TOTAL_BYTES // 2**20} MB a submission may hold; it was not opened")
            name = member.name      # judged as written (the filter would make an absolute path relative)
            try:
                member = tar_filter.data_filter(member, dest)
            except tar_filter.FilterError as err:
                budget.notes.append(f"{shown}: {name} was skipped ({err})")
                continue
            kind = "dir" if member.isdir() else "file" if member.isreg() else "other"
            with_reader = (lambda m=member: tf.extractfile(m)) if kind == "file" else None
            _take(name, kind, member.size, with_reader, shown, dest, budget, written)


def _take(name: str, kind: str, size: int, open_member, shown: str, dest: str, budget: Budget,
          written: list[str], crc: int | None = None) -> None:
    """One member: judged, then written below `dest` (never through a link, never twice)."""
    parts = member_path(name)
    if parts is None:
        budget.notes.append(f"{shown}: {name} was skipped (its path leads out of the archive's folder)")
        return
    if _litter(parts):
        return
    if kind == "other":
        budget.notes.append(f"{shown}: {name} was skipped (a link or special file, not a file)")
        return
    if size > MAX_MEMBER_BYTES:
        budget.notes.append(f"{shown}: {name} was skipped ({size / 2**20:.0f} MB, more than "
                            f"{MAX_MEMBER_BYTES // 2**20} MB)")
        return
    folder = dest
    for part in parts[:-1] if kind == "file" else parts:
        folder = os.path.join(folder, part)
        try:
            os.mkdir(folder, 0o700)
        except FileExistsError:
            if not stat.S_ISDIR(os.lstat(folder).st_mode):
                budget.notes.append(f"{shown}: {name} was skipped ({'/'.join(parts)} clashes with a file)")
                return
    if kind == "dir":
        return
    target = os.path.join(folder, parts[-1])
    try:
        fd = os.open(target, _O_NEW, 0o600)
    except FileExistsError:
        budget.notes.append(f"{shown}: {name} was skipped (a file of that name was already there)")
        return
    relpath = "/".join(parts)
    written.append(relpath)
    with os.fdopen(fd, "wb") as out, open_member() as src:
        total, running = 0, 0
        while chunk := src.read(_CHUNK):
            total += len(chunk)
            # the bytes really written, not the declared size, are what is counted
            if total > size or total > budget.bytes_left:
                raise ArchiveRefused(f"{shown}: {name} unpacks to more than it declares or than a submission may "
                                     f"hold; the archive was not opened")
            running = zlib.crc32(chunk, running)
            out.write(chunk)
    if crc is not None and running != crc:     # zipfile stops at the declared size: a liar is cut short
        raise ArchiveRefused(f"{shown}: {name} is damaged (its content does not match the size and checksum the "
                             f"archive declares); the archive was not opened")
    budget.bytes_left -= total
