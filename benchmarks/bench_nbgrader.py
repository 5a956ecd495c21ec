"""How fast `nbgrader autograde` grades the kit's generated course, against PLAIN nbgrader.

    python benchmarks/bench_nbgrader.py                  # 3 students, one round
    python benchmarks/bench_nbgrader.py --students 6 --rounds 2 --keep DIR
    python benchmarks/bench_nbgrader.py --kit-kernel     # also the kit's course with a kernel per notebook

In one run, with the real nbgrader:

* the kit's course (`attnkit nbgrader`: nbgrader_config.py with the kit's preprocessors, one
  notebook per exercise, 12 test cells), with N students who handed in the solution notebooks.
  nbgrader starts no kernel for its notebooks (the kit's ExecuteWhereNeeded);
* plain nbgrader, per notebook (benchmarks/plain_nbgrader.py: the same solution notebooks, same
  imports, ordinary ``assert np.allclose(...)`` test cells, one notebook per exercise), same N
  students: a kernel per notebook;
* plain nbgrader, per submission: ONE notebook holding the five exercises with their assert
  cells (the fastest form an instructor without the kit would write: one kernel per student);
* with ``--kit-kernel``, the kit's course again with ``--ExecuteWhereNeeded.always=True`` (a
  kernel per notebook).

All are autograded (rotating which goes first in each round, so that a busy machine hurts
each alike), and it prints the seconds per notebook and per submission of each, the speed-up
of the kit over plain nbgrader per notebook (target: at least 1.5x) and per submission, and
the load average beside them. Then it says where the kit's time goes: its one-off start
(reading the submissions, loading the course, starting the sandbox) and its grading per
notebook, measured by grading the same notebooks in-process the way its preprocessor does.
Writes the figures to benchmarks/results/nbgrader.json. This is a benchmark, not a test: nothing
is asserted.
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

from benchmarks import record  # noqa: E402
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


def autograde_runs(args, root: Path, course, students: list[str]) -> tuple[dict, dict]:
    """Build the courses, hand in, autograde each ``args.rounds`` times; returns the seconds per
    notebook of each run, per form, and the notebooks per submission of each form."""
    assignment = course.assignment
    forms: dict[str, tuple[Path, tuple[str, ...]]] = {
        "kit": (root / "kit", ()),
        "plain": (root / "plain", ()),
        "plain-one": (root / "plain-one", ()),
    }
    if args.kit_kernel:
        forms["kit-kernel"] = (root / "kit", ("--ExecuteWhereNeeded.always=True",))
    for folder, _ in forms.values():
        shutil.rmtree(folder, ignore_errors=True)
    write_course(root / "kit", KIT_ROOT, course)
    write_plain_course(root / "plain", assignment, tuple(course.exercises))
    write_plain_course(root / "plain-one", assignment, tuple(course.exercises), one=True)
    for folder in {folder for folder, _ in forms.values()}:
        nbgrader(folder, "generate_assignment", assignment, "--force")
    per_submission = {name: hand_in(folder, assignment, students) for name, (folder, _) in forms.items()}

    times: dict[str, list[float]] = {name: [] for name in forms}
    names = list(forms)
    for r in range(args.rounds):
        for name in names[r % len(names):] + names[:r % len(names)]:
            folder, extra = forms[name]
            notebooks = per_submission[name] * len(students)
            took = nbgrader(folder, "autograde", assignment, "--force", *extra)
            times[name].append(took / notebooks)
            print(f"  round {r + 1}: {name:10s} nbgrader autograde {took:6.1f} s = {took / notebooks:5.2f} s per "
                  f"notebook ({notebooks} notebooks; load {os.getloadavg()[0]:.1f})", flush=True)
    return times, per_submission


def main(argv=None) -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--students", type=int, default=3)
    p.add_argument("--rounds", type=int, default=1, help="autograde every course this many times (rotating the order)")
    p.add_argument("--kit-kernel", action="store_true",
                   help="also autograde the kit's course with a kernel per notebook (ExecuteWhereNeeded.always)")
    p.add_argument("--keep", type=Path, help="build the courses here and keep them")
    args = p.parse_args(argv)

    root = args.keep or Path(tempfile.mkdtemp(prefix="attnkit-bench-nbgrader-"))
    root.mkdir(parents=True, exist_ok=True)
    try:
        course = load_course(DEFAULT_COURSE, known_checks=check_ids())
        assignment = course.assignment
        students = [f"student{k:02d}" for k in range(args.students)]
        load_start = os.getloadavg()[0]
        print(f"{len(students)} students; {os.cpu_count()} cores; load average {load_start:.1f} at the start")
        times, per_submission = autograde_runs(args, root, course, students)
        load_end = os.getloadavg()[0]
        per_nb = {name: statistics.median(t) for name, t in times.items()}
        per_sub = {name: per_nb[name] * per_submission[name] for name in per_nb}
        kit, plain, one = per_nb["kit"], per_nb["plain"], per_sub["plain-one"]
        n = per_submission["kit"]
        print(f"\nmedian of {args.rounds} round(s); load average {load_start:.1f} at the start, {load_end:.1f} at the end")
        print("per notebook (one notebook per exercise in both):")
        print(f"  plain nbgrader (assert cells, a kernel per notebook)   {plain:5.2f} s")
        print(f"  kit's course (no kernel)                               {kit:5.2f} s")
        if "kit-kernel" in per_nb:
            print(f"  kit's course with a kernel per notebook (always=True)  {per_nb['kit-kernel']:5.2f} s")
        print(f"  speed-up plain / kit                                   {plain / kit:5.2f}x   (target: at least 1.5x)")
        print("per submission:")
        print(f"  plain nbgrader, ONE notebook of the {per_submission['plain']} exercises (assert cells)  {one:5.2f} s")
        print(f"  plain nbgrader, {per_submission['plain']} notebooks                                {per_sub['plain']:5.2f} s")
        print(f"  kit's course, {n} notebooks                                  {per_sub['kit']:5.2f} s")
        print(f"  speed-up plain one-notebook / kit                         {one / per_sub['kit']:5.2f}x")

        costs = kit_costs(root / "kit", course, assignment, students)
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
        print("  the rest of each notebook's time is nbgrader's own (no kernel): the sanitize and autograde "
              "passes, the gradebook, writing the notebook; and the nbgrader process's start, once per run")
        record.write("nbgrader", {
            "students": len(students), "rounds": args.rounds, "notebooks_per_submission": per_submission,
            "per_notebook_s": per_nb, "per_submission_s": per_sub, "runs_per_notebook_s": times,
            "kit_start_s": costs["start_s"],
            "kit_grading_s": {stem: {s: {"wall": w, "cpu": c} for s, (w, c) in by.items()}
                              for stem, by in costs["grade"].items()}},
            headline=[record.figure("`nbgrader autograde` of the kit's course, per notebook", kit, "s",
                                    anchor="plain nbgrader, per notebook", anchor_value=plain, ratio=plain / kit,
                                    ratio_is="anchor / value", target="at least 1.5x"),
                      record.figure("`nbgrader autograde` of the kit's course, per submission", per_sub["kit"], "s",
                                    anchor="plain nbgrader, one notebook", anchor_value=one,
                                    ratio=one / per_sub["kit"], ratio_is="anchor / value")])
        return 0
    finally:
        if args.keep is None:
            shutil.rmtree(root, ignore_errors=True)


if __name__ == "__main__":
    sys.exit(main())
