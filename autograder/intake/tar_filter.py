"""Which members of a student's tar may be unpacked: tarfile's own "data" filter (PEP 706) where the
interpreter has it, and the same rules here where it does not.

pyproject allows every Python from 3.10, but the filter came with patch releases: 3.10.12 and
3.11.4 (3.12.0 has it). An older interpreter, such as Debian 12's own 3.11.2, has neither
`tarfile.data_filter` nor `tarfile.FilterError`, and would fail every honest `.tar.gz`. The rules
below are the filter's as the standard library words them, so that a student is told the same
whichever Python grades them: no absolute path, nothing that lands outside the destination, no
device or FIFO, no link to an absolute path or out of the destination. Modes and owners, which
the filter also resets, are never taken from a member here: the kit writes every file itself, 0600
(autograder/intake/archives.py).
"""

from __future__ import annotations

import os
import tarfile

NATIVE = hasattr(tarfile, "data_filter") and hasattr(tarfile, "FilterError")


class _OwnFilterError(tarfile.TarError):
    """A member the rules refuse (tarfile.FilterError, where the interpreter has it)."""


FilterError = tarfile.FilterError if NATIVE else _OwnFilterError


def data_filter(member: tarfile.TarInfo, dest: str) -> tarfile.TarInfo:
    """The member as it may be unpacked below `dest`; FilterError (with the reason) when it may not."""
    if NATIVE:
        return tarfile.data_filter(member, dest)
    refusal = refused(member, dest)
    if refusal:
        raise FilterError(refusal)
    return member


def refused(member: tarfile.TarInfo, dest: str) -> str:
    """Why the data filter's rules refuse `member` below `dest` ("" when they do not)."""
    name = member.name
    dest = os.path.realpath(dest)
    if name.startswith(("/", os.sep)):
        name = name.lstrip("/" + os.sep)
    if os.path.isabs(name):
        return f"member {member.name!r} has an absolute path"
    target = os.path.realpath(os.path.join(dest, name))
    if os.path.commonpath([target, dest]) != dest:
        return f"{member.name!r} would be extracted to {target!r}, which is outside the destination"
    if not (member.isreg() or member.islnk() or member.isdir() or member.issym()):
        return f"{member.name!r} is a special file"
    if member.islnk() or member.issym():
        if os.path.isabs(member.linkname):
            return f"{member.name!r} is a link to an absolute path"
        base = os.path.dirname(name) if member.issym() else ""
        linked = os.path.realpath(os.path.join(dest, base, member.linkname))
        if os.path.commonpath([linked, dest]) != dest:
            return f"{member.name!r} would link to {linked!r}, which is outside the destination"
    return ""
