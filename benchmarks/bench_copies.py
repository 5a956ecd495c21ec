"""What one correct submission costs in the class loop, measured as issue 23 measured it.

    python benchmarks/bench_copies.py                   # 30 and 150 copies, lanes as `attnkit grade` picks
    python benchmarks/bench_copies.py --jobs 2          # the same number of lanes at both sizes

`attnkit grade` (the command an instructor runs, in a new process) on a class of N copies of the
kit's solutions, then of M copies; per submission is the difference between the two runs divided
by M - N, so the start (imports, sandboxes, preflight) and the end (reports, similarity) cancel out.
CPU time is the machine's busy time from /proc/stat over the run (every process: the grader, its
sandboxes, and the kernel's work for them), so run it on a quiet machine; busy cores = core-ms /
wall-ms. The grader's own CPU is printed apart. Issue 23.1's bars: 200 core-ms per correct
submission, 1.9 of 2 cores busy. This is a benchmark, not a test: nothing is asserted.

Without --jobs, both sizes are graded with the lanes `attnkit grade` picks for the larger class (one
per core, and one more from 150 students: class_run.lanes_for), so that the difference measures those
lanes' steady state and not the start of a lane only the larger run has. `--jobs 2` on 2 cores
measures one lane per core.
"""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

KIT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(KIT))
STEMS = ("hand_computation", "attention", "causal_mask", "scaling", "multihead")
# the grader's own CPU, printed by the graded process as it exits (its children are not in it)
GRADER = ("import atexit, resource, sys\n"
          "atexit.register(lambda: print('grader-cpu', sum(resource.getrusage(resource.RUSAGE_SELF)[:2]),"
          " file=sys.stderr))\n"
          "from autograder.cli import main\n"
          "sys.exit(main(sys.argv[1:]))\n")


def machine_busy() -> float:
    """Seconds of CPU the machine has been busy (all cores; idle and iowait left out)."""
    from benchmarks.bench_growth import CLK, machine_busy as busy_and_all_jiffies

    return busy_and_all_jiffies()[0] / CLK


def copies(root: Path, n: int) -> Path:
    folder = root / f"class-{n}"
    for i in range(n):
        student = folder / f"student{i:04d}"
        student.mkdir(parents=True)
        for stem in STEMS:     # each copy ends with its own comment: no cache keyed by a text gains from copies
            text = (KIT / "solutions" / f"{stem}.py").read_text(encoding="utf-8")
            (student / f"{stem}.py").write_text(f"{text}\n# {student.name}\n", encoding="utf-8")
    return folder


def grade(folder: Path, out: Path, jobs: int | None) -> tuple[float, float, float]:
    """(wall s, machine busy core-s, grader core-s) of one `attnkit grade`."""
    env = {k: v for k, v in os.environ.items() if k != "PYTHONDONTWRITEBYTECODE"}
    cmd = [sys.executable, "-c", GRADER, "grade", str(folder), "--out", str(out), *(["--jobs", str(jobs)] if jobs else [])]
    busy, started = machine_busy(), time.perf_counter()
    done = subprocess.run(cmd, cwd=KIT, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
    wall, busy = time.perf_counter() - started, machine_busy() - busy
    if done.returncode != 0:
        raise SystemExit(f"attnkit grade failed ({done.returncode}):\n{done.stderr[-2000:]}")
    grader = next(float(line.split()[1]) for line in done.stderr.splitlines() if line.startswith("grader-cpu"))
    return wall, busy, grader


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--sizes", default="30,150", help="the two class sizes (default 30,150)")
    ap.add_argument("--jobs", type=int, default=None,
                    help="lanes at both sizes (default: as attnkit grade picks them for the larger class)")
    args = ap.parse_args()
    small, large = (int(x) for x in args.sizes.split(","))
    from autograder.grading.class_run import lanes_for

    jobs = lanes_for(args.jobs or None, large)
    with tempfile.TemporaryDirectory(prefix="attnkit-copies-") as tmp:
        root = Path(tmp)
        grade(copies(root / "warm", 2), root / "warm-out", jobs)      # bytecode and reference cache
        runs = {n: grade(copies(root, n), root / f"out-{n}", jobs) for n in (small, large)}
    load = os.getloadavg()
    print(f"{os.cpu_count()} cores, load average {load[0]:.2f} after; lanes: {jobs}"
          f"{'' if args.jobs else f' (as attnkit grade picks them for {large} students)'}")
    for n, (wall, busy, grader) in runs.items():
        print(f"  {n:5d} copies of the solutions: wall {wall:6.2f} s, machine busy {busy:6.2f} core-s, "
              f"the grader itself {grader:5.2f} core-s")
    (w0, b0, g0), (w1, b1, g1) = runs[small], runs[large]
    per = large - small
    core_ms, wall_ms, grader_ms = (b1 - b0) / per * 1000, (w1 - w0) / per * 1000, (g1 - g0) / per * 1000
    print(f"per correct submission ({small} -> {large}): {core_ms:.0f} core-ms (the grader {grader_ms:.0f}), "
          f"{wall_ms:.0f} wall-ms, {core_ms / wall_ms:.2f} cores busy")
    print(f"issue 23.1: 200 core-ms {'met' if core_ms <= 200 else 'not met'}; "
          f"1.9 busy cores {'met' if core_ms / wall_ms >= 1.9 else 'not met'}")


if __name__ == "__main__":
    main()
