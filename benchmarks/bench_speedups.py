"""What each optional speed-up earns on the path it is for, measured on and off in the same run.

    python benchmarks/bench_speedups.py [--rounds 5] [--students 40] [--saves 3] [--only NAME,...]
                                        [--paths check-one,check,class,cluster,watch]

Five paths, each a command in a fresh process, as a user runs it:
  - "check-one": `attnkit check --submission solutions --exercise attention` (one exercise, cold:
    the loop of a student with the kit, or an instructor trying one exercise);
  - "check": `attnkit check --submission solutions` (all five exercises, cold);
  - "class": `attnkit grade CLASS --out OUT --regrade --no-preflight` on a class built by
    bench_class.build_class (honest styles, bugs, notebooks, two that hang);
  - "cluster": the same `attnkit grade` with `--scheduler` on a fresh Dask cluster of two workers
    (one thread each, on 127.0.0.1, started with the switch as the run's): a cluster's first run,
    the workers setting up as it begins;
  - "watch": benchmarks/bench_watch.py, a warm session re-grading each exercise after a save; its
    figure is the sum over the five exercises of the median re-grade, wall and CPU.
For each speed-up, its paths run with every speed-up on and with that one off (ATTNKIT_FAST=-name),
interleaved round by round so that a change of the machine's load hurts both alike; and each path
once more with every speed-up off (ATTNKIT_FAST=0), the plain path.

Three figures per run: the wall time, the CPU time (user + system) of the whole process tree
(on the cluster path, of the cluster's workers too), and the peak resident memory of the command's
own process (the grader: VmHWM, read every 0.1 s until it exits).
The CPU time is taken from getrusage(RUSAGE_CHILDREN) around each command; this process is made
a child subreaper, so a descendant left behind when the command exits (a zygote still shutting
down) is reparented here and waited for, and its CPU counted too. Wall time on a shared machine
moves with the others' load; CPU time moves much less, and shows work moved rather than saved.
Prints the medians, the ratios off/on of the medians and the paired ratios (the median of each
round's own off/on), and writes benchmarks/results/speedups.json. A speed-up that earns under 10%
on its path by wall, by CPU and by the grader's memory (`gains`) is removed.
"""

from __future__ import annotations

import argparse
import ctypes
import json
import os
import resource
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "benchmarks"))
sys.path.insert(0, str(ROOT))

from benchmarks import record  # noqa: E402
from autograder.speedups import SPEEDUPS, SWITCH  # noqa: E402

# The paths where each speed-up claims its gain.
TARGET = {"course_cache": ("check-one", "check")}
KINDS = ("wall", "cpu", "rss")
PR_SET_CHILD_SUBREAPER = 36
GAIN = 1.10


def become_subreaper() -> None:
    libc = ctypes.CDLL(None, use_errno=True)
    if libc.prctl(PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0) != 0:
        print("note: not a child subreaper; a descendant left behind is not counted", file=sys.stderr)


def reap_all() -> None:
    """Waits for every descendant reparented here: their CPU time lands in RUSAGE_CHILDREN."""
    while True:
        try:
            os.waitpid(-1, 0)
        except ChildProcessError:
            return


def children_cpu() -> float:
    used = resource.getrusage(resource.RUSAGE_CHILDREN)
    return used.ru_utime + used.ru_stime


def peak_mb(pid: int) -> float | None:
    """The process's peak resident memory so far (VmHWM), in MB; None once it has exited."""
    try:
        for line in Path(f"/proc/{pid}/status").read_text(encoding="utf-8").splitlines():
            if line.startswith("VmHWM:"):
                return int(line.split()[1]) / 1024
    except (OSError, ValueError):
        pass
    return None


def run(cmd: list[str], fast: str, env_extra: dict[str, str], reap: bool = True) -> tuple[float, float, float]:
    """(wall seconds until the command exits, CPU seconds of its whole process tree, the command's
    own peak resident memory in MB). `reap`: wait for every descendant (none may be meant to live on)."""
    env = dict(os.environ, **{SWITCH: fast}, MPLBACKEND="Agg", **env_extra)
    cpu_before = children_cpu()
    peak = 0.0
    with tempfile.TemporaryFile() as err:
        started = time.perf_counter()
        proc = subprocess.Popen(cmd, env=env, cwd=ROOT, stdout=subprocess.DEVNULL, stderr=err)
        while True:
            try:
                proc.wait(timeout=0.1)
                break
            except subprocess.TimeoutExpired:
                peak = max(peak, peak_mb(proc.pid) or 0.0)
        took = time.perf_counter() - started
        if reap:
            reap_all()
        if proc.returncode not in (0, 1):
            err.seek(0)
            raise SystemExit(f"{' '.join(cmd)} ({SWITCH}={fast}) failed: {err.read()[-1500:].decode(errors='replace')}")
    return took, children_cpu() - cpu_before, peak


def run_on_cluster(cmd: list[str], fast: str, env_extra: dict[str, str], logs: Path) -> tuple[float, float, float]:
    """`cmd` with `--scheduler` on a new two-worker cluster started with the same switch; the CPU
    time is the workers' too (from their start to their end), the wall time the command's."""
    from bench_cluster import LoopbackCluster

    logs.mkdir(parents=True, exist_ok=True)
    cpu_before = children_cpu()
    cluster = LoopbackCluster(2, logs, {SWITCH: fast})
    try:
        took, _, peak = run([*cmd, "--scheduler", cluster.address], fast, env_extra, reap=False)
    finally:
        cluster.close()
    reap_all()
    return took, children_cpu() - cpu_before, peak


def watch_figures(folder: Path) -> tuple[float, float]:
    """The watch path's own figure: the five exercises' median re-grades, summed (wall, CPU)."""
    saved = json.loads((folder / "watch.json").read_text(encoding="utf-8"))
    exercises = saved["exercises"].values()
    return sum(e["median_s"] for e in exercises), sum(e["median_cpu_s"] for e in exercises)


def commands(work: Path, students: int, saves: int) -> dict[str, list[str]]:
    from bench_class import bench_course, build_class

    class_dir = work / "class"
    build_class(class_dir, students)
    bench_course(work, 2.0, 3.0)
    python = [sys.executable, "-m", "autograder.cli"]
    grade = [*python, "--course", str(work / "course.yml"), "grade", str(class_dir), "--regrade", "--no-preflight"]
    return {"check-one": [*python, "check", "--submission", str(ROOT / "solutions"), "--exercise", "attention"],
            "check": [*python, "check", "--submission", str(ROOT / "solutions")],
            "class": [*grade, "--out", str(work / "out")],
            "cluster": [*grade, "--out", str(work / "out-cluster")],
            "watch": [sys.executable, str(ROOT / "benchmarks" / "bench_watch.py"), "--saves", str(saves)]}


def measure(cmds: dict[str, list[str]], names: list[str], rounds: int, work: Path) -> dict:
    labels = {path: ["all on", "all off"] for path in cmds}
    for name in names:
        for path in TARGET[name]:
            if path in labels:
                labels[path].append(f"-{name}")
    labels = {path: ls for path, ls in labels.items() if len(ls) > 2 or not names}
    runs = {path: {label: {"wall_s": [], "cpu_s": [], "rss_mb": []} for label in ls} for path, ls in labels.items()}
    watch_results = work / "watch-results"
    env_extra = {"ATTNKIT_BENCH_RESULTS": str(watch_results)}

    def one(path: str, fast: str, n: int) -> tuple[float, float, float]:
        if path == "cluster":
            return run_on_cluster(cmds[path], fast, env_extra, work / "cluster-logs" / str(n))
        return run(cmds[path], fast, env_extra)

    for path in runs:
        one(path, "1", 0)       # warm: bytecode, caches, the preflight marker
    for n in range(rounds):
        for path, by_label in runs.items():
            for label, figures in by_label.items():
                fast = {"all on": "1", "all off": "0"}.get(label, label)
                wall, cpu, rss = one(path, fast, n + 1)
                if path == "watch":
                    wall, cpu = watch_figures(watch_results)
                figures["wall_s"].append(wall)
                figures["cpu_s"].append(cpu)
                figures["rss_mb"].append(rss)
    return runs


def paired(off: list[float], on: list[float]) -> float:
    """The median of the rounds' own ratios off/on: each round's two runs met the same load."""
    return statistics.median(a / b for a, b in zip(off, on))


def gains(row: dict) -> bool:
    """At least 10% by wall, by CPU or by the grader's peak memory, both as the ratio of the medians
    and as the paired median (a ratio of medians alone follows a change of load between the runs
    it picked)."""
    return any(min(row[f"{kind}_off_on"], row[f"{kind}_paired"]) >= GAIN for kind in KINDS)


def rows_of(runs: dict) -> list[dict]:
    rows = []
    for path, by_label in runs.items():
        on = by_label["all on"]
        for label, figures in by_label.items():
            row = {"path": path, "off": label}
            for kind, key in zip(KINDS, ("wall_s", "cpu_s", "rss_mb")):
                row[key] = statistics.median(figures[key])
                row[f"{kind}_off_on"] = row[key] / statistics.median(on[key])
                row[f"{kind}_paired"] = paired(figures[key], on[key])
                row[f"{kind}_runs"] = figures[key]
            rows.append(row)
    return rows


def verdicts(rows: list[dict]) -> dict[str, dict]:
    """Per speed-up: kept when it earns at least 10% on one of its paths, by wall or by CPU (`gains`)."""
    found: dict[str, dict] = {}
    for row in rows:
        if not row["off"].startswith("-"):
            continue
        name = row["off"][1:]
        entry = found.setdefault(name, {"paths": {}, "earns_10_percent": False})
        entry["paths"][row["path"]] = {f"{kind}_{how}": row[f"{kind}_{how}"] for kind in KINDS
                                       for how in ("off_on", "paired")}
        if gains(row):
            entry["earns_10_percent"] = True
    return found


def main(argv=None) -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--rounds", type=int, default=5)
    p.add_argument("--students", type=int, default=40)
    p.add_argument("--saves", type=int, default=3, help="saves per exercise on the watch path")
    p.add_argument("--only", default="", help="these speed-ups only (comma-separated)")
    p.add_argument("--paths", default="check-one,check,class,cluster,watch",
                   help="these paths only (comma-separated: check-one, check, class, cluster, watch)")
    p.add_argument("--name", default="speedups", help="the record's name in benchmarks/results")
    args = p.parse_args(argv)
    names = [n for n in (args.only.split(",") if args.only else SPEEDUPS) if n]
    paths = [p for p in args.paths.split(",") if p]
    become_subreaper()
    work = Path(tempfile.mkdtemp(prefix="bench-speedups-"))
    try:
        cmds = {path: cmd for path, cmd in commands(work, args.students, args.saves).items() if path in paths}
        runs = measure(cmds, [n for n in names if set(TARGET[n]) & set(cmds)], args.rounds, work)
    finally:
        shutil.rmtree(work, ignore_errors=True)
    rows = rows_of(runs)
    for row in rows:
        gain = "" if row["off"] == "all on" else (f"  off/on wall {row['wall_off_on']:.2f}x cpu {row['cpu_off_on']:.2f}x"
                                                  f" rss {row['rss_off_on']:.2f}x (paired {row['wall_paired']:.2f}x, "
                                                  f"{row['cpu_paired']:.2f}x, {row['rss_paired']:.2f}x)")
        if row["off"].startswith("-") and not gains(row):
            gain += "  (under 10%)"
        print(f"{row['path']:9} {row['off']:18} wall {row['wall_s']:7.3f} s  cpu {row['cpu_s']:7.3f} s  "
              f"rss {row['rss_mb']:6.0f} MB{gain}")
    print("\nper speed-up, on its target path (on: every speed-up on; off: that one off):")
    for row in rows:
        if row["off"].startswith("-"):
            on_wall = row["wall_s"] / row["wall_off_on"]
            verdict = "keep" if gains(row) else "remove (under 10%)"
            print(f"  {row['off'][1:]:16} {row['path']:9} on {on_wall:6.3f} s  off {row['wall_s']:6.3f} s  "
                  f"off/on wall {row['wall_off_on']:.2f}x cpu {row['cpu_off_on']:.2f}x rss {row['rss_off_on']:.2f}x "
                  f"(paired {row['wall_paired']:.2f}x, {row['cpu_paired']:.2f}x, {row['rss_paired']:.2f}x)  {verdict}")
    # Wall time is the headline; the CPU time (what moves less with the machine's load) beside it.
    headline = [record.figure((f"`{row['path']}` with {row['off'][1:]} off ({SWITCH}={row['off']})"
                               if row["off"].startswith("-") else
                               f"`{row['path']}` with every speed-up off ({SWITCH}=0)")
                              + f", wall (CPU {row['cpu_s']:.2f} s, {row['cpu_off_on']:.2f}x; grader's peak memory "
                                f"{row['rss_mb']:.0f} MB, {row['rss_off_on']:.2f}x)", row["wall_s"], "s",
                              anchor="every speed-up on", anchor_value=row["wall_s"] / row["wall_off_on"],
                              ratio=row["wall_off_on"], ratio_is="value / anchor",
                              target="at least 1.10x on its target path, or the speed-up goes"
                              if row["off"].startswith("-") else None)
                for row in rows if row["off"] != "all on"]
    record.write(args.name, {"rounds": args.rounds, "students": args.students, "saves": args.saves,
                              "speedups": verdicts(rows), "rows": rows}, headline=headline)
    load = os.getloadavg()
    print(f"load average {record.LOAD_AT_START[0]:.2f} -> {load[0]:.2f}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
