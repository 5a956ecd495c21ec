"""How fast `attnkit check --watch` re-grades an exercise after a save (warm session).

    python benchmarks/bench_watch.py            # the solutions, 5 saves per exercise

Copies the solutions to a temporary folder, grades them once in a GradingSession (as
`attnkit check --watch` does before it starts watching), then for each exercise changes its
file (a comment appended, so the code is new) and times `Watcher.regrade`: loading the file
and grading it in the warm sandbox, the report included. The file watcher's own latency
(watchfiles, 50 ms debounce) comes on top. Between saves the watcher forks the next re-grade's
children (`Watcher.idle`, as `watch` does while the student edits), not timed. Target: under
0.1 s. Writes the figures to benchmarks/results/watch.json. This is a benchmark, not a test:
nothing is asserted.
"""

from __future__ import annotations

import argparse
import io
import os
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


def main(argv=None) -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--saves", type=int, default=5)
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
            for stem in course.exercises:
                times = []
                for k in range(args.saves):
                    path = folder / f"{stem}.py"
                    path.write_text(path.read_text() + f"\n# save {k}\n")
                    started = time.monotonic()
                    watcher.regrade(stem)
                    times.append(time.monotonic() - started)
                    watcher.idle()      # as `watch` does while the student edits: not timed
                print(f"  {stem:18s} re-grade after a save: median {statistics.median(times):.3f} s, "
                      f"min {min(times):.3f} s, max {max(times):.3f} s")
                medians[stem] = {"median_s": statistics.median(times), "min_s": min(times), "max_s": max(times)}
        slowest = max(medians, key=lambda stem: medians[stem]["median_s"])
        record.write("watch", {"saves": args.saves, "exercises": medians},
                     headline=[record.figure(f"`attnkit check --watch`, re-grade after a save ({slowest}, the "
                                             f"slowest exercise; median)", medians[slowest]["median_s"], "s",
                                             target="under 0.1 s")])
        return 0
    finally:
        shutil.rmtree(folder, ignore_errors=True)


if __name__ == "__main__":
    sys.exit(main())
