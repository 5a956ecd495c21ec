"""Everything the grader does with a student's bytes -- listing and staging their folder,
unpacking archives, reading notebooks, compiling and parsing their code, fingerprinting it -- is
done in a child of the parse helper (autograder/sandbox/helper_process.py, whose children run
autograder/intake/parse_helper.py's operations), under the limits of one item and within what is
left of that student's budget (autograder/intake/budget.py), and charged to it: the CPU time the
child used, measured when it ends.

The parsers are the standard library's and IPython's, and some are slow or greedy on crafted
input whatever the interpreter's patch level (tarfile's pax headers in quadratic time, a GNU
long-name header declaring gigabytes that tarfile reads whole, IPython's input transformer
re-reading a whole cell for every `!` line). In the grader they would hold the interpreter and
its memory, and every lane with them. In a child, they cost only the child, and its student:
past its CPU time or memory it dies, the upload is refused with a message that names it, and the
refusal is remembered in the student's account by the digest of the bytes (the same bytes under
another name are refused at once). The grader's process reads only the children's answers: JSON
and .npy arrays.

A child that reads a whole submission forks a child of its own for each item (an archive, a
notebook, a large .py file), so one hostile item costs that item, and the rest is read.
"""

from __future__ import annotations

import hashlib
import os
import re
import struct

from autograder.sandbox import helper_process
from autograder.intake import budget, stubs

ITEM_WALL_SECONDS = 60.0        # a child starved by a busy machine, not one that works: helper_process
READING_WALL_SECONDS = 600.0    # a whole submission's reading, its items' children included
ANSWER_BYTES = 32 * 1024 * 1024
FILE_BYTES = 16 * 1024 * 1024 + (1 << 16)     # the largest file a child writes: an archive's member
HEADER = struct.Struct("!Q")
HELPER = helper_process.Helper("autograder.intake.parse_helper")


class OverLimit(Exception):
    """The bytes could not be read within the limits: the upload's doing (its message says which)."""


class ParserUnavailable(RuntimeError):
    """The grader could not parse at all (no helper, no fork, a machine too busy to let a child
    run): the grader's failure, never held against the student."""


def run(op: str, args: list, *, memo: str | None = None, fds: tuple[int, ...] = (), item: bool = True,
        helper: helper_process.Helper | None = None):
    """The value of parse_helper.OPS[op](*args) (or of `helper`'s module, whose OPS hold
    parse_helper's), computed in a bounded child, charged to the
    account of the submission being read (budget.current()). `item`: the child reads one item
    (an item's CPU limit); else it reads the whole submission (all that is left). Raises
    OverLimit when the child went past its limits or nothing is left for it (remembered under
    `memo`, a digest of the bytes: the same bytes are refused again at once), ParserUnavailable
    when it could not run."""
    account = budget.current()
    if memo is not None and memo in account.refused:
        raise OverLimit(account.refused[memo])
    try:
        cpu = account.child_cpu(item)
    except budget.Spent as err:
        raise OverLimit(str(err)) from None
    limits = helper_process.Limits(cpu_seconds=cpu, memory_mb=account.limits.memory_mb,
                                   wall_seconds=ITEM_WALL_SECONDS if item else READING_WALL_SECONDS,
                                   answer_bytes=ANSWER_BYTES, file_bytes=FILE_BYTES)
    try:
        done = (helper or HELPER).run(op, [account.state(), stubs.graded_here(), *args], limits, fds)
    except helper_process.OverLimit as err:
        account.charge_cpu(err.cpu_seconds)
        why = _over(err.limit, limits, account)
        account.remember(memo, why)
        raise OverLimit(why) from None
    except helper_process.Unavailable as err:
        raise ParserUnavailable(f"the grader's parser failed: {err}") from None
    account.charge_cpu(done.cpu_seconds)
    answer = done.value
    if not isinstance(answer, dict) or "value" not in answer or not isinstance(answer.get("account"), dict):
        raise ParserUnavailable("the grader's parser gave an answer that is not one")
    account.absorb(answer["account"])
    return answer["value"]


def _over(limit: str, limits: helper_process.Limits, account: budget.Account) -> str:
    if limit == "cpu":
        whole = account.limits.item_cpu_seconds
        if limits.cpu_seconds < whole:       # cut short by the submission's budget
            return (f"reading it needs more than the {limits.cpu_seconds} s of CPU time left of the "
                    f"{account.limits.cpu_seconds:g} s the grader gives to reading one submission")
        return f"reading it needs more than {limits.cpu_seconds} s of CPU time"
    if limit == "wall":
        return f"reading it took more than {limits.wall_seconds:g} s"
    if limit == "answer":
        return f"reading it makes more than {limits.answer_bytes // 2**20} MB of source"
    if limit == "file":
        return f"reading it writes a file of more than {limits.file_bytes // 2**20} MB"
    return f"reading it needs more than {limits.memory_mb} MB of memory"


def digest(*parts: bytes | str) -> str:
    """A key for run()'s `memo`: the bytes parsed and whatever else decides the answer."""
    h = hashlib.sha256()
    for part in parts:
        data = part.encode("utf-8", "surrogateescape") if isinstance(part, str) else part
        h.update(HEADER.pack(len(data)) + data)
    return h.hexdigest()


_FD_PATH = re.compile(r"^/(?:proc/self/fd|dev/fd)/(\d+)$")


def folder_arg(folder) -> tuple[object, tuple[int, ...]]:
    """(what names `folder` in a request, the descriptors to hand over): a folder this process
    holds open (`/proc/self/fd/N`: a student's folder opened without following links) is handed
    over as its descriptor, which the child reaches with `folder_of`."""
    found = _FD_PATH.match(str(folder))
    if found:
        return {"fd": 0}, (int(found.group(1)),)
    return os.fspath(folder), ()


def folder_of(arg) -> str:
    """In a child: the path of a folder named by `folder_arg`."""
    if isinstance(arg, dict):
        return helper_process.fd_path(helper_process.handed(int(arg["fd"])))
    return str(arg)


def stop() -> None:
    """Ends the helpers (a class run's end: nothing of it is left running); the next parse starts them again."""
    helper_process.stop_all()
