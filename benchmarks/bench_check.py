"""The student's loop, cold: `attnkit check` in a new process, against the physical floors.

    python benchmarks/bench_check.py [--rounds 5]

Runs, each in a fresh interpreter, `rounds` times:
  - the floors: `python -c "import numpy"` and `python -c "import torch"`;
  - `attnkit check --exercise attention` on the released stubs (what a student first runs) and
    on the solutions (every check answered);
  - `attnkit check` of all five exercises on the solutions, with the reference cache filled and
    with an empty one (`ATTNKIT_CACHE_DIR` pointed at a new folder each round).
Prints the median and the spread of the wall times, the targets (one exercise: 1.0 s; all five:
the torch import floor + 1.5 s) and the machine's load average, since wall times on a busy
machine say more about the machine than about the kit.
"""

from __future__ import annotations

import argparse
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def wall(cmd: list[str], env: dict | None = None) -> float:
    started = time.perf_counter()
    done = subprocess.run(cmd, cwd=ROOT, env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT)
    took = time.perf_counter() - started
    if done.returncode not in (0, 1):     # 1: not full marks (the stubs)
        raise SystemExit(f"{' '.join(cmd)} failed ({done.returncode}):\n{done.stdout.decode()[-2000:]}")
    return took


def measure(name: str, cmd: list[str], rounds: int, cold_cache: bool = False) -> float:
    times = []
    for _ in range(rounds):
        env = dict(os.environ)
        if cold_cache:
            env["ATTNKIT_CACHE_DIR"] = tempfile.mkdtemp(prefix="attnkit-bench-cache-")
        times.append(wall(cmd, env))
    median = statistics.median(times)
    print(f"  {name:<58} {median:6.2f} s   (min {min(times):.2f}, max {max(times):.2f})", flush=True)
    return median


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--rounds", type=int, default=5)
    args = ap.parse_args()
    py = sys.executable
    check = [py, "-m", "autograder.cli", "check"]
    print(f"load average before: {os.getloadavg()[0]:.2f}  ({os.cpu_count()} cores), {args.rounds} rounds each")
    numpy_floor = measure("floor: python -c 'import numpy'", [py, "-c", "import numpy"], args.rounds)
    torch_floor = measure("floor: python -c 'import torch'", [py, "-c", "import torch"], args.rounds)
    wall(check + ["--submission", "solutions"])      # fills the reference cache once
    stub = measure("check --exercise attention (the stubs)", check + ["--exercise", "attention"], args.rounds)
    one = measure("check --exercise attention (solutions)",
                  check + ["--submission", "solutions", "--exercise", "attention"], args.rounds)
    five = measure("check, all five (solutions, reference cache filled)", check + ["--submission", "solutions"],
                   args.rounds)
    five_cold = measure("check, all five (solutions, empty reference cache)",
                        check + ["--submission", "solutions"], args.rounds, cold_cache=True)
    print(f"load average after: {os.getloadavg()[0]:.2f}")
    print(f"one exercise: {max(stub, one):.2f} s against the 1.0 s target (numpy floor {numpy_floor:.2f} s)")
    print(f"all five: {five:.2f} s ({five_cold:.2f} s with an empty reference cache) against the torch floor "
          f"+ 1.5 s = {torch_floor + 1.5:.2f} s")


if __name__ == "__main__":
    main()
