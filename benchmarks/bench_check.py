"""The student's loop, cold: `attnkit check` in a new process, against the physical floors.

    python benchmarks/bench_check.py [--rounds 5]

Runs, each in a fresh interpreter, `rounds` times, interleaved (a floor, then the checks it is the
floor of, round after round, so that a machine whose load changes hurts both alike):
  - the floors: `python -c "import numpy"` and `python -c "import torch"`;
  - `attnkit check --exercise attention` on the released stubs (what a student first runs) and
    on the solutions (every check answered);
  - `attnkit check` of all five exercises on the solutions, with the reference cache filled and
    with an empty one (`ATTNKIT_CACHE_DIR` pointed at a new folder each round);
  - the handout's `python check.py` (what a student without the kit runs, `attnkit handout`):
    attention on the stubs and on the solutions, and all five on the solutions (target: no
    slower than `attnkit check`, against the same floors).
Prints the median and the spread of the wall times, the median CPU time of each command's process
tree (all cores; on a busy machine it says more than the wall time), each check's median
difference to its floor (measured in the same round) against the targets (one exercise at most 0.2 s above the bare numpy
import, all five at most 0.3 s above the bare torch import) and the machine's load average before
and after, since wall times on a busy machine say more about the machine than about the kit.
Writes the figures to benchmarks/results/check.json.

Every command runs with Python's bytecode cache on (in a private folder, warmed once), as on a
student's machine: with PYTHONDONTWRITEBYTECODE set, the kit would compile its own modules on
every run, which no student's Python does.
"""

from __future__ import annotations

import argparse
import atexit
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
sys.path.insert(0, str(ROOT))

from benchmarks import record  # noqa: E402
NUMPY_MARGIN, TORCH_MARGIN = 0.2, 0.3     # the targets: seconds above the bare import


def temporary_folder(prefix: str) -> str:
    """A folder for this run only, removed when the benchmark ends."""
    path = tempfile.mkdtemp(prefix=prefix)
    atexit.register(shutil.rmtree, path, ignore_errors=True)
    return path


def bytecode_env() -> dict:
    env = {k: v for k, v in os.environ.items() if k != "PYTHONDONTWRITEBYTECODE"}
    env["PYTHONPYCACHEPREFIX"] = temporary_folder("attnkit-bench-pycache-")
    return env


LAST_CPU = [0.0]      # the CPU seconds of the last command's processes (and theirs, reaped)


def cpu_of_children() -> float:
    used = resource.getrusage(resource.RUSAGE_CHILDREN)
    return used.ru_utime + used.ru_stime


def wall(cmd: list[str], env: dict, cwd: Path = ROOT) -> float:
    """The wall time of `cmd`; its CPU time in LAST_CPU."""
    cpu_before, started = cpu_of_children(), time.perf_counter()
    done = subprocess.run(cmd, cwd=cwd, env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT)
    took = time.perf_counter() - started
    LAST_CPU[0] = cpu_of_children() - cpu_before
    if done.returncode not in (0, 1):     # 1: not full marks (the stubs)
        raise SystemExit(f"{' '.join(cmd)} failed ({done.returncode}):\n{done.stdout.decode()[-2000:]}")
    return took


def handouts(py: str, env: dict) -> tuple[Path, Path]:
    """Two handouts (`attnkit handout`): as released, and with the solutions in the exercise files."""
    stubs, solved = (Path(temporary_folder("attnkit-bench-handout-")) / "handout" for _ in range(2))
    for folder in (stubs, solved):
        subprocess.run([py, "-m", "autograder.cli", "handout", str(folder)], cwd=ROOT, env=env, check=True,
                       stdout=subprocess.DEVNULL)
    for source in (ROOT / "solutions").glob("*.py"):
        shutil.copy(source, solved / source.name)
    return stubs, solved


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--rounds", type=int, default=5)
    args = ap.parse_args()
    py = sys.executable
    check = [py, "-m", "autograder.cli", "check"]
    env = bytecode_env()
    stubs, solved = handouts(py, env)
    runs = {
        "floor: python -c 'import numpy'": ([py, "-c", "import numpy"], False),
        "check --exercise attention (the stubs)": (check + ["--exercise", "attention"], False),
        "handout: python check.py attention (the stubs)": ([py, "check.py", "attention"], False, stubs),
        "handout: python check.py attention (solutions)": ([py, "check.py", "attention"], False, solved),
        "check --exercise attention (solutions)": (check + ["--submission", "solutions", "--exercise", "attention"],
                                                   False),
        "floor: python -c 'import torch'": ([py, "-c", "import torch"], False),
        "check, all five (solutions, reference cache filled)": (check + ["--submission", "solutions"], False),
        "check, all five (solutions, empty reference cache)": (check + ["--submission", "solutions"], True),
        "handout: python check.py, all five (solutions)": ([py, "check.py"], False, solved),
    }
    runs = {name: run if len(run) == 3 else (*run, ROOT) for name, run in runs.items()}
    load_before = os.getloadavg()
    print(f"load average before: {load_before[0]:.2f} (5 min {load_before[1]:.2f}; {os.cpu_count()} cores), "
          f"{args.rounds} rounds each, bytecode cached")
    for cmd, _, cwd in runs.values():        # warm: bytecode written, reference cache filled once
        wall(cmd, env, cwd)
    times: dict[str, list[float]] = {name: [] for name in runs}
    cpu: dict[str, list[float]] = {name: [] for name in runs}
    for _ in range(args.rounds):
        for name, (cmd, cold_cache, cwd) in runs.items():
            run_env = dict(env, ATTNKIT_CACHE_DIR=temporary_folder("attnkit-bench-cache-")) if cold_cache else env
            times[name].append(wall(cmd, run_env, cwd))
            cpu[name].append(LAST_CPU[0])
    for name, t in times.items():
        print(f"  {name:<58} {statistics.median(t):6.2f} s   (min {min(t):.2f}, max {max(t):.2f}; "
              f"CPU {statistics.median(cpu[name]):.2f} s)")
    load_after = os.getloadavg()
    print(f"load average after: {load_after[0]:.2f} (5 min {load_after[1]:.2f})")

    def above(name: str, floor: str) -> float:
        """The median of the per-round differences: each check against the floor of its own round."""
        return statistics.median(a - b for a, b in zip(times[name], times[floor]))

    numpy_floor, torch_floor = "floor: python -c 'import numpy'", "floor: python -c 'import torch'"
    above_floor, headline = {}, []
    print(f"\nbare numpy import {statistics.median(times[numpy_floor]):.2f} s; "
          f"bare torch import {statistics.median(times[torch_floor]):.2f} s")
    for name, floor, margin in (("check --exercise attention (the stubs)", numpy_floor, NUMPY_MARGIN),
                                ("check --exercise attention (solutions)", numpy_floor, NUMPY_MARGIN),
                                ("check, all five (solutions, reference cache filled)", torch_floor, TORCH_MARGIN),
                                ("check, all five (solutions, empty reference cache)", torch_floor, TORCH_MARGIN),
                                ("handout: python check.py attention (the stubs)", numpy_floor, NUMPY_MARGIN),
                                ("handout: python check.py attention (solutions)", numpy_floor, NUMPY_MARGIN),
                                ("handout: python check.py, all five (solutions)", torch_floor, TORCH_MARGIN)):
        diff = above(name, floor)
        verdict = "within" if diff <= margin else "OVER"
        print(f"  {name:<52} {diff:+.2f} s above the {floor.split()[-1][:-1]} floor "
              f"({verdict} the {margin:.1f} s target)")
        above_floor[name] = {"floor": floor, "above_s": round(diff, 4), "target_s": margin}
        if name in ("check --exercise attention (the stubs)", "check, all five (solutions, reference cache filled)",
                    "handout: python check.py attention (the stubs)"):
            floor_s = statistics.median(times[floor])
            headline.append(record.figure(
                f"{name}, cold", statistics.median(times[name]), "s", anchor=floor.split(": ", 1)[1],
                anchor_value=floor_s, ratio=statistics.median(times[name]) / floor_s, ratio_is="value / anchor",
                target=f"at most {margin:.1f} s above the anchor"))
    record.write("check", {"rounds": args.rounds,
                           "runs": {name: {"median_s": statistics.median(t), "min_s": min(t), "max_s": max(t),
                                           "median_cpu_s": statistics.median(cpu[name])}
                                    for name, t in times.items()},
                           "above_floor": above_floor}, headline=headline)


if __name__ == "__main__":
    main()
