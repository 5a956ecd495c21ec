"""Runs a command under a memory cap of its own, so that a bound that fails in a test costs the
test, never the machine: a memory cgroup (v1 as root, or a delegated v2 subtree, made by the
sandbox's own `Cgroups`) holding the command and the processes it starts, or RLIMIT_AS on each
of them where no cgroup can be made. The sandbox's children move to cgroups of their own, each
capped by the course's limits."""

from __future__ import annotations

import contextlib
import os
import resource
import subprocess
from dataclasses import dataclass
from typing import Iterator

from autograder.sandbox.cgroups import Cgroups


@dataclass
class Cap:
    capped_by: str               # "cgroup v1", "cgroup v2" or "RLIMIT_AS"
    group: object = None         # the ChildCgroup, when there is one

    def out_of_memory(self) -> bool:
        """The cgroup's cap was hit (False without a cgroup)."""
        return self.group.out_of_memory() if self.group is not None else False


@dataclass
class CappedRun:
    returncode: int
    stdout: str
    stderr: str
    out_of_memory: bool
    capped_by: str


@contextlib.contextmanager
def memory_cap(memory_mb: int = 2048) -> Iterator[tuple[Cap, object]]:
    """(the cap, a preexec_fn that puts a new process under it); the cgroup goes on leaving."""
    cgroups, _why = Cgroups.detect()
    group = cgroups.create(memory_mb, 4096) if cgroups is not None else None
    if group is None:
        def enter():
            cap = memory_mb * 1024 * 1024
            resource.setrlimit(resource.RLIMIT_AS, (cap, cap))
        cap = Cap("RLIMIT_AS")
    else:
        def enter():
            if not group.add(os.getpid()):
                os._exit(97)
        cap = Cap(f"cgroup {cgroups.version}", group)
    try:
        yield cap, enter
    finally:
        if cgroups is not None:
            if group is not None:
                cgroups.discard(group)
            cgroups.close()


def run_capped(argv: list[str], memory_mb: int = 2048, timeout: float = 600, **kwargs) -> CappedRun:
    with memory_cap(memory_mb) as (cap, enter):
        done = subprocess.run(argv, capture_output=True, text=True, timeout=timeout, preexec_fn=enter, **kwargs)
        return CappedRun(done.returncode, done.stdout, done.stderr, cap.out_of_memory(), cap.capped_by)
