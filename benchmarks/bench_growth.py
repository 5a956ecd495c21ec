"""Does grading cost grow with the class? Per-submission time and the grader's peak memory at
several class sizes.

    python benchmarks/bench_growth.py                       # 60, 600 and 2,000 submissions
    python benchmarks/bench_growth.py --sizes 60,600 --jobs 2

First every buggy file of the corpus is graded once, in a process of its own, so that the reference
cache holds every mistake's answers (`--no-warm-up`: the cache as it is; an empty one is filled by
the first sizes' graders, and their peak memory holds that work). Then each size is graded in a
fresh process (so its peak memory is its own) on a synthetic class of
that size (benchmarks/bench_class.py's mix: correct, notebooks, buggy, partial, stubs, a few that
hang), with `grade_class`, what `attnkit grade` runs, with the lanes `attnkit grade` picks for the
largest size at every size (so that growth is not a lane added on the way). Per submission, from the `--skip`-th result
to the `--tail`-th before the last (the sandboxes' start and the preflight before it; the last
results, when fewer are left than workers and one that hangs holds the run; the end-of-run
reports: each printed apart):

  core-ms   CPU time of the grader and every process under it: the grader and its zygotes by
            their own times (/proc/<pid>/stat), the sandbox's children by their cgroups' CPU
            counters (see tree_cpu); not wall time: it holds on a shared machine
  wall-ms   wall time; busy cores = core-ms / wall-ms (2 of 2: no worker waits on another), and
            the machine's busy cores by /proc/stat over the same span (every process counted)
  memory    the grading process's peak RSS (ru_maxrss, the end-of-run reports included) and the
            peak PSS of it and its sandboxes (sampled)

Flat (the target) means each column within 15% from the smallest size to the largest. Writes the
figures to benchmarks/results/growth.json. This is a benchmark, not a test: nothing is asserted.
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

from benchmarks import record  # noqa: E402

CLK = os.sysconf("SC_CLK_TCK")


def tree_cpu() -> float:
    """Core-seconds of this process and every descendant.

    The sandbox's children are counted by their cgroups' CPU counters (the sandbox's base
    groups, attnkit-<this pid>-N, sum their removed children), not by their parents' cumulative
    times: a child's worker is killed at the end of its session, and the kernel does not add a
    killed PID namespace's processes to its init's cumulative times, so /proc/<zygote>/stat's
    cutime misses most of the children's CPU. The grader and its
    zygotes are counted by their own times (a zygote's cutime holds only what is also in a
    child's cgroup). Without the sandbox's cgroups, the cumulative times (an undercount) are
    used and `cgroups_counted()` is False."""
    own = os.times()
    from benchmarks.bench_class import _tree

    in_groups = _sandbox_groups()
    if not in_groups:
        total = own.user + own.system + own.children_user + own.children_system
        for pid in _tree(os.getpid())[1:]:
            total += sum(_times(pid)[:4])
        return total
    for pid in _tree(os.getpid())[1:]:
        try:
            if f"attnkit-{os.getpid()}-" in Path(f"/proc/{pid}/cgroup").read_text():
                continue          # a child: its cgroup counts it
        except OSError:
            continue
        times = _times(pid)
        if times:
            _OWN_SEEN[pid] = times[0] + times[1]     # a zygote's own; its cutime is in the children's cgroups
    return own.user + own.system + sum(_OWN_SEEN.values()) + sum(in_groups.values())


def _times(pid: int) -> tuple[float, ...]:
    """(utime, stime, cutime, cstime) in seconds, () when the process is gone."""
    try:
        with open(f"/proc/{pid}/stat", "rb") as f:
            fields = f.read().rsplit(b")", 1)[1].split()
        return tuple(int(x) / CLK for x in fields[11:15])
    except (OSError, IndexError, ValueError):
        return ()


_OWN_SEEN: dict[int, float] = {}        # a zygote's pid -> its last own CPU (kept once it has exited)
_GROUPS_SEEN: dict[str, float] = {}     # a sandbox's base group -> its last CPU count (gone once closed)


def _sandbox_groups() -> dict[str, float]:
    """Core-seconds of this process's sandboxes' cgroups (v1 cpuacct or v2 cpu.stat), each base
    group's last count kept after the sandbox removed it."""
    me = os.getpid()
    for usage in Path("/sys/fs/cgroup/cpuacct").glob(f"attnkit-{me}-*/cpuacct.usage"):
        try:
            _GROUPS_SEEN[str(usage.parent)] = int(usage.read_text()) / 1e9
        except (OSError, ValueError):
            pass
    try:
        own = next(line.split("::", 1)[1].strip() for line in Path("/proc/self/cgroup").read_text().splitlines()
                   if line.startswith("0::"))
        for root in (Path("/sys/fs/cgroup"), Path("/sys/fs/cgroup/unified")):
            for stat in (root / own.lstrip("/")).glob(f"attnkit-{me}-*/cpu.stat"):
                for line in stat.read_text().splitlines():
                    if line.startswith("usage_usec "):
                        _GROUPS_SEEN[str(stat.parent)] = int(line.split()[1]) / 1e6
    except (OSError, ValueError, StopIteration):
        pass
    return dict(_GROUPS_SEEN)


def cgroups_counted() -> bool:
    return bool(_GROUPS_SEEN)


def machine_busy() -> tuple[int, int]:
    """(busy, all) jiffies of the whole machine (/proc/stat): the cross-check of busy cores,
    which counts every process, this benchmark's or not."""
    with open("/proc/stat") as f:
        values = [int(x) for x in f.readline().split()[1:]]
    return sum(values) - values[3] - values[4], sum(values)      # idle and iowait are not busy


def grade_one_size(n: int, jobs: int, call_timeout: float, import_timeout: float, skip: int,
                   memory_interval: float, tail: int = 10) -> dict:
    from autograder.grading.local_grading import lanes_for
    from autograder.grading.local_grading import grade_class
    from benchmarks.bench_class import TreeMemory, bench_course, build_class

    root = Path(tempfile.mkdtemp(prefix="attnkit-growth-"))
    try:
        course = bench_course(root, call_timeout, import_timeout)
        build_class(root / "class", n)
        jobs = lanes_for(jobs or None, n)     # main() passes the lanes of the largest size
        # (wall, core-s, machine) at the first and the last counted result, and at the last one
        first = min(max(skip, 1), n - 1)
        last = max(first + 1, n - max(tail, 0))
        marks: dict[int, tuple[float, float, tuple[int, int]]] = {}
        seen = 0

        def on_result(result, reused):
            nonlocal seen
            seen += 1
            if seen in (first, last, n):
                marks[seen] = (time.monotonic(), tree_cpu(), machine_busy())

        started, cpu0 = time.monotonic(), tree_cpu()
        with TreeMemory(memory_interval) as memory:
            grade_class(root / "class", root / "out", course, jobs=jobs, regrade=True, on_result=on_result)
        ended, cpu1 = time.monotonic(), tree_cpu()
        (t_a, c_a, m_a), (t_b, c_b, m_b), (t_n, c_n, _m) = marks[first], marks[last], marks[n]
        counted = last - first
        return {"n": n, "jobs": jobs, "counted": counted,
                "core_ms": (c_b - c_a) / counted * 1000, "wall_ms": (t_b - t_a) / counted * 1000,
                "machine_busy": (m_b[0] - m_a[0]) / max(1, m_b[1] - m_a[1]) * (os.cpu_count() or 1),
                "start_s": t_a - started, "start_core_s": c_a - cpu0,
                "tail": n - last, "tail_s": t_n - t_b, "tail_core_s": c_n - c_b,
                "finish_s": ended - t_n, "finish_core_s": cpu1 - c_n,
                "grader_peak_mb": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024,
                "tree_peak_pss_mb": memory.peak_pss / 1024, "cgroups": cgroups_counted()}
    finally:
        shutil.rmtree(root, ignore_errors=True)


def warm_up(call_timeout: float, import_timeout: float) -> tuple[int, float]:
    """Grades every buggy file of the corpus once (student k holds the k-th of each exercise's), so
    that the reference cache holds every mistake's answers before the first size is measured: on a
    machine with an empty cache, the first sizes would make them in the grader, and their peak
    memory would hold that work. (students, seconds)."""
    from autograder.grading.local_grading import grade_class
    from benchmarks.bench_class import STEMS, SOLUTIONS, _choices, bench_course, make_unique

    root = Path(tempfile.mkdtemp(prefix="attnkit-growth-warm-"))
    try:
        course = bench_course(root, call_timeout, import_timeout)
        buggy = {stem: _choices(stem, "buggy") or [SOLUTIONS / f"{stem}.py"] for stem in STEMS}
        n = max(len(files) for files in buggy.values())
        for k in range(n):
            folder = root / "class" / f"w{k:03d}"
            folder.mkdir(parents=True)
            for stem, files in buggy.items():
                shutil.copy(files[k % len(files)], folder / f"{stem}{files[k % len(files)].suffix}")
            make_unique(folder)
        started = time.monotonic()
        grade_class(root / "class", root / "out", course, regrade=True)
        return n, time.monotonic() - started
    finally:
        shutil.rmtree(root, ignore_errors=True)


ROW = "{n:>6} {core_ms:>9.0f} {wall_ms:>9.0f} {busy:>6.2f} {machine_busy:>8.2f} {grader_peak_mb:>10.0f} {tree_peak_pss_mb:>10.0f}" \
      "   {jobs} lanes, start {start_s:.1f} s ({start_core_s:.1f} core-s), last {tail} results {tail_s:.1f} s ({tail_core_s:.1f} " \
      "core-s), end-of-run {finish_s:.1f} s ({finish_core_s:.1f} core-s)"
HEADER = f"{'size':>6} {'core-ms':>9} {'wall-ms':>9} {'busy':>6} {'machine':>8} {'grader MB':>10} {'tree PSS':>10}   (per submission)"


def main(argv=None) -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--sizes", default="60,600,2000", help="class sizes, comma-separated")
    p.add_argument("--jobs", type=int, default=0,
                   help="lanes at every size (default: as `attnkit grade` picks them for the largest)")
    p.add_argument("--call-timeout", type=float, default=2.0)
    p.add_argument("--import-timeout", type=float, default=3.0)
    p.add_argument("--skip", type=int, default=10, help="results before the measured span (workers warming)")
    p.add_argument("--tail", type=int, default=10,
                   help="results after the measured span (fewer left than workers: a core may wait)")
    p.add_argument("--memory-interval", type=float, default=0.5)
    p.add_argument("--no-warm-up", action="store_true",
                   help="measure with the reference cache as it is (an empty one is filled by the first size)")
    p.add_argument("--one", type=int, help=argparse.SUPPRESS)     # a child of this benchmark: one size
    p.add_argument("--warm-up", action="store_true", help=argparse.SUPPRESS)
    args = p.parse_args(argv)
    sizes = [int(x) for x in args.sizes.split(",")]
    if not args.jobs and args.one is None:
        from autograder.grading.local_grading import lanes_for

        # One number of lanes for every size: else a lane only the larger classes have (one more
        # from local_grading.SPARE_LANE_FROM students) lands in the growth it is meant to measure.
        args.jobs = lanes_for(None, max(sizes))
    settings = dict(jobs=args.jobs, call_timeout=args.call_timeout, import_timeout=args.import_timeout,
                    skip=args.skip, memory_interval=args.memory_interval, tail=args.tail)
    if args.one is not None:
        print(json.dumps(grade_one_size(args.one, **settings)))
        return 0
    if args.warm_up:
        print(json.dumps(warm_up(args.call_timeout, args.import_timeout)))
        return 0
    if not args.no_warm_up:      # in its own process: the sizes' grader processes start alike
        done = subprocess.run([sys.executable, __file__, "--warm-up", f"--call-timeout={args.call_timeout}",
                               f"--import-timeout={args.import_timeout}"], capture_output=True, text=True)
        if done.returncode != 0:
            print(f"warm-up failed:\n{done.stderr[-2000:]}")
            return 1
        students, seconds = json.loads(done.stdout.strip().splitlines()[-1])
        print(f"warm-up: every buggy file of the corpus graded once ({students} students, {seconds:.0f} s), "
              f"the reference cache filled")

    print(f"load average {os.getloadavg()[0]:.1f}; {os.cpu_count()} cores; per submission from result "
          f"{args.skip} to the {args.tail}th before the last")
    print(HEADER, flush=True)
    rows = []
    for n in sizes:
        command = [sys.executable, __file__, "--one", str(n)] + \
            [f"--{k.replace('_', '-')}={v}" for k, v in settings.items()]
        done = subprocess.run(command, capture_output=True, text=True)
        if done.returncode != 0:
            print(f"{n:>6} failed:\n{done.stderr[-2000:]}")
            return 1
        row = json.loads(done.stdout.strip().splitlines()[-1])
        row["busy"] = row["core_ms"] / row["wall_ms"]
        rows.append(row)
        print(ROW.format(**row) + ("" if row.get("cgroups") else
                                   "  (no sandbox cgroups: children counted by cumulative times, an undercount)"),
              flush=True)
    headline = []
    if len(rows) > 1:
        first, last = rows[0], rows[-1]
        print("\nlargest / smallest: " + ", ".join(
            f"{key} {last[key] / first[key]:.2f}x" for key in ("core_ms", "wall_ms", "grader_peak_mb",
                                                                "tree_peak_pss_mb")))
        for key, what, unit in (("core_ms", "a submission's core-ms", "core-ms"),
                                ("grader_peak_mb", "the grader's peak RSS", "MB")):
            headline.append(record.figure(f"{what}, {last['n']:,} submissions", last[key], unit,
                                          anchor=f"{first['n']:,} submissions", anchor_value=first[key],
                                          ratio=last[key] / first[key], ratio_is="value / anchor",
                                          target="at most 1.15x"))
    record.write("growth", {"sizes": sizes, "skip": args.skip, "tail": args.tail, "warm_up": not args.no_warm_up,
                            "rows": rows}, headline=headline)
    return 0


if __name__ == "__main__":
    sys.exit(main())
