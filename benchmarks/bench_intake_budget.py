"""What hostile uploads cost the grader, and what reading an honest class costs.

    python benchmarks/bench_intake_budget.py                          # every scenario, this kit
    python benchmarks/bench_intake_budget.py --scenario names --scenario honest
    python benchmarks/bench_intake_budget.py --memory-mb 3072 --tmpfs-mb 512     # as root
    python benchmarks/bench_intake_budget.py --kit OTHER_CHECKOUT --name intake-budget-before

Scenarios, each graded by `attnkit grade --jobs 2` in a subprocess under the course.yml of
tests/test_hostile_uploads.py (the kit's, its children at 1 GB):

  honest   two honest students (the kit's solutions): the anchor
  names    the same two, and one attacker: the witness hand_computation.py and a small .tar.gz that
           is slow to parse (a pax header of 250,000 digits) under 60 names, its bytes varied for each
  attacks  the class of tests/test_intake_budget_attacks.py (that archive under 60 names, 3,000
           sparse 2 MB .py files beside an archive, a dozen dense notebooks), with the course's
           default reading limits
  demo     demo/class (each student `--copies` times) graded `--repeat` times: the honest cost
           per submission

For each: the wall time; the CPU time of what the bench waited for (RUSAGE_CHILDREN: the grader and
the processes it waited for); the CPU time of the grader and its helpers and their children (the
cgroup's cpuacct, where one can be made: the sandbox moves its children to cgroups of their own,
so this is the grader's side, where reading uploads happens); every student's total. With --memory-mb the grader runs in a memory cgroup of that size (as
tests/memory_capped.py makes it: the grader, its helpers and their children; the sandbox puts its
children in cgroups of their own) and the record says its peak and whether it hit the cap; with
--tmpfs-mb its temporary folder is a tmpfs of that size (root), sampled for its peak use. `--kit`
grades with another checkout's code (the same scenarios, before and after a change). Writes
benchmarks/results/<--name>.json. A benchmark, not a test: nothing is asserted.
"""

from __future__ import annotations

import argparse
import contextlib
import csv
import io
import os
import resource
import shutil
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path

KIT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(KIT))

from benchmarks import record  # noqa: E402
from tests.memory_capped import memory_cap  # noqa: E402
from tests.test_hostile_uploads import course_file, pax_digits_tgz  # noqa: E402
from tests.test_intake_budget_attacks import build_class as attack_class  # noqa: E402

SOLUTIONS = KIT / "solutions"
NAMES = 60


def honest_class(root: Path, honest: int = 2) -> Path:
    class_dir = root / "class"
    for i in range(honest):
        folder = class_dir / f"honest_{i}"
        folder.mkdir(parents=True)
        for path in SOLUTIONS.glob("*.py"):
            shutil.copy(path, folder / path.name)
    return class_dir


def names_class(root: Path) -> Path:
    class_dir = honest_class(root)
    folder = class_dir / "attacker"
    folder.mkdir(parents=True)
    shutil.copy(SOLUTIONS / "hand_computation.py", folder / "hand_computation.py")
    for i in range(NAMES):
        (folder / f"attention_{i:02d}.tar.gz").write_bytes(pax_digits_tgz(250_000 + i))
    return class_dir


COPIES = 1      # --copies: each demo student this many times


def demo_class(root: Path) -> Path:
    class_dir = root / "class"
    class_dir.mkdir()
    for i in range(COPIES):
        for student in sorted((KIT / "demo" / "class").iterdir()):
            shutil.copytree(student, class_dir / (student.name if COPIES == 1 else f"{student.name}_{i}"))
    return class_dir


BUILD = {"honest": honest_class, "names": names_class, "attacks": attack_class, "demo": demo_class}


@contextlib.contextmanager
def tmpfs(size_mb: int | None, under: Path):
    """A folder for TMPDIR: a tmpfs of `size_mb` (root), or a plain folder."""
    folder = under / "tmp"
    folder.mkdir()
    if size_mb:
        subprocess.run(["mount", "-t", "tmpfs", "-o", f"size={size_mb}m,mode=1777", "tmpfs", str(folder)], check=True)
    try:
        yield folder
    finally:
        if size_mb:
            subprocess.run(["umount", "-l", str(folder)], check=False)


class Peak(threading.Thread):
    """The largest use of the temporary folder's file system and the most helper processes seen."""

    def __init__(self, folder: Path):
        super().__init__(daemon=True)
        self.folder, self.used, self.helpers, self.done = folder, 0, 0, threading.Event()

    def run(self) -> None:
        while not self.done.wait(0.2):
            st = os.statvfs(self.folder)
            self.used = max(self.used, (st.f_blocks - st.f_bfree) * st.f_frsize)
            self.helpers = max(self.helpers, _helpers())


def _helpers() -> int:
    count = 0
    for entry in os.listdir("/proc"):
        try:
            if entry.isdigit() and b"autograder.sandbox.helper_process" in Path("/proc", entry, "cmdline").read_bytes():
                count += 1
        except OSError:
            pass
    return count


def grade(root: Path, class_dir: Path, course: Path, kit: Path, memory_mb: int | None, tmpfs_mb: int | None,
          timeout: float) -> dict:
    out = root / "out"
    argv = [sys.executable, "-m", "autograder.cli", "--course", str(course), "grade", str(class_dir),
            "--out", str(out), "--jobs", "2"]
    with tmpfs(tmpfs_mb, root) as tmp, memory_cap(memory_mb or 1 << 20) as (cap, enter):
        env = dict(os.environ, PYTHONPATH=str(kit), TMPDIR=str(tmp))
        peak = Peak(tmp)
        peak.start()
        before = resource.getrusage(resource.RUSAGE_CHILDREN)
        started = time.monotonic()
        try:
            done = subprocess.run(argv, capture_output=True, text=True, env=env, cwd=str(root), timeout=timeout,
                                  preexec_fn=enter)
            returncode, stderr = done.returncode, done.stderr
        except subprocess.TimeoutExpired:
            returncode, stderr = None, f"did not finish within {timeout:g} s"
        wall = time.monotonic() - started
        after = resource.getrusage(resource.RUSAGE_CHILDREN)
        peak.done.set()
        peak.join()
        memory = None
        if cap.group is not None and cap.group.version == "v1":
            memory = int(cap.group._read("memory", "memory.max_usage_in_bytes") or 0) / 2**20
        grader_cpu = cap.group.cpu_seconds() if cap.group is not None else None
        figures = {"returncode": returncode, "wall_s": round(wall, 1),
                   "cpu_s": round(after.ru_utime - before.ru_utime + after.ru_stime - before.ru_stime, 1),
                   "grader_cpu_s": grader_cpu and round(grader_cpu, 1),
                   "memory_cap": cap.capped_by if memory_mb else None, "peak_memory_mb": memory and round(memory),
                   "out_of_memory": cap.out_of_memory() if memory_mb else None,
                   "peak_tmp_mb": round(peak.used / 2**20, 1) if tmpfs_mb else None,
                   "peak_helper_processes": peak.helpers,
                   "left_in_tmp": len(os.listdir(tmp))}
    rows = {}
    if (out / "grades.csv").is_file():
        rows = {r["student"]: r["total"] for r in csv.DictReader(io.StringIO((out / "grades.csv").read_text()))}
    figures["totals"] = rows
    figures["students"] = len([p for p in class_dir.iterdir() if p.is_dir()])
    if returncode:
        figures["stderr"] = stderr[-500:]
    return figures


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--scenario", action="append", choices=list(BUILD))
    parser.add_argument("--kit", type=Path, default=KIT, help="the checkout whose code grades (default: this one)")
    parser.add_argument("--repeat", type=int, default=3, help="runs of the demo class")
    parser.add_argument("--copies", type=int, default=1, help="copies of each demo student")
    parser.add_argument("--memory-mb", type=int)
    parser.add_argument("--tmpfs-mb", type=int)
    parser.add_argument("--timeout", type=float, default=600.0)
    parser.add_argument("--name", default="intake-budget")
    args = parser.parse_args(argv)
    global COPIES
    COPIES = args.copies
    runs: dict[str, list[dict]] = {}
    for scenario in args.scenario or list(BUILD):
        for _ in range(args.repeat if scenario == "demo" else 1):
            with tempfile.TemporaryDirectory(prefix="bench-intake-") as tmp:
                root = Path(tmp)
                class_dir = BUILD[scenario](root)
                course = course_file(root, ("hand_computation", "attention") if scenario == "attacks" else None)
                run = grade(root, class_dir, course, args.kit.resolve(), args.memory_mb, args.tmpfs_mb, args.timeout)
            runs.setdefault(scenario, []).append(run)
            print(f"{scenario:8s} wall {run['wall_s']:7.1f} s  CPU {run['cpu_s']:7.1f} s  "
                  f"grader and helpers {run['grader_cpu_s']} s  "
                  f"peak memory {run['peak_memory_mb']} MB  tmp {run['peak_tmp_mb']} MB  "
                  f"helpers {run['peak_helper_processes']}  rc {run['returncode']}  {run['totals']}", flush=True)
    anchor = runs.get("honest", [{}])[0].get("cpu_s")
    headline = [record.figure(f"attnkit grade, {scenario}: CPU of the run", min(r["cpu_s"] for r in rs), "s",
                              anchor="two honest students alone" if anchor is not None else None,
                              anchor_value=anchor)
                for scenario, rs in runs.items()]
    if "demo" in runs:
        per = min(r["cpu_s"] for r in runs["demo"]) / runs["demo"][0]["students"]
        headline.append(record.figure("attnkit grade demo/class: CPU per submission (best run)", round(per, 2), "s"))
    kit_commit = subprocess.run(["git", "-C", str(args.kit), "rev-parse", "HEAD"], capture_output=True,
                                text=True).stdout.strip()
    record.write(args.name, {"kit": "this checkout" if args.kit.resolve() == KIT else "another checkout",
                             "kit_commit": kit_commit,
                             "memory_mb": args.memory_mb, "tmpfs_mb": args.tmpfs_mb, "copies": args.copies,
                             "runs": runs}, headline=headline)
    return 0


if __name__ == "__main__":
    sys.exit(main())
