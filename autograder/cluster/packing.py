"""A student's submission packed for a Dask worker (autograder/cluster/transport.py), in a bounded
child charged to the student (autograder/intake/bounded.py): the client lists and reads no
student's bytes itself. An LMS's flat uploads are gathered first under the names the student
gave them (nothing of them opened: the worker unpacks the archives, under the student's limits
there), within the student's totals (autograder/intake/budget.py).

This module is also the helper the packing children are forked from (autograder/sandbox/helper_process.py):
its OPS are the parse helper's and `pack`.
"""

from __future__ import annotations

import os
from pathlib import Path

import numpy as np

from autograder.sandbox import helper_process
from autograder.intake import bounded, budget, parse_helper, staging
from autograder.intake.scratch import scratch_folder
from autograder.intake.archives import MAX_ARCHIVE_BYTES, is_archive
from autograder.intake.files import Folder, ignored
from autograder.intake.students import Student

HELPER = helper_process.Helper("autograder.cluster.packing")


def packed(folder: Path, student: Student, stems: tuple[str, ...]) -> tuple[bytes, tuple[str, ...], tuple[str, ...]]:
    """(the submission packed for a worker, notes, the names handed in), charged to the current
    account (budget.charging)."""
    with scratch_folder() as tmp:
        where, fds = bounded.folder_arg(folder)
        answer = bounded.run("pack", [where, [list(u) for u in student.uploads], tmp, list(stems)], fds=fds,
                             item=False, helper=HELPER)
        try:
            data, notes, uploaded = answer["packed"], answer["notes"], answer["uploaded"]
            if not (isinstance(data, np.ndarray) and data.dtype == np.uint8 and data.ndim == 1
                    and all(isinstance(n, str) for n in [*notes, *uploaded])):
                raise TypeError("a packed submission that is not one")
        except (KeyError, TypeError) as err:
            raise bounded.ParserUnavailable(f"the packer gave an answer that is not one ({err})") from None
        return data.tobytes(), tuple(notes), tuple(uploaded)


def packed_here(where, uploads: list, tmp: str, stems: list[str]) -> dict:
    """What `packed` runs in its child."""
    from autograder.cluster.transport import pack_submission

    folder, notes, account = Path(bounded.folder_of(where)), [], budget.current()
    with Folder(folder) as root:
        if uploads:
            uploaded = [given for given, _ in uploads if not ignored(given)]
            for given, real in sorted((tuple(u) for u in uploads), key=staging.reading_order(tuple(stems))):
                if account.must_stop():        # what is gathered is sent; the child must answer in time
                    account.leave_out(account.over_time(), given)
                    continue
                if is_archive(given):
                    _gather_archive(root, given, real, tmp, account, notes)
                else:
                    staging.copy_loose(root, given, real, tmp, account, notes)
            folder = Path(tmp)
        else:
            names, _ = root.listdir(())
            uploaded = [n for n in names if not ignored(n)]
    packed = pack_submission(folder, tuple(stems), account.must_stop)
    return {"packed": np.frombuffer(packed.data, dtype=np.uint8), "notes": notes + list(packed.notes),
            "uploaded": uploaded}


def _gather_archive(root: Folder, given: str, real: str, dest: str, account: budget.Account,
                    notes: list[str]) -> None:
    """An archive copied as it is, under the name the student gave it (the worker opens it)."""
    fd = staging.open_upload(root, real, notes)
    if fd is None:
        return
    try:
        size = os.fstat(fd).st_size
        if size > MAX_ARCHIVE_BYTES:
            notes.append(f"your upload {given} is larger than {MAX_ARCHIVE_BYTES // 2**20} MB; it was not opened")
            return
        if not account.take("staged_bytes", size):
            account.leave_out(account.over("staged_bytes"), given)
            return
        data = staging.read_at_most(fd, MAX_ARCHIVE_BYTES + 1)
    finally:
        os.close(fd)
    if not staging.write_new(os.path.join(dest, given), data):
        notes.append(f"{real} was not graded: another file of yours is also called {given}")


OPS = {**parse_helper.OPS, "pack": parse_helper.charged(packed_here)}
warm = parse_helper.warm
