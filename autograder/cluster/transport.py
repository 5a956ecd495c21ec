"""A submission as bytes: packed by the client from its folder, unpacked on a worker.

The student's folder travels as a tree, so the worker's intake (autograder.intake.files) sees what a
local run sees: every entry's name and kind down to the depth intake looks at, the content of
the files it may grade (`.py`, `.ipynb`) and of the archives at the top of the folder (the
worker unpacks them, autograder/intake/lms.py: the client parses none of the student's bytes),
each file's modification time, and symbolic links as links with their target text (never
followed here: intake judges them on the worker exactly as locally, following only links that
stay inside the folder). A file over its size limit travels as its size (a sparse file there);
other files travel empty (intake only lists them). Entries are read with lstat and O_NOFOLLOW.

The format is a POSIX (pax) tar built member by member; unpacking writes each member itself
after checking its name and type, never through a link: tarfile's own extraction is not used.
"""

from __future__ import annotations

import io
import os
import stat
import tarfile
from pathlib import Path

from autograder.intake import SOURCE_SUFFIXES
from autograder.intake.archives import MAX_ARCHIVE_BYTES, is_archive
from autograder.intake.files import MAX_BYTES, MAX_DESCENT, MAX_ENTRIES

SIZE_KEY = "ATTNKIT.size"          # pax header: the size of a file sent without its content
MTIME_KEY = "ATTNKIT.mtime_ns"     # pax header: the exact modification time
LINK_TARGET = "/nonexistent/attnkit-link-not-followed"
MAX_MEMBERS = 20_000               # entries of one packed submission
MAX_SPARSE = 1 << 40               # a size claimed for an oversized file
MAX_DEPTH = MAX_DESCENT + 1        # folders below the student's that intake may look into
MAX_TOTAL = 32 * 1024 * 1024       # bytes of source files sent for one submission
MAX_ARCHIVES = 2 * MAX_ARCHIVE_BYTES   # bytes of archives sent for one submission (past it: their sizes)


class PackError(ValueError):
    """Bytes that are not a packed submission (a bug or a message that was tampered with)."""


def contract_names(stems: tuple[str, ...]) -> list[str]:
    return [f"{stem}{suffix}" for stem in stems for suffix in SOURCE_SUFFIXES]


def pack_submission(folder: Path, stems: tuple[str, ...] = ()) -> bytes:
    """The student's folder as a tar (bytes): see the module's docstring."""
    buf = io.BytesIO()
    budget = [MAX_TOTAL, MAX_ARCHIVES]
    with tarfile.open(fileobj=buf, mode="w", format=tarfile.PAX_FORMAT) as tar:
        _walk(tar, Path(folder), "", 0, budget)
    return buf.getvalue()


def _walk(tar: tarfile.TarFile, folder: Path, prefix: str, depth: int, budget: list) -> None:
    try:
        with os.scandir(folder) as it:
            names = sorted(e.name for e in it)[:MAX_ENTRIES]
    except OSError:
        return
    for name in names:
        rel = f"{prefix}{name}"
        try:
            st = os.lstat(folder / name)
        except OSError:
            continue
        if stat.S_ISDIR(st.st_mode):
            info = _info(rel, st, tarfile.DIRTYPE)
            tar.addfile(info)
            if depth < MAX_DEPTH:
                _walk(tar, folder / name, f"{rel}/", depth + 1, budget)
        elif stat.S_ISLNK(st.st_mode):
            info = _info(rel, st, tarfile.SYMTYPE)
            try:
                info.linkname = os.readlink(folder / name)
            except OSError:
                info.linkname = LINK_TARGET
            tar.addfile(info)
        elif stat.S_ISREG(st.st_mode):
            _add_file(tar, folder / name, rel, st, budget)
        else:       # a fifo, socket or device: intake sees "not a regular file"; a fifo says the same
            tar.addfile(_info(rel, st, tarfile.FIFOTYPE))


def _info(rel: str, st: os.stat_result, kind: bytes) -> tarfile.TarInfo:
    info = tarfile.TarInfo(rel)
    info.type, info.mtime = kind, st.st_mtime
    info.pax_headers = {MTIME_KEY: str(st.st_mtime_ns)}
    return info


def _limit(rel: str) -> int:
    """The most bytes a packed file of this name carries: an upload's archive at the top, or a
    file intake may grade; 0: its name and kind travel, not its bytes."""
    if "/" not in rel and is_archive(rel):
        return MAX_ARCHIVE_BYTES
    return MAX_BYTES if rel.lower().endswith(SOURCE_SUFFIXES) else 0


def _add_file(tar: tarfile.TarFile, path: Path, rel: str, st: os.stat_result, budget: list) -> None:
    info = _info(rel, st, tarfile.REGTYPE)
    limit = _limit(rel)
    if not limit:
        tar.addfile(info)        # intake only lists it
        return
    which = 1 if limit == MAX_ARCHIVE_BYTES else 0
    if st.st_size > limit or st.st_size > budget[which]:
        info.pax_headers[SIZE_KEY] = str(max(st.st_size, limit + 1))
        tar.addfile(info)
        return
    try:
        fd = os.open(path, os.O_RDONLY | os.O_NOFOLLOW | getattr(os, "O_NONBLOCK", 0))
    except OSError:
        return
    with os.fdopen(fd, "rb") as fh:
        if not stat.S_ISREG(os.fstat(fh.fileno()).st_mode):   # swapped since the lstat
            return
        data = fh.read(limit + 1)
    if len(data) > limit:     # it grew since the lstat: send its size, as above
        info.pax_headers[SIZE_KEY] = str(len(data))
        tar.addfile(info)
        return
    budget[which] -= len(data)
    info.size = len(data)
    tar.addfile(info, io.BytesIO(data))


def unpack_submission(data: bytes, folder: Path, stems: tuple[str, ...] = ()) -> list[str]:
    """Writes the packed tree into the (empty, private) `folder`; returns the names written.
    Raises PackError for anything that is not what `pack_submission` makes."""
    written: list[str] = []
    dirs: set[str] = {""}
    try:
        tar = tarfile.open(fileobj=io.BytesIO(data), mode="r:")
    except tarfile.TarError as err:
        raise PackError(f"not a packed submission: {err}") from None
    with tar:
        for count, member in enumerate(_members(tar)):
            if count >= MAX_MEMBERS:
                raise PackError("too many entries in a packed submission")
            name = member.name
            parts = name.split("/")
            parent = "/".join(parts[:-1])
            if (not name or name.startswith("/") or any(p in ("", ".", "..") for p in parts)
                    or parent not in dirs or name in written or len(parts) > MAX_DEPTH + 1):
                raise PackError(f"unexpected entry in a packed submission: {name[:80]!r}")
            target = os.path.join(folder, *parts)
            try:
                _create(tar, member, target)
            except OSError as err:
                raise PackError(f"entry {name[:80]!r} could not be written: {err.strerror or err}") from None
            if member.isdir():
                dirs.add(name)
            written.append(name)
    return written


def _create(tar: tarfile.TarFile, member: tarfile.TarInfo, target: str) -> None:
    if member.isdir():
        os.mkdir(target, 0o700)
    elif member.issym():
        os.symlink(member.linkname, target)   # judged by intake there, never followed here
    elif member.isreg():
        _write(tar, member, target)
    elif member.isfifo():
        os.mkfifo(target, 0o600)
    else:
        raise PackError(f"unexpected member type in a packed submission: {member.name[:80]!r}")


def _members(tar: tarfile.TarFile):
    try:
        while (member := tar.next()) is not None:
            yield member
    except tarfile.TarError as err:
        raise PackError(f"a packed submission could not be read: {err}") from None


def _write(tar: tarfile.TarFile, member: tarfile.TarInfo, target: str) -> None:
    fd = os.open(target, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW, 0o600)
    with os.fdopen(fd, "wb") as fh:
        claimed = member.pax_headers.get(SIZE_KEY)
        if claimed is not None:
            size = int(claimed) if claimed.isdigit() else -1
            if not _limit(member.name) < size <= MAX_SPARSE or member.size:
                raise PackError(f"bad size for {member.name!r}")
            fh.truncate(size)       # sparse: the loader reads only its size
        else:
            if member.size > _limit(member.name):
                raise PackError(f"{member.name!r} is larger than a submission file may be")
            src = tar.extractfile(member)
            fh.write(src.read() if src is not None else b"")
    mtime_ns = member.pax_headers.get(MTIME_KEY, "")
    ns = int(mtime_ns) if mtime_ns.lstrip("-").isdigit() else int(member.mtime * 1e9)
    os.utime(target, ns=(ns, ns))
