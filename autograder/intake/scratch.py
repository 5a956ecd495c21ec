"""The grader's scratch folders for a student's staged bytes: private (0700) folders in the
temporary directory, removed when the read is done. Each is named after the grader's process, so
that one left behind by a grader killed mid-read (SIGKILL runs no cleanup) can be told from a live
grader's and is removed by the next one, as the sandbox's stale cgroups are.

    with scratch_folder() as tmp:
        ...a bounded child stages the student's files under tmp...
"""

from __future__ import annotations

import os
import shutil
import stat
import tempfile
import time
from contextlib import contextmanager
from typing import Iterator

PREFIX = "attnkit-upload-"
# A scratch folder lives for one student's read; one this old whose process is gone is left over.
STALE_AFTER_S = 3600

_SWEPT: set[str] = set()


@contextmanager
def scratch_folder() -> Iterator[str]:
    """A new private folder, removed (with whatever a child staged in it) on leaving."""
    sweep_stale(tempfile.gettempdir())
    tmp = tempfile.mkdtemp(prefix=f"{PREFIX}{os.getpid()}-")
    try:
        yield tmp
    finally:
        shutil.rmtree(tmp, ignore_errors=True)


def sweep_stale(parent: str) -> None:
    """Removes, once per process and folder, the scratch folders of graders that are gone: ours
    (the same owner), named with a pid that no longer runs, untouched for STALE_AFTER_S. A live
    grader in another PID namespace is spared by the age: its folders live for one read."""
    if parent in _SWEPT:
        return
    _SWEPT.add(parent)
    try:
        names = [n for n in os.listdir(parent) if n.startswith(PREFIX)]
    except OSError:
        return
    now, me = time.time(), os.geteuid()
    for name in names:
        pid = name[len(PREFIX):].split("-")[0]
        path = os.path.join(parent, name)
        try:
            st = os.lstat(path)
        except OSError:
            continue
        if (not pid.isdigit() or int(pid) == os.getpid() or os.path.exists(f"/proc/{pid}")
                or st.st_uid != me or not stat.S_ISDIR(st.st_mode)
                or now - st.st_mtime < STALE_AFTER_S):
            continue
        shutil.rmtree(path, ignore_errors=True)
