"""What each optional speed-up earns on the path it is for, measured on and off in the same run.

    python benchmarks/bench_speedups.py [--rounds 3] [--students 40] [--only templates,...]

Two paths, each a command in a fresh process, as a user runs it:
  - "check": `attnkit check --submission solutions` (all five exercises, cold: what a student or
    an instructor waits for);
  - "class": `attnkit grade CLASS --out OUT --regrade --no-preflight` on a class built by
    bench_class.build_class (honest styles, bugs, notebooks, two that hang).
For each speed-up, its path runs with every speed-up on and with that one off (ATTNKIT_FAST=-name),
interleaved round by round so that a change of the machine's load hurts both alike; and each path
once more with every speed-up off (ATTNKIT_FAST=0), the plain path. Prints the median wall times and
the ratio off/on (a speed-up that earns under 10% there is a candidate for removal), and writes the
figures to benchmarks/results/speedups.json (machine, date, commit).
"""

from __future__ import annotations

import argparse
import json
import os
import platform
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

from autograder.speedups import SPEEDUPS, SWITCH  # noqa: E402

# Where each speed-up claims its gain.
TARGET = {"bare_start": "check", "early_zygotes": "check", "open_ahead": "check", "calls_ahead": "check",
          "alongside": "check", "course_cache": "check", "leave_now": "check", "fork_ahead": "class",
          "templates": "class", "lend_cores": "class", "huge_pages": "class", "clone": "class"}
RESULTS = ROOT / "benchmarks" / "results"


def timed(cmd: list[str], fast: str, cwd: Path) -> float:
    env = dict(os.environ, **{SWITCH: fast}, MPLBACKEND="Agg")
    started = time.perf_counter()
    run = subprocess.run(cmd, env=env, cwd=cwd, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
    took = time.perf_counter() - started
    if run.returncode not in (0, 1):
        raise SystemExit(f"{' '.join(cmd)} (ATTNKIT_FAST={fast}) failed: {run.stderr[-1500:]}")
    return took


def commands(work: Path, students: int) -> dict[str, list[str]]:
    from bench_class import bench_course, build_class

    class_dir = work / "class"
    build_class(class_dir, students)
    bench_course(work, 2.0, 3.0)
    python = [sys.executable, "-m", "autograder.cli"]
    return {"check": [*python, "check", "--submission", str(ROOT / "solutions")],
            "class": [*python, "--course", str(work / "course.yml"), "grade", str(class_dir), "--out",
                      str(work / "out"), "--regrade", "--no-preflight"]}


def main(argv=None) -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--rounds", type=int, default=3)
    p.add_argument("--students", type=int, default=40)
    p.add_argument("--only", default="", help="these speed-ups only (comma-separated)")
    args = p.parse_args(argv)
    names = [n for n in (args.only.split(",") if args.only else SPEEDUPS) if n]
    work = Path(tempfile.mkdtemp(prefix="bench-speedups-"))
    try:
        cmds = commands(work, args.students)
        load_before = os.getloadavg()
        times: dict[str, dict[str, list[float]]] = {path: {"all on": [], "all off": []} for path in cmds}
        for name in names:
            times[TARGET[name]][f"-{name}"] = []
        for path, cmd in cmds.items():
            timed(cmd, "1", ROOT)              # warm: bytecode, caches, the preflight marker
            for _ in range(args.rounds):
                for label in times[path]:
                    fast = {"all on": "1", "all off": "0"}.get(label, label)
                    times[path][label].append(timed(cmd, fast, ROOT))
        load_after = os.getloadavg()
    finally:
        shutil.rmtree(work, ignore_errors=True)
    rows = []
    for path, by_label in times.items():
        on = statistics.median(by_label["all on"])
        for label, values in by_label.items():
            median = statistics.median(values)
            rows.append({"path": path, "off": label, "median_s": round(median, 3), "runs": [round(v, 3) for v in values],
                         "ratio_off_on": round(median / on, 3)})
    for row in rows:
        gain = "" if row["off"] == "all on" else f"  off/on {row['ratio_off_on']:.2f}x" + \
            ("  (under 10%)" if row["off"].startswith("-") and row["ratio_off_on"] < 1.10 else "")
        print(f"{row['path']:6} {row['off']:16} {row['median_s']:7.2f} s{gain}")
    commit = subprocess.run(["git", "rev-parse", "--short", "HEAD"], cwd=ROOT, capture_output=True, text=True).stdout.strip()
    record = {"benchmark": "speedups", "date": time.strftime("%Y-%m-%dT%H:%M:%S%z"), "commit": commit,
              "machine": {"cpus": os.cpu_count(), "python": platform.python_version(), "system": platform.platform(),
                          "load_before": load_before, "load_after": load_after},
              "rounds": args.rounds, "students": args.students, "rows": rows}
    RESULTS.mkdir(parents=True, exist_ok=True)
    (RESULTS / "speedups.json").write_text(json.dumps(record, indent=2) + "\n", encoding="utf-8")
    print(f"load average {load_before[0]:.1f} -> {load_after[0]:.1f}; wrote {RESULTS / 'speedups.json'}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
