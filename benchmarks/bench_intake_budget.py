"""What one student's hostile upload costs the grader, by how many names it is handed in under.

    python benchmarks/bench_intake_budget.py                  # the archive under 12 and 60 names
    python benchmarks/bench_intake_budget.py --names 12 --honest 4

Builds a class of honest students (the kit's solutions) and one attacker whose folder holds the
witness hand_computation.py and the same small .tar.gz (a pax header of 200,000 digits, about
300 bytes: tarfile parses it in time quadratic in the digits) under N names, grades it with
`attnkit grade --jobs 2` in a subprocess, and prints the run's wall time and the CPU time of the
grader and everything it started (RUSAGE_CHILDREN), the attacker's grade and the honest
students'. The same class without the attacker is the anchor. Writes
benchmarks/results/intake-budget.json. A benchmark, not a test: nothing is asserted.
"""

from __future__ import annotations

import argparse
import csv
import io
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
from tests.test_hostile_uploads import course_file, kit_env, pax_digits_tgz  # noqa: E402

SOLUTIONS = KIT / "solutions"
DIGITS = 200_000


def build(root: Path, names: int, honest: int) -> Path:
    class_dir = root / "class"
    for i in range(honest):
        folder = class_dir / f"honest_{i}"
        folder.mkdir(parents=True)
        for path in SOLUTIONS.glob("*.py"):
            shutil.copy(path, folder / path.name)
    if names:
        folder = class_dir / "attacker"
        folder.mkdir(parents=True)
        shutil.copy(SOLUTIONS / "hand_computation.py", folder / "hand_computation.py")
        data = pax_digits_tgz(DIGITS)
        for i in range(names):
            (folder / f"attention_{i}.tar.gz").write_bytes(data)
    return class_dir


def grade(root: Path) -> dict:
    out = root / "out"
    argv = [sys.executable, "-m", "autograder.cli", "--course", str(course_file(root)), "grade", str(root / "class"),
            "--out", str(out), "--jobs", "2"]
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    started = time.monotonic()
    done = subprocess.run(argv, capture_output=True, text=True, env=kit_env(root / "tmp"), cwd=str(root))
    wall = time.monotonic() - started
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
    rows = {}
    if (out / "grades.csv").is_file():
        rows = {r["student"]: r["total"] for r in csv.DictReader(io.StringIO((out / "grades.csv").read_text()))}
    return {"returncode": done.returncode, "wall_s": round(wall, 1), "cpu_s": round(cpu, 1), "totals": rows,
            "stderr": done.stderr[-500:] if done.returncode else ""}


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--names", type=int, nargs="*", default=[12, 60])
    parser.add_argument("--honest", type=int, default=2)
    args = parser.parse_args(argv)
    runs = {}
    for names in [0, *args.names]:
        with tempfile.TemporaryDirectory(prefix="bench-intake-") as tmp:
            root = Path(tmp)
            build(root, names, args.honest)
            runs[names] = grade(root)
            print(f"{names:3d} names: wall {runs[names]['wall_s']:7.1f} s, CPU {runs[names]['cpu_s']:7.1f} s, "
                  f"totals {runs[names]['totals']}", flush=True)
    headline = [record.figure(f"attnkit grade, the archive under {n} names: CPU", runs[n]["cpu_s"], "s",
                              anchor="the same class without the attacker", anchor_value=runs[0]["cpu_s"])
                for n in args.names]
    record.write("intake-budget", {"digits": DIGITS, "honest": args.honest, "runs": runs}, headline=headline)
    return 0


if __name__ == "__main__":
    sys.exit(main())
