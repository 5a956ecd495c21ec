"""What one correct submission costs in the class loop: core-ms, wall-ms and busy cores.

    python benchmarks/bench_copies.py                   # 30 and 150 copies, lanes as `attnkit grade` picks
    python benchmarks/bench_copies.py --jobs 2          # the same number of lanes at both sizes
    python benchmarks/bench_copies.py --against ../kit-old --rounds 2
                                                        # this kit against a checkout of another commit

`attnkit grade` (the command an instructor runs, in a new process) on a class of N copies of the
kit's solutions, then of M copies; per submission is the difference between the two runs divided
by M - N, so the start (imports, sandboxes, preflight) and the end (reports, similarity) cancel out.
CPU time is the machine's busy time from /proc/stat over the run (every process: the grader, its
sandboxes, and the kernel's work for them), so run it on a quiet machine; busy cores = core-ms /
wall-ms. The grader's own CPU is printed apart. Targets: 200 core-ms per correct submission,
1.9 of 2 cores busy. Writes the figures to benchmarks/results/copies.json. This is a benchmark,
not a test: nothing is asserted.

Without --jobs, both sizes are graded with the lanes `attnkit grade` picks for the larger class (one
per core, and one more from 150 students: local_grading.lanes_for), so that the difference measures those
lanes' steady state and not the start of a lane only the larger run has. `--jobs 2` on 2 cores
measures one lane per core.

`--against DIR` compares with another checkout of the kit (`git worktree add ../kit-old COMMIT`),
graded the same way with the lanes its own `attnkit grade` picks, round after round in
alternation, so that both meet the same machine: the ratio says what a figure measured on another
machine becomes on this one.
The solutions copied are this kit's, for both (the contract is the same).
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

from benchmarks import record  # noqa: E402

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


def grade(folder: Path, out: Path, jobs: int | None, kit: Path = KIT) -> tuple[float, float, float]:
    """(wall s, machine busy core-s, grader core-s) of one `attnkit grade` of the kit in `kit` (run
    from that folder, whose package comes first on `python -c`'s path, whichever one is installed)."""
    env = {k: v for k, v in os.environ.items() if k != "PYTHONDONTWRITEBYTECODE"}
    cmd = [sys.executable, "-c", GRADER, "grade", str(folder), "--out", str(out), *(["--jobs", str(jobs)] if jobs else [])]
    busy, started = machine_busy(), time.perf_counter()
    done = subprocess.run(cmd, cwd=kit, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
    wall, busy = time.perf_counter() - started, machine_busy() - busy
    if done.returncode != 0:
        raise SystemExit(f"attnkit grade failed ({done.returncode}):\n{done.stderr[-2000:]}")
    grader = next(float(line.split()[1]) for line in done.stderr.splitlines() if line.startswith("grader-cpu"))
    return wall, busy, grader


def per_submission(kit: Path, root: Path, small: int, large: int, jobs: int | None) -> dict:
    """One measurement of `kit`: both sizes graded (after a warm-up run), the difference per submission."""
    grade(copies(root / "warm", 2), root / "warm-out", jobs, kit)      # bytecode and reference cache
    runs = {n: grade(copies(root, n), root / f"out-{n}", jobs, kit) for n in (small, large)}
    (w0, b0, g0), (w1, b1, g1) = runs[small], runs[large]
    per = large - small
    core_ms, wall_ms, grader_ms = (b1 - b0) / per * 1000, (w1 - w0) / per * 1000, (g1 - g0) / per * 1000
    return {"runs": runs, "core_ms": core_ms, "wall_ms": wall_ms, "grader_ms": grader_ms, "busy": core_ms / wall_ms}


def means(measured: list[dict]) -> dict:
    """The mean core-ms, wall-ms and busy cores of one kit's rounds."""
    return {k: sum(m[k] for m in measured) / len(measured) for k in ("core_ms", "wall_ms", "busy")}


def show(label: str, small: int, large: int, m: dict) -> None:
    for n, (wall, busy, grader) in m["runs"].items():
        print(f"  {n:5d} copies of the solutions: wall {wall:6.2f} s, machine busy {busy:6.2f} core-s, "
              f"the grader itself {grader:5.2f} core-s")
    print(f"{label}per correct submission ({small} -> {large}): {m['core_ms']:.0f} core-ms (the grader "
          f"{m['grader_ms']:.0f}), {m['wall_ms']:.0f} wall-ms, {m['busy']:.2f} cores busy", flush=True)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--sizes", default="30,150", help="the two class sizes (default 30,150)")
    ap.add_argument("--jobs", type=int, default=None,
                    help="lanes at both sizes (default: as attnkit grade picks them for the larger class)")
    ap.add_argument("--against", type=Path, help="another checkout of the kit, measured in alternation")
    ap.add_argument("--rounds", type=int, default=1, help="measurements of each kit (default 1)")
    args = ap.parse_args()
    small, large = (int(x) for x in args.sizes.split(","))
    from autograder.grading.local_grading import lanes_for

    jobs = lanes_for(args.jobs or None, large)
    other = args.against.resolve() if args.against else None
    if other is not None and not (other / "autograder" / "cli.py").is_file():
        raise SystemExit(f"--against {args.against}: not a checkout of the kit (no autograder/cli.py there)")
    print(f"{os.cpu_count()} cores, load average {os.getloadavg()[0]:.2f} before; lanes: {jobs}"
          f"{'' if args.jobs else f' (as attnkit grade picks them for {large} students)'}"
          f"{f'; against {other}, with the lanes its attnkit grade picks' if other else ''}", flush=True)
    mine, theirs = [], []
    for round_ in range(1, max(1, args.rounds) + 1):
        for kit, kept, label in ((other, theirs, "against: "), (KIT, mine, "this kit: ")):
            if kit is None:
                continue
            began = time.strftime("%H:%M:%S")
            with tempfile.TemporaryDirectory(prefix="attnkit-copies-") as tmp:
                m = per_submission(kit, Path(tmp), small, large, args.jobs if kit is other else jobs)
            kept.append(m)
            print(f"round {round_}, from {began} to {time.strftime('%H:%M:%S')}, {kit}")
            show(label, small, large, m)
    print(f"load average {os.getloadavg()[0]:.2f} after")
    mean = means(mine)
    if theirs:
        before = means(theirs)
        print(f"means: this kit {mean['core_ms']:.0f} core-ms, {mean['wall_ms']:.0f} wall-ms, {mean['busy']:.2f} busy; "
              f"against {before['core_ms']:.0f} core-ms, {before['wall_ms']:.0f} wall-ms, {before['busy']:.2f} busy: "
              f"core-ms x{mean['core_ms'] / before['core_ms']:.2f}, wall-ms x{mean['wall_ms'] / before['wall_ms']:.2f}")
    print(f"targets: 200 core-ms {'met' if mean['core_ms'] <= 200 else 'not met'}; "
          f"1.9 busy cores {'met' if mean['busy'] >= 1.9 else 'not met'}")

    def plain(m: dict) -> dict:
        return {**{k: v for k, v in m.items() if k != "runs"},
                "runs": {n: dict(zip(("wall_s", "busy_core_s", "grader_core_s"), run)) for n, run in m["runs"].items()}}

    headline = [record.figure("a correct submission in the class loop", mean["core_ms"], "core-ms",
                              target="at most 200 core-ms"),
                record.figure("cores busy grading a class", mean["busy"], "cores", target="at least 1.9 of 2")]
    if theirs:
        headline.append(record.figure("a correct submission in the class loop", mean["core_ms"], "core-ms",
                                      anchor=f"the kit in {other.name}", anchor_value=before["core_ms"],
                                      ratio=mean["core_ms"] / before["core_ms"], ratio_is="value / anchor"))
    record.write("copies", {"sizes": [small, large], "lanes": jobs, "rounds": [plain(m) for m in mine],
                            "mean": mean, "against": {"kit": other.name, "rounds": [plain(m) for m in theirs],
                                                      "mean": before} if theirs else None},
                 headline=headline)


if __name__ == "__main__":
    main()
