"""A submission as bytes: packed by the client from its folder, unpacked on a worker.

Only the contract's files travel (`<stem>.py`, `<stem>.ipynb` for the course's stems), read
with O_NOFOLLOW from regular files: a link is never followed. What the loader needs to say
the same thing on the worker as it would locally travels too, without the content it refuses:
a symbolic link becomes a dangling link (the loader reports "is a symbolic link"), a file over
the loader's size limit becomes a sparse file of the same size (it reports the size), and each
file keeps its modification time (the loader grades the newer of `.py` and `.ipynb`).

The format is a POSIX (pax) tar built member by member, and unpacking writes each member
itself after checking its name and type: tarfile's own extraction is never used.
"""

from __future__ import annotations

import io
import os
import stat
import tarfile
from pathlib import Path

from autograder.load import MAX_BYTES

SIZE_KEY = "ATTNKIT.size"          # pax header: the size of a file sent without its content
MTIME_KEY = "ATTNKIT.mtime_ns"     # pax header: the exact modification time
LINK_TARGET = "/nonexistent/attnkit-link-not-followed"
MAX_MEMBERS = 64                   # 2 files per stem; anything more is not a packed submission
MAX_SPARSE = 1 << 40               # a size claimed for an oversized file


class PackError(ValueError):
    """Bytes that are not a packed submission (a bug or a message that was tampered with)."""


def contract_names(stems: tuple[str, ...]) -> list[str]:
    return [f"{stem}{suffix}" for stem in stems for suffix in (".py", ".ipynb")]


def pack_submission(folder: Path, stems: tuple[str, ...]) -> bytes:
    """The contract's files of `folder` as a tar (bytes). Files that are missing are left out."""
    buf = io.BytesIO()
    with tarfile.open(fileobj=buf, mode="w", format=tarfile.PAX_FORMAT) as tar:
        for name in contract_names(stems):
            _add(tar, Path(folder), name)
    return buf.getvalue()


def _add(tar: tarfile.TarFile, folder: Path, name: str) -> None:
    path = folder / name
    try:
        st = os.lstat(path)
    except OSError:
        return
    info = tarfile.TarInfo(name)
    info.mtime = st.st_mtime
    info.pax_headers = {MTIME_KEY: str(st.st_mtime_ns)}
    if stat.S_ISLNK(st.st_mode):
        info.type, info.linkname = tarfile.SYMTYPE, LINK_TARGET
        tar.addfile(info)
        return
    if not stat.S_ISREG(st.st_mode):
        return     # a folder or a fifo with a contract name: the loader sees no file either
    if st.st_size > MAX_BYTES:
        info.pax_headers[SIZE_KEY] = str(st.st_size)
        tar.addfile(info)
        return
    try:
        fd = os.open(path, os.O_RDONLY | os.O_NOFOLLOW | getattr(os, "O_NONBLOCK", 0))
    except OSError:
        return
    with os.fdopen(fd, "rb") as fh:
        if not stat.S_ISREG(os.fstat(fh.fileno()).st_mode):   # swapped since the lstat
            return
        data = fh.read(MAX_BYTES + 1)
    if len(data) > MAX_BYTES:     # it grew since the lstat: send its size, as above
        info.pax_headers[SIZE_KEY] = str(max(len(data), st.st_size))
        tar.addfile(info)
        return
    info.size = len(data)
    tar.addfile(info, io.BytesIO(data))


def unpack_submission(data: bytes, folder: Path, stems: tuple[str, ...]) -> list[str]:
    """Writes the packed files into the (empty, private) `folder`; returns the names written.
    Raises PackError for anything that is not exactly what `pack_submission` makes."""
    allowed = set(contract_names(stems))
    written: list[str] = []
    try:
        tar = tarfile.open(fileobj=io.BytesIO(data), mode="r:")
    except tarfile.TarError as err:
        raise PackError(f"not a packed submission: {err}") from None
    with tar:
        for count, member in enumerate(_members(tar)):
            if count >= MAX_MEMBERS:
                raise PackError("too many files in a packed submission")
            name = member.name
            if name not in allowed or name in written:
                raise PackError(f"unexpected file in a packed submission: {name[:80]!r}")
            target = os.path.join(folder, name)
            if member.issym():
                os.symlink(LINK_TARGET, target)
            elif member.isreg():
                _write(tar, member, target)
            else:
                raise PackError(f"unexpected member type in a packed submission: {name!r}")
            written.append(name)
    return written


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
            if not MAX_BYTES < size <= MAX_SPARSE or member.size:
                raise PackError(f"bad size for {member.name!r}")
            fh.truncate(size)       # sparse: the loader reads only its size
        else:
            if member.size > MAX_BYTES:
                raise PackError(f"{member.name!r} is larger than a submission file may be")
            src = tar.extractfile(member)
            fh.write(src.read() if src is not None else b"")
    mtime_ns = member.pax_headers.get(MTIME_KEY, "")
    ns = int(mtime_ns) if mtime_ns.lstrip("-").isdigit() else int(member.mtime * 1e9)
    os.utime(target, ns=(ns, ns))
