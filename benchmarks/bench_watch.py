"""How fast `attnkit check --watch` re-grades an exercise after a save (warm session).

    python benchmarks/bench_watch.py            # the solutions, 5 saves per exercise

Copies the solutions to a temporary folder, grades them once in a GradingSession (as
`attnkit check --watch` does before it starts watching), then for each exercise changes its
file (a comment appended, so the code is new) and times `Watcher.regrade`: loading the file
and grading it in the warm sandbox, the report included. The file watcher's own latency
(watchfiles, 50 ms debounce) comes on top. Between saves it waits `--pause` (the student's
edit), not timed. Target: under 0.1 s. Besides the wall time, each save's CPU time
(user + system) of the whole process tree: this process, its sandbox processes and theirs, from
one save to the next (the re-grade and whatever ran in the background between).
Writes the figures to benchmarks/results/watch.json. This is a benchmark, not a test: nothing is
asserted.
"""

from __future__ import annotations

import argparse
import io
import os
import resource
import shutil
import statistics
import sys
import tempfile
import time
from pathlib import Path

KIT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(KIT))

from rich.console import Console  # noqa: E402

from benchmarks import record  # noqa: E402
from autograder.checks import check_ids  # noqa: E402
from autograder.config import load_course  # noqa: E402
from autograder.grading.course_session import GradingSession  # noqa: E402
from autograder.frontends.watch import Watcher  # noqa: E402


TICK = os.sysconf("SC_CLK_TCK")


def tree_cpu() -> float:
    """CPU seconds (user + system) of this process, its descendants alive now and those reaped."""
    own = [resource.getrusage(who) for who in (resource.RUSAGE_SELF, resource.RUSAGE_CHILDREN)]
    total = sum(used.ru_utime + used.ru_stime for used in own)
    stats: dict[int, list[str]] = {}
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit():
            try:
                text = (entry / "stat").read_text()
            except OSError:
                continue          # gone meanwhile: its time is in its parent's reaped children
            stats[int(entry.name)] = text.rpartition(")")[2].split()
    children: dict[int, list[int]] = {}
    for pid, fields in stats.items():
        children.setdefault(int(fields[1]), []).append(pid)
    pending = list(children.get(os.getpid(), ()))
    while pending:
        pid = pending.pop()
        pending.extend(children.get(pid, ()))
        total += sum(int(ticks) for ticks in stats[pid][11:15]) / TICK   # utime stime cutime cstime
    return total


def main(argv=None) -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--saves", type=int, default=5)
    p.add_argument("--pause", type=float, default=0.3, help="seconds between a re-grade and the next save")
    args = p.parse_args(argv)
    course = load_course(known_checks=check_ids())
    folder = Path(tempfile.mkdtemp(prefix="attnkit-bench-watch-"))
    try:
        for path in (KIT / "solutions").glob("*.py"):
            shutil.copy(path, folder)
        print(f"load average {os.getloadavg()[0]:.1f}; {args.saves} saves per exercise")
        medians: dict[str, dict] = {}
        with GradingSession(course).start() as session:
            first = session.grade(folder)
            watcher = Watcher(session, folder, tuple(course.exercises), Console(file=io.StringIO()))
            watcher.first(first.exercises)
            time.sleep(args.pause)
            for stem in course.exercises:
                times, cpu = [], []
                for k in range(args.saves):
                    path = folder / f"{stem}.py"
                    path.write_text(path.read_text() + f"\n# save {k}\n")
                    cpu_before = tree_cpu()
                    started = time.monotonic()
                    watcher.regrade(stem)
                    times.append(time.monotonic() - started)
                    time.sleep(args.pause)
                    cpu.append(tree_cpu() - cpu_before)
                print(f"  {stem:18s} re-grade after a save: median {statistics.median(times):.3f} s, "
                      f"min {min(times):.3f} s, max {max(times):.3f} s; CPU a save {statistics.median(cpu):.3f} s")
                medians[stem] = {"median_s": statistics.median(times), "min_s": min(times), "max_s": max(times),
                                 "median_cpu_s": statistics.median(cpu)}
        slowest = max(medians, key=lambda stem: medians[stem]["median_s"])
        record.write("watch", {"saves": args.saves, "pause_s": args.pause, "exercises": medians},
                     headline=[record.figure(f"`attnkit check --watch`, re-grade after a save ({slowest}, the "
                                             f"slowest exercise; median)", medians[slowest]["median_s"], "s",
                                             target="under 0.1 s")])
        return 0
    finally:
        shutil.rmtree(folder, ignore_errors=True)


if __name__ == "__main__":
    sys.exit(main())
