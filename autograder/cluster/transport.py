"""A submission as bytes: packed by the client from its folder, unpacked on a worker.

The student's folder travels as a tree, so the worker's intake (autograder.intake.files) sees what a
local run sees: every entry's name and kind down to the depth intake looks at, the content of
the files it may grade (`.py`, `.ipynb`) and of the archives at the top of the folder (the
worker unpacks them, autograder/intake/lms.py: the client parses none of the student's bytes),
each file's modification time, and symbolic links as links with their target text (never
followed here: intake judges them on the worker exactly as locally, following only links that
stay inside the folder). A file over its size limit travels as its size (a sparse file there);
other files travel empty (intake only lists them). Entries are read with lstat and O_NOFOLLOW.

The framing is this module's own: a magic line, then one record per entry (kind, name length,
modification time, payload length; the name; the payload), read front to back with `struct`, so
the worker's cost is linear in the bytes it receives. No archive parser touches these bytes:
tarfile parses a link's target as a pax record, in time quadratic in its digits, with the
interpreter held.

One student's totals (`Totals`) bound both sides: the client sends no more entries, bytes of
files and link text than they allow (what it leaves out is said in notes for the student's
feedback), and the worker refuses a message that holds more before writing past them.
"""

from __future__ import annotations

import itertools
import os
import stat
import struct
from dataclasses import dataclass
from pathlib import Path

from autograder.intake import SOURCE_SUFFIXES
from autograder.intake.archives import MAX_ARCHIVE_BYTES, is_archive
from autograder.intake.files import MAX_BYTES, MAX_DESCENT, MAX_ENTRIES
from autograder.intake.staging import reading_order

MAGIC = b"attnkit submission 2\n"
RECORD = struct.Struct("!cHqQ")   # kind, name bytes, modification time (ns), payload bytes
SIZE = struct.Struct("!Q")        # the payload of a file sent as its size
FOLDER, FILE, SIZED, LINK, OTHER = b"d", b"f", b"s", b"l", b"o"

LINK_TARGET = b"/nonexistent/attnkit-link-not-followed"   # a link whose text is not sent
MAX_NAME = 4096                    # bytes of an entry's path below the folder (the kernel's PATH_MAX)
MAX_LINK = 4095                    # bytes of one link's target (the kernel's own limit)
MAX_SPARSE = 1 << 40               # a size claimed for an oversized file
MAX_DEPTH = MAX_DESCENT + 1        # folders below the student's that intake may look into
MAX_MEMBERS = 20_000               # entries of one packed submission
MAX_SOURCES = 32 * 1024 * 1024     # bytes of source files sent for one submission (past it: their sizes)
MAX_ARCHIVES = 2 * MAX_ARCHIVE_BYTES   # bytes of archives sent for one submission (past it: their sizes)
MAX_LINK_TEXT = 1024 * 1024        # bytes of link targets sent for one submission (past it: not their text)
MAX_PACKED = (len(MAGIC) + MAX_MEMBERS * (RECORD.size + MAX_NAME + SIZE.size)
              + MAX_SOURCES + MAX_ARCHIVES + MAX_LINK_TEXT)


class PackError(ValueError):
    """Bytes that are not a packed submission (a bug or a message that was tampered with)."""


@dataclass(frozen=True)
class Packed:
    """A packed submission: its bytes, and what the client left out of it, in words for the student."""
    data: bytes
    notes: tuple[str, ...] = ()


@dataclass
class Totals:
    """What one student's packed submission may still hold; each `take_*` says whether it fits
    and, when it does, counts it."""
    entries: int = MAX_MEMBERS
    sources: int = MAX_SOURCES
    archives: int = MAX_ARCHIVES
    link_text: int = MAX_LINK_TEXT

    def take_entry(self) -> bool:
        return self._take("entries", 1)

    def take_file(self, rel: str, size: int) -> bool:
        return self._take(self._what(rel), size)

    def fits(self, rel: str, size: int) -> bool:
        return size <= getattr(self, self._what(rel))

    @staticmethod
    def _what(rel: str) -> str:
        return "archives" if _limit(rel) == MAX_ARCHIVE_BYTES else "sources"

    def take_link(self, size: int) -> bool:
        return self._take("link_text", size)

    def _take(self, what: str, amount: int) -> bool:
        left = getattr(self, what)
        if amount > left:
            return False
        setattr(self, what, left - amount)
        return True


def contract_names(stems: tuple[str, ...]) -> list[str]:
    return [f"{stem}{suffix}" for stem in stems for suffix in SOURCE_SUFFIXES]


def _is_folder(entry: os.DirEntry) -> bool:
    try:
        return entry.is_dir(follow_symlinks=False)
    except OSError:
        return False


def _limit(rel: str) -> int:
    """The most bytes a packed file of this name carries: an upload's archive at the top, or a
    file intake may grade; 0: its name and kind travel, not its bytes."""
    if "/" not in rel and is_archive(rel):
        return MAX_ARCHIVE_BYTES
    return MAX_BYTES if rel.lower().endswith(SOURCE_SUFFIXES) else 0


# ====================================================================== the client's side


OUT_OF_TIME = ("packing your submission to be graded needs more than the CPU time left of what the grader "
               "gives to reading one submission; what was packed by then was sent, the rest was not")


def pack_submission(folder: Path, stems: tuple[str, ...] = (), must_stop=lambda: False) -> Packed:
    """The student's folder as bytes: see the module's docstring. The files named for `stems` go
    first (intake's reading order), so a total or `must_stop` (asked before each entry: the
    student's time is up) leaves out what is least likely to be graded."""
    packer = _Packer(reading_order(tuple(stems)), must_stop)
    packer.walk(Path(folder), "", 0)
    return Packed(b"".join(packer.chunks), tuple(packer.notes))


class _Packer:
    def __init__(self, order, must_stop):
        self.chunks: list[bytes] = [MAGIC]
        self.totals = Totals()
        self.notes: list[str] = []
        self.order, self.must_stop, self.stopped = order, must_stop, False

    def walk(self, folder: Path, prefix: str, depth: int) -> None:
        try:
            with os.scandir(folder) as it:
                # one more than intake reads, so that intake there knows the folder holds more
                entries = [(e.name, _is_folder(e)) for e in itertools.islice(it, MAX_ENTRIES + 1)]
        except OSError:
            return
        names = [name for name, _ in sorted(entries, key=self._rank if not prefix else lambda entry: entry[0])]
        for name in names:
            if self.stopped or self.must_stop():
                self.stopped = True
                self.note(OUT_OF_TIME)
                return
            if not self.totals.entries:
                self.note(f"your submission holds more than {MAX_MEMBERS} files and folders; only the first "
                          f"{MAX_MEMBERS} were sent to be graded")
                return
            rel = f"{prefix}{name}"
            try:
                st = os.lstat(folder / name)
            except OSError:
                continue
            if stat.S_ISDIR(st.st_mode):
                self.add(FOLDER, rel, st)
                if depth < MAX_DEPTH:
                    self.walk(folder / name, f"{rel}/", depth + 1)
            elif stat.S_ISLNK(st.st_mode):
                self.add(LINK, rel, st, self.link_text(folder / name))
            elif stat.S_ISREG(st.st_mode):
                self.add_file(folder / name, rel, st)
            else:       # a fifo, socket or device: intake says "not a regular file" of each
                self.add(OTHER, rel, st)

    def _rank(self, entry: tuple[str, bool]) -> tuple[float, str]:
        """At the top: intake's reading order, a folder (which may hold the work) after the archives."""
        name, folder = entry
        return (1.5 if folder else self.order((name, name)), name)

    def note(self, text: str) -> None:
        if text not in self.notes:
            self.notes.append(text)

    def add(self, kind: bytes, rel: str, st: os.stat_result, payload: bytes = b"") -> None:
        self.totals.take_entry()
        name = os.fsencode(rel)
        mtime_ns = min(max(st.st_mtime_ns, -(1 << 63)), (1 << 63) - 1)
        self.chunks.append(RECORD.pack(kind, len(name), mtime_ns, len(payload)) + name)
        self.chunks.append(payload)

    def link_text(self, path: Path) -> bytes:
        try:
            target = os.readlink(os.fsencode(path))
        except OSError:
            return LINK_TARGET
        if not target or len(target) > MAX_LINK:
            return LINK_TARGET
        if not self.totals.take_link(len(target)):
            self.note(f"your submission's symbolic links name more than {MAX_LINK_TEXT // 1024} KB of "
                      f"targets; the rest were sent without them")
            return LINK_TARGET
        return target

    def add_file(self, path: Path, rel: str, st: os.stat_result) -> None:
        limit = _limit(rel)
        if not limit:
            self.add(FILE, rel, st)        # intake only lists it
            return
        if st.st_size > limit:
            self.add(SIZED, rel, st, SIZE.pack(min(st.st_size, MAX_SPARSE)))
            return
        if not self.totals.fits(rel, st.st_size):     # never read: past the totals, only its size travels
            self.over_totals(rel, st, limit)
            return
        try:
            fd = os.open(path, os.O_RDONLY | os.O_NOFOLLOW | getattr(os, "O_NONBLOCK", 0))
        except OSError:
            return
        with os.fdopen(fd, "rb") as fh:
            if not stat.S_ISREG(os.fstat(fh.fileno()).st_mode):   # swapped since the lstat
                return
            data = fh.read(limit + 1)
        if len(data) > limit:      # it grew since the lstat: sent as its size, as above
            self.add(SIZED, rel, st, SIZE.pack(len(data)))
        elif self.totals.take_file(rel, len(data)):
            self.add(FILE, rel, st, data)
        else:
            self.over_totals(rel, st, limit)

    def over_totals(self, rel: str, st: os.stat_result, limit: int) -> None:
        self.add(SIZED, rel, st, SIZE.pack(limit + 1))
        if limit == MAX_ARCHIVE_BYTES:
            self.note(f"your archives hold more than {MAX_ARCHIVES // 2**20} MB together; those past it "
                      f"were not sent to be opened")
        else:
            self.note(f"your .py and .ipynb files hold more than {MAX_SOURCES // 2**20} MB together; those "
                      f"past it were not sent to be graded")


# ====================================================================== the worker's side


def unpack_submission(data: bytes, folder: Path, stems: tuple[str, ...] = ()) -> list[str]:
    """Writes the packed tree into the (empty, private) `folder`; returns the names written.
    Raises PackError for anything that is not what `pack_submission` makes, or holds more than
    one student's totals allow."""
    if len(data) > MAX_PACKED:
        raise PackError(f"a packed submission of {len(data)} bytes is larger than any the client sends")
    if not data.startswith(MAGIC):
        raise PackError("not a packed submission")
    view = memoryview(data)
    pos, end = len(MAGIC), len(data)
    totals = Totals()
    dirs: set[str] = {""}
    written: list[str] = []
    seen: set[str] = set()
    while pos < end:
        if end - pos < RECORD.size:
            raise PackError("a packed submission ends inside a record")
        kind, name_size, mtime_ns, size = RECORD.unpack_from(view, pos)
        pos += RECORD.size
        if name_size > MAX_NAME or size > end - pos - name_size:
            raise PackError("a packed submission's record is longer than the message")
        raw, payload = bytes(view[pos:pos + name_size]), view[pos + name_size:pos + name_size + size]
        pos += name_size + size
        if not totals.take_entry():
            raise PackError("too many entries in a packed submission")
        name = os.fsdecode(raw)
        parts = name.split("/")
        if (not name or "\0" in name or any(p in ("", ".", "..") for p in parts) or len(parts) > MAX_DEPTH + 1
                or "/".join(parts[:-1]) not in dirs or name in seen):
            raise PackError(f"unexpected entry in a packed submission: {name[:80]!r}")
        seen.add(name)
        target = os.path.join(folder, *parts)
        try:
            _create(kind, name, payload, mtime_ns, target, totals)
        except OSError as err:
            raise PackError(f"entry {name[:80]!r} could not be written: {err.strerror or err}") from None
        if kind == FOLDER:
            dirs.add(name)
        written.append(name)
    return written


def _create(kind: bytes, name: str, payload: memoryview, mtime_ns: int, target: str, totals: Totals) -> None:
    if kind == FOLDER and not payload:
        os.mkdir(target, 0o700)
    elif kind == LINK and 0 < len(payload) <= MAX_LINK and b"\0" not in payload:
        if payload != LINK_TARGET and not totals.take_link(len(payload)):
            raise PackError("more link text than a packed submission may hold")
        os.symlink(bytes(payload), os.fsencode(target))   # judged by intake there, never followed here
    elif kind == FILE:
        if len(payload) > _limit(name) or not totals.take_file(name, len(payload)):
            raise PackError(f"{name[:80]!r} is larger than a submission file may be")
        _write(target, mtime_ns, lambda fh: fh.write(payload))
    elif kind == SIZED and len(payload) == SIZE.size:
        size = SIZE.unpack(payload)[0]
        if not _limit(name) < size <= MAX_SPARSE:
            raise PackError(f"bad size for {name[:80]!r}")
        _write(target, mtime_ns, lambda fh: fh.truncate(size))   # sparse: the loader reads only its size
    elif kind == OTHER and not payload:
        os.mkfifo(target, 0o600)
    else:
        raise PackError(f"unexpected record in a packed submission: {name[:80]!r}")


def _write(target: str, mtime_ns: int, fill) -> None:
    fd = os.open(target, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW, 0o600)
    with os.fdopen(fd, "wb") as fh:
        fill(fh)
    os.utime(target, ns=(mtime_ns, mtime_ns), follow_symlinks=False)
