"""Runs a command under a memory cap of its own, so that a bound that fails in a test costs the
test, never the machine: a memory cgroup (v1 as root, or a delegated v2 subtree, made by the
sandbox's own `Cgroups`) holding the command and the processes it starts, or RLIMIT_AS on each
of them where no cgroup can be made. The sandbox's children move to cgroups of their own, each
capped by the course's limits."""

from __future__ import annotations

import os
import resource
import subprocess
from dataclasses import dataclass

from autograder.sandbox.reaper import Cgroups


@dataclass
class CappedRun:
    returncode: int
    stdout: str
    stderr: str
    out_of_memory: bool          # the cgroup's cap was hit (False without a cgroup)
    capped_by: str               # "cgroup v1", "cgroup v2" or "RLIMIT_AS"


def run_capped(argv: list[str], memory_mb: int = 2048, timeout: float = 600, **kwargs) -> CappedRun:
    cgroups, _why = Cgroups.detect()
    group = cgroups.create(memory_mb, 4096) if cgroups is not None else None
    if group is None:
        def enter():
            cap = memory_mb * 1024 * 1024
            resource.setrlimit(resource.RLIMIT_AS, (cap, cap))
        capped_by = "RLIMIT_AS"
    else:
        def enter():
            if not group.add(os.getpid()):
                os._exit(97)
        capped_by = f"cgroup {cgroups.version}"
    try:
        done = subprocess.run(argv, capture_output=True, text=True, timeout=timeout, preexec_fn=enter, **kwargs)
        oom = group.out_of_memory() if group is not None else False
        return CappedRun(done.returncode, done.stdout, done.stderr, oom, capped_by)
    finally:
        if cgroups is not None:
            if group is not None:
                cgroups.discard(group)
            cgroups.close()
