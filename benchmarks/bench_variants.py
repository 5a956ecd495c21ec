"""What per-student variants cost: a class graded with variants on against off, and drawing and
vetting 1,000 variants.

    python benchmarks/bench_variants.py                       # 30 students, 2 rounds, one job
    python benchmarks/bench_variants.py --students 60 --rounds 3 --jobs 2

The class: every student hands in the kit's solutions for the code exercises and a correct hand
computation. Variants off: the course's numbers (solutions/hand_computation.py) for everyone.
Variants on: each student's own exercise file (their numbers, autograder/variants/handout.py) with
their own key typed in, graded against their variant (their seed's inputs for every random check,
their numbers for the hand computation; each student's reference answers are made anew, which is
the cost measured). Both runs grade with `grade_class` (what `attnkit grade` runs) without the
preflight, each round in the other order (off / on, then on / off), and print seconds per submission and the ratio on / off.
Nothing is asserted: the targets (ratio <= 1.2, 1,000 draws < 1 s) are printed beside the figures,
which are written to benchmarks/results/variants.json.
"""

from __future__ import annotations

import argparse
import dataclasses
import os
import re
import shutil
import statistics
import sys
import tempfile
import time
from pathlib import Path

KIT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(KIT))

from benchmarks import record  # noqa: E402
from autograder.checks import check_ids  # noqa: E402
from autograder.grading.local_grading import grade_class  # noqa: E402
from autograder.config import load_course  # noqa: E402
from autograder.variants import variant_for  # noqa: E402
from autograder.variants.draw import draw  # noqa: E402
from autograder.variants.handout import with_numbers  # noqa: E402
from autograder.variants.keys import answer_key  # noqa: E402

SOLUTIONS = KIT / "solutions"
HAND = "hand_computation"


def time_draws(n: int) -> tuple[float, float]:
    """(wall seconds, CPU seconds) to draw and vet `n` variants of new students (the draw's cache
    does not help). On a shared machine the CPU seconds are the figure that does not move with load."""
    draw("warm-up", "warm-up", "", 1, True, True, 0.006)      # imports, numpy's first calls
    started, cpu = time.perf_counter(), time.process_time()
    for i in range(n):
        draw("bench-variants", f"student-{i}", "", 1, True, True, 0.006)
    return time.perf_counter() - started, time.process_time() - cpu


def write_class(root: Path, course, students: int, varied: bool) -> Path:
    for i in range(students):
        folder = root / f"student{i:03d}"
        folder.mkdir(parents=True)
        for path in SOLUTIONS.glob("*.py"):
            if path.stem != HAND:
                shutil.copy(path, folder / path.name)
        if not varied:
            shutil.copy(SOLUTIONS / f"{HAND}.py", folder / f"{HAND}.py")
            continue
        variant = variant_for(course, folder.name)
        text = with_numbers(KIT / "exercises" / f"{HAND}.py", variant).decode()
        for name, value in answer_key(variant).items():
            text = re.sub(rf"^{name} = None.*$", f"{name} = {value.round(4).tolist()}", text, flags=re.M)
        (folder / f"{HAND}.py").write_text(text, encoding="utf-8")
    return root


def grade_once(class_dir: Path, course, jobs: int) -> tuple[float, float, float]:
    """(seconds per submission, the grader process's CPU seconds per submission (its sandbox
    children not counted: they run the same student code either way), the mean score as a
    fraction of full marks)."""
    out = class_dir.parent / f"{class_dir.name}-out"
    shutil.rmtree(out, ignore_errors=True)
    started, cpu = time.perf_counter(), time.process_time()
    results = grade_class(class_dir, out, course, jobs=jobs, regrade=True, preflight=False)
    elapsed, cpu = time.perf_counter() - started, time.process_time() - cpu
    scores = [results[i].score / results[i].max_score for i in range(len(results))]
    return elapsed / len(results), cpu / len(results), sum(scores) / len(scores)


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--students", type=int, default=30)
    p.add_argument("--rounds", type=int, default=2)
    p.add_argument("--jobs", type=int, default=1)
    p.add_argument("--draws", type=int, default=1000)
    args = p.parse_args()

    seconds, cpu = time_draws(args.draws)
    print(f"drawing and vetting {args.draws} variants: {seconds:.3f} s wall, {cpu:.3f} s CPU "
          f"({1000 * seconds / args.draws:.2f} ms each; target < 1 s for 1,000; load average {os.getloadavg()[0]:.1f})")

    off = load_course(KIT / "course.yml", known_checks=check_ids())
    on = dataclasses.replace(off, variants=dataclasses.replace(off.variants, enabled=True))
    times: dict[str, list[float]] = {"off": [], "on": []}
    grader_cpu: dict[str, list[float]] = {"off": [], "on": []}
    with tempfile.TemporaryDirectory(prefix="attnkit-bench-variants-") as tmp:
        classes = {"off": write_class(Path(tmp) / "off", off, args.students, False),
                   "on": write_class(Path(tmp) / "on", on, args.students, True)}
        for n in range(args.rounds):
            order = (("off", off), ("on", on)) if n % 2 == 0 else (("on", on), ("off", off))   # no order bias
            for mode, course in order:
                per, cpu, score = grade_once(classes[mode], course, args.jobs)
                times[mode].append(per)
                grader_cpu[mode].append(cpu)
                print(f"  variants {mode:3s}: {per:.3f} s per submission, the grader's own CPU {cpu:.3f} s "
                      f"(mean score {score:.3f} of full marks)")
    best_off, best_on = min(times["off"]), min(times["on"])
    mid_off, mid_on = statistics.median(times["off"]), statistics.median(times["on"])
    load = os.getloadavg()[0]
    print(f"grading {args.students} students, --jobs {args.jobs}: variants off {best_off:.3f} s, on {best_on:.3f} s "
          f"per submission (best of {args.rounds}): ratio on / off {best_on / best_off:.2f}x; medians "
          f"{mid_off:.3f} s and {mid_on:.3f} s: {mid_on / mid_off:.2f}x (target <= 1.2x; load average {load:.1f})")
    extra = statistics.median(grader_cpu["on"]) - statistics.median(grader_cpu["off"])
    print(f"the grader's own CPU per submission (medians): off {statistics.median(grader_cpu['off']):.3f} s, "
          f"on {statistics.median(grader_cpu['on']):.3f} s: variants add {extra:+.3f} s")
    record.write("variants", {
        "students": args.students, "rounds": args.rounds, "jobs": args.jobs,
        "draws": {"n": args.draws, "wall_s": seconds, "cpu_s": cpu},
        "per_submission_s": times, "grader_cpu_per_submission_s": grader_cpu},
        headline=[record.figure("a class with variants on, per submission (median)", mid_on, "s",
                                anchor="variants off", anchor_value=mid_off, ratio=mid_on / mid_off,
                                ratio_is="value / anchor", target="at most 1.2x"),
                  record.figure(f"drawing and vetting {args.draws:,} variants", seconds, "s", target="under 1 s")])


if __name__ == "__main__":
    main()
