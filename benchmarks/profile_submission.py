"""Where the core-seconds of grading one correct submission go (`attnkit grade`'s unit of work).

    python benchmarks/profile_submission.py            # the solutions, 3 repetitions per stage

Each stage runs in a fresh interpreter and is charged its CPU time (that interpreter and
every process under it: the sandbox's zygote and its forked children, counted by a cpuacct
cgroup when one can be made), so the figures are core-seconds, not wall time on a busy machine:

  python + the grader's imports          the grading modules, numpy, pydantic, rich (torch only where needed)
  + the sandbox started                  the zygote's warm start (its own imports)
  + one empty child per exercise         fork + namespace setup + limits, no student code run
  + each exercise graded                 the student's code, the checks' calls, reference, comparisons, diagnosis
  + all five twice                       the extra is what one more correct submission costs a warm worker

Then the grader's own share of grading in a warm sandbox, by function (cProfile), to tell
the scaling experiment's arithmetic (in the child), the reference and the diagnosis apart.
This is a benchmark, not a test: nothing is asserted.
"""

from __future__ import annotations

import argparse
import cProfile
import pstats
import statistics
import subprocess
import sys
from pathlib import Path

KIT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(KIT))

SETUP = f"""
import sys, resource, time, json
sys.path.insert(0, {str(KIT)!r})
from autograder.checks import check_ids
from autograder.config import load_course
from autograder.grading import grade_exercise, limits_for
from autograder.load import load_stem
from autograder.sandbox import Sandbox
course = load_course(known_checks=check_ids())
"""
START = ("sandbox = Sandbox(limits_for(course))\n"
         "with sandbox.session('attention', 'x = 1\\n', 'attention.py') as s:   # waits for the warm start\n"
         "    s.attribute('x', returns='array')\n")
EMPTY = ("for stem in course.exercises:\n"
         "    with sandbox.session(stem, 'x = 1\\n', stem + '.py') as s:\n"
         "        s.attribute('x', returns='array')\n")
GRADE = ("for stem in {stems!r}:\n"
         "    grade_exercise(stem, load_stem(__import__('pathlib').Path({folder!r}), stem), course, sandbox)\n")
END = "sandbox.close() if 'sandbox' in globals() else None\n"


CPUACCT = Path("/sys/fs/cgroup/cpuacct")


def core_seconds(code: str) -> tuple[float, float]:
    """(core-seconds, wall seconds) of running `code` in a fresh interpreter, every descendant
    included. A cpuacct cgroup counts them all (when this process may make one); otherwise
    RUSAGE_CHILDREN counts those that were waited for, which misses processes reaped by others."""
    import os
    import resource
    import time

    group = CPUACCT / f"attnkit-profile-{os.getpid()}"
    try:
        group.mkdir()
    except OSError:
        group = None
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    started = time.monotonic()

    def enter_group():
        if group is not None:
            (group / "cgroup.procs").write_text(str(os.getpid()))

    subprocess.run([sys.executable, "-c", code], check=True, preexec_fn=enter_group)
    wall = time.monotonic() - started
    if group is not None:
        cpu = int((group / "cpuacct.usage").read_text()) / 1e9
        group.rmdir()
        return cpu, wall
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    return (after.ru_utime + after.ru_stime) - (before.ru_utime + before.ru_stime), wall


def median_of(code: str, repeat: int) -> tuple[float, float]:
    runs = [core_seconds(code) for _ in range(repeat)]
    return statistics.median(r[0] for r in runs), statistics.median(r[1] for r in runs)


def grader_profile(folder: Path) -> list[tuple[str, float]]:
    """Cumulative seconds of the grader's main functions while grading `folder` in a warm sandbox."""
    from autograder.checks import check_ids
    from autograder.config import load_course
    from autograder.grading import grade_submission, limits_for
    from autograder.sandbox import Sandbox

    course = load_course(known_checks=check_ids())
    with Sandbox(limits_for(course)) as sandbox:
        grade_submission(folder, course, sandbox)           # warm: zygote up, reference answers cached
        from autograder import grading

        grading._expected.cache_clear()                      # the reference is made once per class run: count it
        prof = cProfile.Profile()
        prof.enable()
        grade_submission(folder, course, sandbox)
        prof.disable()
    stats = pstats.Stats(prof)
    wanted = {"grade_submission": "grading the submission (all)", "_spawn": "sandbox: starting a child",
              "_roundtrip": "sandbox: calls into the children", "_expected": "reference answers",
              "compare": "comparisons", "diagnose": "diagnosis (wrong answers only)",
              "diagnose_error": "diagnosis of errors"}
    found: dict[str, float] = {}
    for (filename, _, name), row in stats.stats.items():
        if name in wanted and "autograder" in filename:
            found[wanted[name]] = found.get(wanted[name], 0.0) + row[3]   # cumulative time
    return sorted(found.items(), key=lambda kv: -kv[1])


def main(argv=None) -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--submission", type=Path, default=KIT / "solutions")
    p.add_argument("--repeat", type=int, default=3)
    args = p.parse_args(argv)
    folder = str(args.submission.resolve())
    from autograder.config import load_course

    stems = tuple(load_course().exercises)
    print(f"one correct submission ({args.submission}), median of {args.repeat} fresh interpreters each\n")
    stages = [("python + the grader's imports", SETUP),
              ("+ the sandbox started, one empty child", SETUP + START + END),
              ("+ one empty child per exercise", SETUP + START + EMPTY + END)]
    stages += [(f"+ grading {stem}", SETUP + START + GRADE.format(stems=(stem,), folder=folder) + END)
               for stem in stems]
    stages.append(("+ grading all five", SETUP + START + GRADE.format(stems=stems, folder=folder) + END))
    # the second grading finds the reference answers made (once per class run, per worker)
    stages.append(("+ grading all five twice", SETUP + START + 2 * GRADE.format(stems=stems, folder=folder) + END))
    base = {}
    print(f"{'stage':45s} {'core-s':>7s} {'extra':>7s} {'wall':>7s}")
    for name, code in stages:
        cpu, wall = median_of(code, args.repeat)
        ref = base.get("start" if name.startswith("+ grading") else "prev", 0.0)
        if name.endswith("twice"):
            ref = base["prev"]
        print(f"{name:45s} {cpu:7.2f} {cpu - ref:+7.2f} {wall:7.2f}")
        if name.startswith("+ the sandbox"):
            base["start"] = cpu
        base["prev"] = cpu
    print("\nthe grader's own time, grading all five in a warm sandbox (cProfile, cumulative s):")
    for label, secs in grader_profile(args.submission):
        print(f"  {label:40s} {secs:6.2f}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
