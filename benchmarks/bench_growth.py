"""Does grading cost grow with the class (issue 23.3)? Per-submission time and the grader's peak
memory at several class sizes.

    python benchmarks/bench_growth.py                       # 60, 600 and 2,000 submissions
    python benchmarks/bench_growth.py --sizes 60,600 --jobs 2

Each size is graded in a fresh process (so its peak memory is its own) on a synthetic class of
that size (benchmarks/bench_class.py's mix: correct, notebooks, buggy, partial, stubs, a few that
hang), with `grade_class`, what `attnkit grade` runs. Per submission, from the `--skip`-th result
to the last (the sandboxes' start and the preflight before it, the end-of-run reports after it,
are printed apart):

  core-ms   CPU time of the grader and every process under it (zygotes, children; reaped ones
            through their parents' cumulative times, /proc/<pid>/stat), not wall time: it holds
            on a shared machine
  wall-ms   wall time; busy cores = core-ms / wall-ms (2 of 2: no worker waits on another)
  memory    the grading process's peak RSS (ru_maxrss, the end-of-run reports included) and the
            peak PSS of it and its sandboxes (sampled)

Flat (issue 23.3) means each column within 15% from the smallest size to the largest. This is a
benchmark, not a test: nothing is asserted.
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

KIT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(KIT))

CLK = os.sysconf("SC_CLK_TCK")


def tree_cpu() -> float:
    """Core-seconds of this process and every descendant, the reaped ones included (in their
    parents' cutime/cstime)."""
    own = os.times()
    total = own.user + own.system + own.children_user + own.children_system
    from benchmarks.bench_class import _tree

    for pid in _tree(os.getpid())[1:]:
        try:
            with open(f"/proc/{pid}/stat", "rb") as f:
                fields = f.read().rsplit(b")", 1)[1].split()
            total += sum(int(x) for x in fields[11:15]) / CLK     # utime stime cutime cstime
        except (OSError, IndexError, ValueError):
            pass           # ended meanwhile: its time is in its parent's cutime from now on
    return total


def grade_one_size(n: int, jobs: int, call_timeout: float, import_timeout: float, skip: int,
                   memory_interval: float) -> dict:
    from autograder.grading.student import default_jobs, grade_class
    from benchmarks.bench_class import TreeMemory, bench_course, build_class

    root = Path(tempfile.mkdtemp(prefix="attnkit-growth-"))
    try:
        course = bench_course(root, call_timeout, import_timeout)
        build_class(root / "class", n)
        jobs = jobs or default_jobs()
        marks: list[tuple[float, float]] = []     # (wall, core-s) at the first and the last counted result
        first = min(max(skip, 1), n - 1)
        seen = 0

        def on_result(result, reused):
            nonlocal seen
            seen += 1
            if seen in (first, n):
                marks.append((time.monotonic(), tree_cpu()))

        started, cpu0 = time.monotonic(), tree_cpu()
        with TreeMemory(memory_interval) as memory:
            grade_class(root / "class", root / "out", course, jobs=jobs, regrade=True, on_result=on_result)
        ended, cpu1 = time.monotonic(), tree_cpu()
        (t_a, c_a), (t_b, c_b) = marks[0], marks[-1]
        counted = n - first
        return {"n": n, "jobs": jobs, "counted": counted,
                "core_ms": (c_b - c_a) / counted * 1000, "wall_ms": (t_b - t_a) / counted * 1000,
                "start_s": t_a - started, "start_core_s": c_a - cpu0,
                "finish_s": ended - t_b, "finish_core_s": cpu1 - c_b,
                "grader_peak_mb": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024,
                "tree_peak_pss_mb": memory.peak_pss / 1024}
    finally:
        shutil.rmtree(root, ignore_errors=True)


ROW = "{n:>6} {core_ms:>9.0f} {wall_ms:>9.0f} {busy:>6.2f} {grader_peak_mb:>10.0f} {tree_peak_pss_mb:>10.0f}" \
      "   start {start_s:.1f} s ({start_core_s:.1f} core-s), end-of-run {finish_s:.1f} s ({finish_core_s:.1f} core-s)"
HEADER = f"{'size':>6} {'core-ms':>9} {'wall-ms':>9} {'busy':>6} {'grader MB':>10} {'tree PSS':>10}   (per submission)"


def main(argv=None) -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--sizes", default="60,600,2000", help="class sizes, comma-separated")
    p.add_argument("--jobs", type=int, default=0, help="default: one per core")
    p.add_argument("--call-timeout", type=float, default=2.0)
    p.add_argument("--import-timeout", type=float, default=3.0)
    p.add_argument("--skip", type=int, default=10, help="results before the measured span (workers warming)")
    p.add_argument("--memory-interval", type=float, default=0.5)
    p.add_argument("--one", type=int, help=argparse.SUPPRESS)     # a child of this benchmark: one size
    args = p.parse_args(argv)
    settings = dict(jobs=args.jobs, call_timeout=args.call_timeout, import_timeout=args.import_timeout,
                    skip=args.skip, memory_interval=args.memory_interval)
    if args.one is not None:
        print(json.dumps(grade_one_size(args.one, **settings)))
        return 0

    print(f"load average {os.getloadavg()[0]:.1f}; {os.cpu_count()} cores; per submission from result "
          f"{args.skip} to the last")
    print(HEADER, flush=True)
    rows = []
    for n in (int(x) for x in args.sizes.split(",")):
        command = [sys.executable, __file__, "--one", str(n)] + \
            [f"--{k.replace('_', '-')}={v}" for k, v in settings.items()]
        done = subprocess.run(command, capture_output=True, text=True)
        if done.returncode != 0:
            print(f"{n:>6} failed:\n{done.stderr[-2000:]}")
            return 1
        row = json.loads(done.stdout.strip().splitlines()[-1])
        row["busy"] = row["core_ms"] / row["wall_ms"]
        rows.append(row)
        print(ROW.format(**row), flush=True)
    if len(rows) > 1:
        first, last = rows[0], rows[-1]
        print("\nlargest / smallest: " + ", ".join(
            f"{key} {last[key] / first[key]:.2f}x" for key in ("core_ms", "wall_ms", "grader_peak_mb",
                                                                "tree_peak_pss_mb")))
    return 0


if __name__ == "__main__":
    sys.exit(main())
