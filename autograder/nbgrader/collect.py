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
"""

from __future__ import annotations

import os
import pwd
import stat

from nbgrader.exchange.default.collect import ExchangeCollect

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
