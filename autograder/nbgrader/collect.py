"""``nbgrader collect`` that takes a submission only from the account it is named after.

nbgrader's exchange names a submission ``<student>+<assignment>+<timestamp>+<random>`` in a
folder every student can write to, and its collect takes each student's latest one: a folder
planted there under another student's name with a later timestamp replaces that student's work,
with only a warning in the log. The generated ``nbgrader_config.py`` puts ``OwnerCheckedCollect``
in place of nbgrader's collect (``c.ExchangeFactory.collect``). It refuses, and names in its
output, a submission folder that

* is, or holds, a symbolic link or anything but files and folders (``nbgrader submit`` copies
  files and never makes a link; a link would let one account hand in another's files), or
* is, or holds, a file or folder owned by another account than the student it is named after
  (with nbgrader's ``ExchangeCollect.check_owner``, on by default: turn it off only where every
  student shares one Unix account, and then the exchange cannot tell students apart).

A refused folder is set aside before nbgrader picks each student's latest submission, so the
student's own latest one is still collected: a planted folder costs its author, not its victim.

The copy itself is made again by descriptor (``confined_copy``): each entry opened without
following a link and its owner read from the open file, so a folder that passed the check and
was changed before the copy (a file swapped for a link to another student's work) is refused
then, never followed.
"""

from __future__ import annotations

import os
import pwd
import shutil
import stat

from nbgrader.exchange.default.collect import ExchangeCollect
from nbgrader.utils import ignore_patterns

REFUSED = "refused"     # (REFUSED, folder name) groups a refused record alone: a tuple is never a student id


def entries(folder: str) -> dict[str, os.stat_result]:
    """Every entry of a submission folder, the folder itself as ".", as lstat sees it: a link is
    a link, never what it points to."""
    found = {".": os.lstat(folder)}
    if stat.S_ISDIR(found["."].st_mode):
        for dirpath, dirnames, filenames in os.walk(folder):     # does not enter linked folders
            for name in dirnames + filenames:
                path = os.path.join(dirpath, name)
                found[os.path.relpath(path, folder)] = os.lstat(path)
    return found


def account(uid: int) -> str:
    try:
        return pwd.getpwuid(uid).pw_name
    except KeyError:
        return f"uid {uid}"


def refusal(found: dict[str, os.stat_result], student: str, check_owner: bool) -> str | None:
    """Why a submission folder (its ``entries``) is not the student's own, or None."""
    for relative, st in found.items():
        what = "the folder" if relative == "." else relative
        if stat.S_ISLNK(st.st_mode):
            return f"{what} is a symbolic link"
        if not (stat.S_ISDIR(st.st_mode) or stat.S_ISREG(st.st_mode)):
            return f"{what} is neither a file nor a folder"
        if check_owner and account(st.st_uid) != student:
            return f"{what} is owned by {account(st.st_uid)}"
    return None


class Changed(Exception):
    """A submission folder that is no longer what the check saw (the message says what)."""


def confined_copy(src: str, dest: str, owner: str | None, ignore, max_bytes: int) -> None:
    """Copy the folder `src` to `dest` (which must not exist) by descriptor: no link followed, no
    entry but files and folders, each owned by `owner` (None: not checked), at most `max_bytes`
    in all; `ignore` is shutil.copytree's (nbgrader's include, exclude and size rules)."""
    flags = os.O_RDONLY | os.O_NOFOLLOW | getattr(os, "O_CLOEXEC", 0)
    copied = 0

    def owned(fd: int, what: str) -> os.stat_result:
        st = os.fstat(fd)
        if owner is not None and account(st.st_uid) != owner:
            raise Changed(f"{what} is owned by {account(st.st_uid)}")
        return st

    def copy_folder(dir_fd: int, path: str, target: str) -> None:
        nonlocal copied
        os.makedirs(target, exist_ok=False)
        names = sorted(os.listdir(dir_fd))
        skipped = set(ignore(path, names)) if ignore else set()
        for name in names:
            if name in skipped:
                continue
            what = os.path.relpath(os.path.join(path, name), src)
            try:
                fd = os.open(name, flags | os.O_NONBLOCK, dir_fd=dir_fd)
            except OSError as err:
                raise Changed(f"{what} cannot be opened as a file or folder ({err.strerror})") from None
            try:
                st = owned(fd, what)
                if stat.S_ISDIR(st.st_mode):
                    copy_folder(fd, os.path.join(path, name), os.path.join(target, name))
                elif stat.S_ISREG(st.st_mode):
                    copied += st.st_size
                    if copied > max_bytes:
                        raise Changed(f"it holds more than {max_bytes} bytes")
                    with open(os.path.join(target, name), "xb") as out, os.fdopen(os.dup(fd), "rb") as data:
                        shutil.copyfileobj(data, out)
                        os.chmod(out.fileno(), stat.S_IMODE(st.st_mode) & 0o777)
                else:
                    raise Changed(f"{what} is neither a file nor a folder")
            finally:
                os.close(fd)

    try:
        top = os.open(src, flags | os.O_DIRECTORY)
    except OSError as err:
        raise Changed(f"the folder cannot be opened as a folder ({err.strerror})") from None
    try:
        owned(top, "the folder")
        copy_folder(top, src, dest)
    finally:
        os.close(top)


class OwnerCheckedCollect(ExchangeCollect):
    """nbgrader's collect, refusing a submission folder another account made or touched."""

    def _path_to_record(self, path):
        record = super()._path_to_record(path)
        try:
            why = refusal(entries(path), record["username"], self.check_owner)
        except OSError as err:
            why = f"it cannot be read ({err.strerror})"
        if why:
            # its own group: nbgrader then picks the student's latest submission among the others
            record.update(username=(REFUSED, record["filename"]), claimed=record["username"], refused=why)
        return record

    def do_copy(self, src, dest, log=None):
        """nbgrader's copy (its include, exclude and size rules), made by descriptor."""
        student = os.path.basename(src).split("+", 1)[0]
        ignore = ignore_patterns(exclude=self.coursedir.ignore, include=self.coursedir.include,
                                 max_file_size=self.coursedir.max_file_size, log=self.log)
        try:
            confined_copy(src, dest, student if self.check_owner else None, ignore,
                          1000 * self.coursedir.max_dir_size)
        except Changed as err:
            shutil.rmtree(dest, ignore_errors=True)
            self.refused.append({"filename": os.path.basename(src), "claimed": student, "refused": str(err)})
            return
        if self.coursedir.groupshared:
            for dirname, _, filenames in os.walk(dest):
                os.chmod(dirname, (os.stat(dirname).st_mode | 0o2770) & 0o2777)
                for filename in filenames:
                    path = os.path.join(dirname, filename)
                    os.chmod(path, (os.stat(path).st_mode | 0o660) & 0o777)

    def copy_files(self):
        self.refused = [r for r in self.src_records if "refused" in r]
        self.src_records = [r for r in self.src_records if "refused" not in r]
        super().copy_files()
        for record in self.refused:
            self.log.error("Refused %s: it is named as %s's submission, but %s. Not collected.",
                           os.path.join(self.inbound_path, record["filename"]), record["claimed"], record["refused"])
        if self.refused:
            self.log.error("%d submission folder(s) refused (listed above): look at them before grading.",
                           len(self.refused))
