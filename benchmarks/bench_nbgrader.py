"""How fast `nbgrader autograde` grades the kit's generated course, against PLAIN nbgrader.

    python benchmarks/bench_nbgrader.py                  # 3 students, one round
    python benchmarks/bench_nbgrader.py --students 6 --rounds 2 --keep DIR

In one run, with the real nbgrader:

* the kit's course (`attnkit nbgrader`: nbgrader_config.py with the kit's preprocessors, one
  notebook per exercise, 12 test cells), with N students who handed in the solution notebooks;
* a plain nbgrader assignment of the same size (benchmarks/plain_nbgrader.py: the same solution
  notebooks, same imports, ordinary ``assert np.allclose(...)`` test cells), same N students.

Both are autograded (alternating which goes first in each round, so that a busy machine hurts
both alike), and it prints the seconds per notebook of each and the ratio (target: the kit's
course at most 1.5x plain nbgrader). Then it says where the kit's extra time goes: its one-off
start (reading the submissions, loading the course, starting the sandbox) and its grading per
notebook, measured by grading the same notebooks in-process the way its preprocessor does.
This is a benchmark, not a test: nothing is asserted.
"""

from __future__ import annotations

import argparse
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

KIT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(KIT))

from autograder.checks import check_ids  # noqa: E402
from autograder.config import DEFAULT_COURSE, KIT_ROOT, load_course  # noqa: E402
from autograder.nbgrader.course import write_course  # noqa: E402
from benchmarks.plain_nbgrader import write_plain_course  # noqa: E402


def nbgrader(course_dir: Path, *args: str) -> float:
    """Run one nbgrader command in the course folder; its wall seconds."""
    # nbgrader_config.py imports the kit: this tree's, whatever is installed
    path = os.pathsep.join(filter(None, [str(KIT), os.environ.get("PYTHONPATH")]))
    env = dict(os.environ, PYTHONWARNINGS="ignore", PYTHONPATH=path)
    started = time.monotonic()
    run = subprocess.run([sys.executable, "-m", "nbgrader", *args], cwd=course_dir, env=env,
                         capture_output=True, text=True)
    took = time.monotonic() - started
    if run.returncode != 0:
        raise SystemExit(f"nbgrader {' '.join(args)} in {course_dir} failed:\n{run.stderr[-2000:]}")
    return took


def hand_in(course_dir: Path, assignment: str, students: list[str]) -> int:
    """Every student hands in the source notebooks (the solution); returns notebooks per student."""
    source = sorted((course_dir / "source" / assignment).glob("*.ipynb"))
    for student in students:
        target = course_dir / "submitted" / student / assignment
        shutil.rmtree(target, ignore_errors=True)
        target.mkdir(parents=True)
        for nb in source:
            shutil.copy(nb, target / nb.name)
        (target / "timestamp.txt").write_text("2026-01-01 00:00:00.000000 UTC")
    return len(source)


def kit_costs(course_dir: Path, course, assignment: str, students: list[str]) -> dict:
    """The kit's share of an autograde run, measured as its preprocessor spends it: the one-off
    start (snapshot, course, sandbox process started) and the grading of each notebook in the
    warm sandbox, for the first student (who also pays for the sandbox's warm start and the
    reference answers, made once per run) and for the next one."""
    from autograder.grading.submission import grade_exercise
    from autograder.nbgrader.cells import load_notebook, start_sandbox

    started = time.monotonic()
    loaded = {s: {nb.stem: load_notebook(nb) for nb in sorted((course_dir / "submitted" / s / assignment).glob("*.ipynb"))}
              for s in students[:2]}
    sandbox = start_sandbox(course)
    start_s = time.monotonic() - started
    per: dict[str, dict[str, float]] = {}
    with sandbox:
        for student, notebooks in loaded.items():
            for stem, source in notebooks.items():
                t0, c0 = time.monotonic(), _cpu()
                grade_exercise(stem, source, course, sandbox)
                per.setdefault(stem, {})[student] = (time.monotonic() - t0, _cpu() - c0)
    return {"start_s": start_s, "grade": per, "students": list(loaded)}


def _cpu() -> float:
    """CPU seconds of this process (the grader's share: reference, comparisons, diagnosis)."""
    t = os.times()
    return t.user + t.system


def main(argv=None) -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--students", type=int, default=3)
    p.add_argument("--rounds", type=int, default=1, help="autograde both courses this many times (alternating)")
    p.add_argument("--keep", type=Path, help="build the courses here and keep them")
    args = p.parse_args(argv)

    root = args.keep or Path(tempfile.mkdtemp(prefix="attnkit-bench-nbgrader-"))
    root.mkdir(parents=True, exist_ok=True)
    try:
        course = load_course(DEFAULT_COURSE, known_checks=check_ids())
        assignment = course.assignment
        students = [f"student{k:02d}" for k in range(args.students)]
        kit_dir, plain_dir = root / "kit", root / "plain"
        for folder in (kit_dir, plain_dir):
            shutil.rmtree(folder, ignore_errors=True)
        write_course(kit_dir, KIT_ROOT, course)
        write_plain_course(plain_dir, assignment, tuple(course.exercises))
        for folder in (kit_dir, plain_dir):
            nbgrader(folder, "generate_assignment", assignment, "--force")
        per_student = hand_in(kit_dir, assignment, students)
        hand_in(plain_dir, assignment, students)
        notebooks = per_student * len(students)
        print(f"{len(students)} students x {per_student} notebooks; {os.cpu_count()} cores; "
              f"load average {os.getloadavg()[0]:.1f} at the start")

        times: dict[str, list[float]] = {"plain": [], "kit": []}
        for r in range(args.rounds):
            order = (("plain", plain_dir), ("kit", kit_dir)) if r % 2 == 0 else (("kit", kit_dir), ("plain", plain_dir))
            for name, folder in order:
                took = nbgrader(folder, "autograde", assignment, "--force")
                times[name].append(took / notebooks)
                print(f"  round {r + 1}: {name:5s} nbgrader autograde {took:6.1f} s = {took / notebooks:5.2f} s per notebook",
                      flush=True)
        plain, kit = statistics.median(times["plain"]), statistics.median(times["kit"])
        print(f"\nplain nbgrader (assert cells)  {plain:5.2f} s per notebook")
        print(f"kit's course                   {kit:5.2f} s per notebook")
        print(f"ratio kit / plain              {kit / plain:5.2f}x   (target: at most 1.5x)")
        print(f"load average at the end        {os.getloadavg()[0]:.1f}")

        costs = kit_costs(kit_dir, course, assignment, students)
        names = costs["students"]
        print("\nwhere the kit's time goes (measured in-process, as its preprocessor does it; wall s, "
              "grader CPU s in brackets):")
        print(f"  once per autograde run: snapshot + course + sandbox process started   {costs['start_s']:.2f} s")
        print(f"  {'grading':28s} " + "  ".join(f"{n + (' (cold)' if k == 0 else ' (warm)'):>22s}"
                                               for k, n in enumerate(names)))
        for stem, by in costs["grade"].items():
            print(f"  {stem:28s} " + "  ".join(f"{by[n][0]:12.2f} ({by[n][1]:5.2f})" for n in names))
        if len(names) > 1:
            warm = sum(by[names[1]][0] for by in costs["grade"].values()) / len(costs["grade"])
            print(f"  a warm notebook costs the kit {warm:.2f} s on average; the first student also pays for the "
                  f"sandbox's warm start and the reference answers (made once per run)")
        print("  the rest of each notebook's time is nbgrader's own: a kernel per notebook, the notebook's "
              "cells, the gradebook")
        return 0
    finally:
        if args.keep is None:
            shutil.rmtree(root, ignore_errors=True)


if __name__ == "__main__":
    sys.exit(main())
