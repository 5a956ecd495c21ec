"""Where a grading's core-seconds are spent: the grader, its zygotes and its children (one
Sandbox's cgroups), and how profile_submission.py shows and records them."""

from __future__ import annotations

import os
import resource
import time
from contextlib import contextmanager
from pathlib import Path

CLK = os.sysconf("SC_CLK_TCK")


def own_cpu() -> float:
    r = resource.getrusage(resource.RUSAGE_SELF)
    return r.ru_utime + r.ru_stime


def process_cpu(pid: int) -> float:
    """utime + stime of one process (not its children: a zygote's children are counted by their cgroups)."""
    try:
        with open(f"/proc/{pid}/stat", "rb") as f:
            fields = f.read().rsplit(b")", 1)[1].split()
        return (int(fields[11]) + int(fields[12])) / CLK
    except (OSError, IndexError, ValueError):
        return 0.0


class Meter:
    """Core-seconds of the grader, its zygotes and its children (one Sandbox's cgroups)."""

    def __init__(self, sandbox):
        self.sandbox = sandbox
        bases = sandbox.cgroups.bases if sandbox.cgroups is not None else {}
        self._usage = (Path(bases["cpuacct"]) / "cpuacct.usage") if "cpuacct" in bases else None
        self._unified = (Path(bases["unified"]) / "cpu.stat") if "unified" in bases else None

    @property
    def counts_children(self) -> bool:
        return self._usage is not None or self._unified is not None

    def children(self) -> float:
        try:
            if self._usage is not None:
                return int(self._usage.read_text()) / 1e9
            if self._unified is not None:
                for line in self._unified.read_text().splitlines():
                    if line.startswith("usage_usec "):
                        return int(line.split()[1]) / 1e6
        except (OSError, ValueError):
            pass
        return 0.0

    def zygotes(self) -> float:
        return sum(process_cpu(z.pid) for z in self.sandbox.zygotes.by_needs.values())

    def now(self) -> tuple[float, float, float]:
        return own_cpu(), self.zygotes(), self.children()

    @contextmanager
    def measure(self, into: dict, key: str, n: int = 1):
        before, started = self.now(), time.monotonic()
        yield
        after = self.now()
        into[key] = tuple((a - b) / n for a, b in zip(after, before)) + ((time.monotonic() - started) / n,)


def row(label: str, figures: tuple[float, ...], counted: bool = True) -> str:
    grader, zygote, child, wall = figures
    total = grader + zygote + child
    child_text = f"{child * 1000:7.0f}" if counted else "      ?"
    return (f"  {label:44s} {grader * 1000:7.0f} {zygote * 1000:7.0f} {child_text} {total * 1000:7.0f}"
            f" {wall * 1000:7.0f}")


HEADER = f"  {'':44s} {'grader':>7s} {'zygote':>7s} {'child':>7s} {'total':>7s} {'wall':>7s}   (ms)"


def as_ms(figures: tuple[float, ...], counted: bool = True) -> dict:
    """A row's figures for the record: milliseconds by where they were spent (child: None when
    the children's cgroups could not be read)."""
    grader, zygote, child, wall = figures
    return {"grader_ms": grader * 1000, "zygote_ms": zygote * 1000, "child_ms": child * 1000 if counted else None,
            "total_ms": (grader + zygote + child) * 1000, "wall_ms": wall * 1000}
