"""Which file of a student's folder is graded for each exercise, read without leaving that folder.

Files arrive as real submissions do: zipped on a Mac (`__MACOSX/`), with Jupyter's
checkpoints, editor backups, inside one extra folder, renamed by a browser (`attention (1).py`)
or by the student (`Attention-v2.py`). Intake forgives all of that and says what it did.

It never reads outside the student's folder: every path below the folder is opened one
component at a time relative to its parent's descriptor with O_NOFOLLOW, so a symbolic link
is seen as a link, never followed by the kernel. A link whose target stays inside the folder
is followed by hand (re-walking the target the same way); one that leads out, or an absolute
one, refuses that file with a message. A file is checked (fstat) on the descriptor it is read
from, so swapping it for a link between the check and the read changes nothing.
"""

from __future__ import annotations

import errno
import os
import stat
from dataclasses import dataclass, field
from enum import Enum
from functools import lru_cache
from pathlib import Path

from autograder.intake import SOURCE_SUFFIXES
from autograder.judge import forms
from autograder.judge.forms import ignored, normal_stem  # noqa: F401 - the judge's rule: names intake skips, near misses

MAX_BYTES = 2 * 1024 * 1024      # a hand-written exercise file is a few KB; a notebook with plots maybe 1 MB
MAX_ENTRIES = 5_000              # entries read from one folder: a real submission has a dozen
MAX_DESCENT = 3                  # single subfolders descended into (zip inside a folder inside a folder)
MAX_LINK_HOPS = 8

# a folder below another, opened without following a link
DIR_FLAGS = os.O_RDONLY | os.O_DIRECTORY | getattr(os, "O_NOFOLLOW", 0) | getattr(os, "O_CLOEXEC", 0)
_O_FILE = os.O_RDONLY | getattr(os, "O_NOFOLLOW", 0) | getattr(os, "O_CLOEXEC", 0) | getattr(os, "O_NONBLOCK", 0)



class Flag(str, Enum):
    """What intake did about a file, for the class report (the note says it in words)."""
    RENAMED = "renamed"            # a near-miss name was graded (Attention.py for attention.py)
    SUBFOLDER = "subfolder"        # the files were found inside a single subfolder
    STUB_SKIPPED = "stub_skipped"  # the other form was an untouched stub and was not graded
    BOTH_FORMS = "both_forms"      # .py and .ipynb both hold work: both graded, the better kept
    AMBIGUOUS = "ambiguous"        # several near-miss names (each is graded, the better kept)
    REFUSED = "refused"            # a link out of the folder, a special file
    HARD_LINK = "hard_link"        # the file has other names on disk (graded; listed in the report)
    CANDIDATES = "candidates"      # several near-miss names were each graded, the better kept
    ARCHIVE = "archive"            # the files came out of an uploaded archive or an LMS's flat download
    LEFT_OUT = "left_out"          # part of the submission went past what the grader reads of one (budget.py)


@dataclass(frozen=True)
class Found:
    """A file intake read for a stem: its bytes and where it was inside the student's folder."""
    stem: str
    relpath: str                   # "attention.py", "hw1/Attention (1).py"
    data: bytes
    note: str = ""
    flags: tuple[Flag, ...] = ()

    @property
    def suffix(self) -> str:
        return Path(self.relpath).suffix.lower()


@dataclass(frozen=True)
class Problem:
    """Nothing gradable for a stem; `relpath` None when no file was there at all."""
    stem: str
    relpath: str | None
    message: str
    flags: tuple[Flag, ...] = ()


@dataclass(frozen=True)
class StemFiles:
    """Intake's answer for one stem: the files to grade (one per form present), or a problem."""
    stem: str
    files: tuple[Found, ...] = ()
    problem: Problem | None = None
    notes: tuple[str, ...] = field(default=())   # said about the folder as a whole (a subfolder)


class Refused(Exception):
    def __init__(self, relpath: str, message: str):
        super().__init__(message)
        self.relpath, self.message = relpath, message


# ---------------------------------------------------------------- the folder, by descriptor

def descend(fd: int, parts) -> int:
    """The folder `parts` below the folder `fd`, opened one step at a time without following a
    link. Takes `fd` over: it is closed, also when a step fails."""
    try:
        for part in parts:
            nxt = os.open(part, DIR_FLAGS, dir_fd=fd)
            os.close(fd)
            fd = nxt
        return fd
    except BaseException:
        os.close(fd)
        raise


class Folder:
    """A student's folder opened once; everything below it is reached through descriptors."""

    def __init__(self, path: Path):
        # The folder itself is opened as given (the caller decides which folder is the
        # student's: the class loop hands over a descriptor it opened without following links).
        self.fd = os.open(path, os.O_RDONLY | os.O_DIRECTORY | getattr(os, "O_CLOEXEC", 0))

    def is_kit_folder(self, parts: tuple[str, ...]) -> bool:
        """Whether the folder at `parts` is one of the kit's own folders of answers."""
        fd = self._open_dir(parts)
        try:
            st = os.fstat(fd)
        finally:
            os.close(fd)
        return (st.st_dev, st.st_ino) in _kit_folders()

    def close(self) -> None:
        os.close(self.fd)

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()

    def listdir(self, parts: tuple[str, ...]) -> tuple[list[str], bool]:
        """(names, truncated) of the folder at `parts`, at most MAX_ENTRIES of them, and no more than
        the submission's account has left to look at (autograder/intake/budget.py)."""
        from autograder.intake import budget

        account = budget.current()
        most = max(0, min(MAX_ENTRIES, account.left("entries")))
        fd = self._open_dir(parts)
        try:
            names, truncated = [], False
            with os.scandir(fd) as it:
                for entry in it:
                    if len(names) >= most:
                        truncated = True
                        break
                    names.append(entry.name)
        finally:
            os.close(fd)
        account.take("entries", len(names))
        if truncated and most < MAX_ENTRIES:
            account.leave_out(account.over("entries"), "/".join(parts) or "your folder")
        return sorted(names), truncated

    def kind(self, parts: tuple[str, ...]) -> str:
        """"file", "dir", "link" or "other" of the entry at `parts`, without following it."""
        fd = self._open_dir(parts[:-1])
        try:
            mode = os.stat(parts[-1], dir_fd=fd, follow_symlinks=False).st_mode
        finally:
            os.close(fd)
        if stat.S_ISLNK(mode):
            return "link"
        return "file" if stat.S_ISREG(mode) else "dir" if stat.S_ISDIR(mode) else "other"

    def read(self, parts: tuple[str, ...], limit: int = MAX_BYTES) -> tuple[bytes, os.stat_result]:
        """The bytes of a regular file (at most limit + 1 of them), following links only while they
        stay inside the folder. Raises Refused with the reason otherwise."""
        fd = self.open_file(parts)
        try:
            st = os.fstat(fd)
            chunks, size = [], 0
            while size <= limit:
                chunk = os.read(fd, min(1 << 20, limit + 1 - size))
                if not chunk:
                    break
                chunks.append(chunk)
                size += len(chunk)
            return b"".join(chunks), st
        finally:
            os.close(fd)

    def open_file(self, parts: tuple[str, ...]) -> int:
        """A descriptor of a regular file, reached following links only while they stay inside the
        folder. Raises Refused with the reason otherwise."""
        parts = self._resolve(parts)
        dfd = self._open_dir(parts[:-1])
        try:
            st = os.stat(parts[-1], dir_fd=dfd, follow_symlinks=False)
            if not stat.S_ISREG(st.st_mode):     # a FIFO or device is never opened (it could block)
                raise Refused("/".join(parts), f"{'/'.join(parts)} is not a regular file")
            fd = os.open(parts[-1], _O_FILE, dir_fd=dfd)
        finally:
            os.close(dfd)
        if not stat.S_ISREG(os.fstat(fd).st_mode):
            os.close(fd)
            raise Refused("/".join(parts), f"{'/'.join(parts)} is not a regular file")
        return fd

    def _open_dir(self, parts: tuple[str, ...]) -> int:
        return descend(os.dup(self.fd), parts)

    def _resolve(self, parts: tuple[str, ...]) -> tuple[str, ...]:
        """`parts` with every link inside the folder replaced by its target; Refused when a link
        is absolute or climbs out of the folder."""
        shown = "/".join(parts)
        for _ in range(MAX_LINK_HOPS):
            for i in range(1, len(parts) + 1):
                head = parts[:i]
                try:
                    kind = self.kind(head)
                except OSError:
                    break           # missing: the read below says so
                if kind != "link":
                    continue
                dfd = self._open_dir(head[:-1])
                try:
                    target = os.readlink(head[-1], dir_fd=dfd)
                finally:
                    os.close(dfd)
                inside = _inside(head[:-1], target)
                if inside is None:
                    raise Refused(shown, f"{shown} is a symbolic link leading outside your folder "
                                         f"({'/'.join(head)} -> {target}); submit the file itself")
                parts = inside + parts[i:]
                break
            else:
                return parts
        else:
            raise Refused(shown, f"{shown}: too many symbolic links; submit the file itself")
        return parts


def _inside(base: tuple[str, ...], target: str) -> tuple[str, ...] | None:
    """The path a relative link target names, as parts below the folder; None when it leaves it."""
    if os.path.isabs(target) or not target:
        return None
    parts = list(base)
    for part in target.split("/"):
        if part in ("", "."):
            continue
        if part == "..":
            if not parts:
                return None
            parts.pop()
        else:
            parts.append(part)
    return tuple(parts) if parts else None


# ---------------------------------------------------------------- discovery

def _kit_roots() -> tuple[Path, ...]:
    """The kit's folders of answers: its reference and its solutions."""
    import reference

    here = Path(reference.__file__).parent
    return here, here.parent / "solutions"


def _identities(paths) -> frozenset[tuple[int, int]]:
    found = set()
    for path in paths:
        try:
            st = path.stat()
            found.add((st.st_dev, st.st_ino))
        except OSError:
            pass
    return frozenset(found)


def _kit_inodes() -> frozenset[tuple[int, int]]:
    """(device, inode) of the kit's own files: a hard link to one of them is never graded
    (unless it is graded in its own folder: `attnkit check --submission solutions`)."""
    return _identities(path for root in _kit_roots() for path in root.glob("*.py"))


def _kit_folders() -> frozenset[tuple[int, int]]:
    """(device, inode) of the kit's folders of answers: there, the kit's files are its own."""
    return _identities(_kit_roots())


_kit_folders = lru_cache(maxsize=1)(_kit_folders)
_kit_inodes = lru_cache(maxsize=1)(_kit_inodes)


def discover(folder: Path, stems: tuple[str, ...]) -> dict[str, StemFiles]:
    """For each stem, the files of the student's folder to grade (see the module's docstring)."""
    with Folder(Path(folder)) as root:
        base, notes = _descend(root)
        names, truncated = root.listdir(base)
        visible = [n for n in names if not ignored(n)]
        where = "/".join(base)
        return {stem: _for_stem(root, base, visible, stem, notes, truncated, where) for stem in stems}


def _descend(root: Folder) -> tuple[tuple[str, ...], tuple[str, ...]]:
    """The folder that holds the work: the student's own, or a single subfolder (repeatedly)
    when the folder holds nothing else worth grading (how LMS zips arrive)."""
    base: tuple[str, ...] = ()
    for _ in range(MAX_DESCENT):
        names, _ = root.listdir(base)
        visible = [n for n in names if not ignored(n)]
        if any(Path(n).suffix.lower() in SOURCE_SUFFIXES for n in visible):
            break
        dirs = [n for n in visible if _kind(root, base + (n,)) == "dir"]
        if len(dirs) != 1:
            break
        base = base + (dirs[0],)
    note = (f"your files were found in the folder {'/'.join(base)}/ inside your submission, and graded from there",) \
        if base else ()
    return base, note


def _kind(root: Folder, parts: tuple[str, ...]) -> str:
    try:
        return root.kind(parts)
    except OSError:
        return "other"


class _Folders:
    """The names of a folder that are folders, each looked at when asked (a link or a file named
    like an exercise is one, judged on reading)."""

    def __init__(self, root: Folder, base: tuple[str, ...]):
        self.root, self.base = root, base

    def __contains__(self, name: object) -> bool:
        return isinstance(name, str) and _kind(self.root, self.base + (name,)) == "dir"


def _for_stem(root: Folder, base: tuple[str, ...], names: list[str], stem: str, notes: tuple[str, ...],
              truncated: bool, where: str) -> StemFiles:
    flags = (Flag.SUBFOLDER,) if base else ()
    prefix = f"{where}/" if where else ""
    found = forms.named(stem, names, _Folders(root, base), where, MAX_ENTRIES if truncated else None)
    if found.ambiguous:
        return StemFiles(stem, problem=Problem(stem, prefix + found.ambiguous[0], found.problem,
                                               flags + (Flag.AMBIGUOUS,)), notes=notes)
    if not found.files:
        return StemFiles(stem, problem=Problem(stem, None, found.problem), notes=notes)
    files, problems = _read(root, base, list(found.files), stem, flags, notes)
    if not files:
        return StemFiles(stem, problem=problems[0], notes=notes)
    return StemFiles(stem, files=tuple(files), notes=notes)


def _read(root: Folder, base: tuple[str, ...], chosen: list[tuple[str, str]], stem: str, flags: tuple[Flag, ...],
          notes: tuple[str, ...]) -> tuple[list[Found], list[Problem]]:
    """The files `chosen` ((name, note) in the folder `base`) read, or the problem of each."""
    prefix = "/".join(base) + "/" if base else ""
    files, problems = [], []
    for name, note in chosen:
        relpath = prefix + name
        try:
            data, st = root.read(base + (name,))
        except Refused as err:
            problems.append(Problem(stem, relpath, err.message, flags + (Flag.REFUSED,)))
            continue
        except OSError as err:
            problems.append(Problem(stem, relpath, _os_message(relpath, err), flags))
            continue
        extra: tuple[Flag, ...] = (Flag.RENAMED,) if note else ()
        if st.st_nlink > 1:
            if (st.st_dev, st.st_ino) in _kit_inodes() and not root.is_kit_folder(base):
                problems.append(Problem(stem, relpath, f"{relpath} is a hard link to a file of the course's "
                                        f"solutions; submit your own file", flags + (Flag.REFUSED,)))
                continue
            extra += (Flag.HARD_LINK,)
        files.append(Found(stem, relpath, data, "; ".join(filter(None, (*notes, note))), flags + extra))
    return files, problems


def candidates(folder: Path, stem: str) -> tuple[Found, ...]:
    """Every file that could be `stem`'s where intake found it AMBIGUOUS (forms.candidates), read as
    discover reads one. The caller grades each, keeps the better (forms.the_better)."""
    with Folder(Path(folder)) as root:
        base, notes = _descend(root)
        names, _ = root.listdir(base)
        visible = [n for n in names if not ignored(n)]
        near = forms.candidates(stem, visible, _Folders(root, base))
        flags = (Flag.SUBFOLDER,) if base else ()
        files, _ = _read(root, base, [(n, "") for n in near], stem, flags, notes)
        return tuple(files)


def _os_message(relpath: str, err: OSError) -> str:
    if err.errno == errno.ELOOP:
        return f"{relpath} is a symbolic link; submit the file itself"
    if err.errno == errno.ENOTDIR:
        return f"{relpath} passes through a symbolic link; submit the file itself"
    return f"{relpath} cannot be read: {err.strerror or err}"
