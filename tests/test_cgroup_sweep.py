"""A grader killed before it closed its sandbox leaves its cgroups behind (attnkit-<pid>-<n>, each
with its child-<n> groups); the next grader on the machine removes those of a process that is
gone, untouched for an hour, and nothing of a live one (autograder/sandbox/cgroups.py)."""

from __future__ import annotations

import os
import time

import pytest

from autograder.sandbox import cgroups

MEMORY = os.path.join(cgroups.V1_ROOT, "memory")
GONE = 4194304 + 7          # above any pid_max: no process has it

pytestmark = pytest.mark.skipif(os.geteuid() != 0 or not os.path.isfile(os.path.join(MEMORY, "cgroup.procs")),
                                reason="needs root and the cgroup v1 memory controller")


def _group(name: str, children: int, age_s: float) -> str:
    base = os.path.join(MEMORY, name)
    os.mkdir(base)
    for n in range(children):
        os.mkdir(os.path.join(base, f"child-{n}"))
    old = time.time() - age_s
    os.utime(base, (old, old))
    return base


def _remove(path: str) -> None:
    if os.path.isdir(path):
        for child in os.listdir(path):
            if child.startswith("child-"):
                os.rmdir(os.path.join(path, child))
        os.rmdir(path)


def test_the_groups_a_killed_grader_left_are_removed_and_no_others(monkeypatch):
    monkeypatch.setattr(cgroups, "_SWEPT", set())
    left = _group(f"attnkit-{GONE}-1", 2, 2 * cgroups.STALE_AFTER_S)
    recent = _group(f"attnkit-{GONE}-2", 1, 60)                       # touched within the hour: left alone
    live = _group(f"attnkit-{os.getpid()}-9999", 1, 2 * cgroups.STALE_AFTER_S)
    try:
        cgroups.sweep_stale(MEMORY)
        assert not os.path.exists(left)
        assert os.path.isdir(os.path.join(recent, "child-0"))
        assert os.path.isdir(os.path.join(live, "child-0"))
    finally:
        for path in (left, recent, live):
            _remove(path)
