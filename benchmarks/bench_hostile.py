"""The grader's memory with every hostile submission of the kit in the class.

    python benchmarks/bench_hostile.py                    # 4 honest students + tests/hostile/*, --jobs 2
    python benchmarks/bench_hostile.py --honest 10 --jobs 1 --cap-mb 3072
    python benchmarks/bench_hostile.py --no-hostile       # the same honest students alone

Builds a class of honest students (the demo class's ada, the solutions) and one student per
case of tests/hostile/ (the witness hand_computation.py beside the hostile file), grades it
with `grade_class` (what `attnkit grade` runs) with small time limits, and prints the peak
resident memory of the grader, of its zygotes and of the sandbox children (sampled from
/proc), whether the honest students kept full marks, and the report's "hung, crashed or
refused" table. The whole run happens in a subprocess under a memory cap (`--cap-mb`, a
cgroup; RLIMIT_AS where none can be made) so that a bound that does not hold costs the
benchmark, not the machine. Writes the figures to benchmarks/results/hostile.json (from inside
the cap: a run that hit it writes none). A benchmark, not a test: nothing is asserted.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import sys
import tempfile
import time
from pathlib import Path

import yaml

KIT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(KIT))

from benchmarks import record  # noqa: E402
from benchmarks.bench_class import TreeMemory, _kb, _statm_rss, _tree  # noqa: E402

HOSTILE = KIT / "tests" / "hostile"
SOLUTIONS = KIT / "solutions"
DEMO = KIT / "demo" / "class"
CAPPED = "ATTNKIT_BENCH_CAPPED"


class Peaks(TreeMemory):
    """Peak RSS, sampled every `interval` s: this process, its zygotes (its direct children, and
    the zygotes a template forked, the templates counted with them) and everything below them
    (the sandbox children). The children's RSS summed counts the pages they
    share with their zygote once per process (a child is two processes: init, worker);
    their PSS (every fifth sample: it walks the page tables) counts each page once."""

    def __init__(self, interval: float = 0.2):
        super().__init__(interval)
        self.grader, self.zygotes, self.children, self.children_pss = 0, 0, 0, 0

    def _run(self):
        me = os.getpid()
        n = 0
        while not self._stop.is_set():
            tree = _tree(me)
            parents = {pid: _parent(pid) for pid in tree}
            direct = {pid for pid in tree if parents[pid] == me}
            kb = {pid: _statm_rss(pid) * self._page_kb for pid in tree}
            below = [p for p in kb if p != me and p not in direct]
            self.grader = max(self.grader, kb.get(me, 0))
            self.zygotes = max(self.zygotes, sum(kb[p] for p in direct))
            self.children = max(self.children, sum(kb[p] for p in below))
            if n % 5 == 0:
                self.children_pss = max(self.children_pss,
                                        sum(_kb(f"/proc/{p}/smaps_rollup", "Pss:") for p in below))
            n += 1
            self._stop.wait(self.interval)


def _parent(pid: int) -> int:
    try:
        stat = Path(f"/proc/{pid}/stat").read_bytes()
        return int(stat[stat.rfind(b")") + 2:].split()[1])
    except (OSError, IndexError, ValueError):
        return 0


def build_class(class_dir: Path, out: Path, honest: int, cases: list[str]) -> dict[str, str]:
    """student -> "honest" or the hostile case."""
    paths = {"@KIT@": str(KIT), "@CLASS@": str(class_dir), "@OUT@": str(out)}
    kinds = {}
    for i in range(honest):
        source = DEMO / "ada" if i % 2 == 0 else SOLUTIONS
        folder = class_dir / f"honest-{i:02d}"
        folder.mkdir(parents=True)
        for stem in ("hand_computation", "attention", "causal_mask", "scaling", "multihead"):
            shutil.copy(source / f"{stem}.py", folder / f"{stem}.py")
        kinds[folder.name] = "honest"
    for case in cases:
        folder = class_dir / case
        folder.mkdir(parents=True)
        shutil.copy(SOLUTIONS / "hand_computation.py", folder / "hand_computation.py")
        for file in (HOSTILE / case).glob("*.py"):
            text = file.read_text(encoding="utf-8")
            for token, value in paths.items():
                text = text.replace(token, value)
            (folder / file.name).write_text(text, encoding="utf-8")
        kinds[case] = case
    return kinds


def grade(args) -> int:
    from autograder.checks import check_ids
    from autograder.grading.local_grading import grade_class
    from autograder.config import load_course

    root = Path(tempfile.mkdtemp(prefix="attnkit-bench-hostile-"))
    try:
        data = yaml.safe_load((KIT / "course.yml").read_text(encoding="utf-8"))
        data["limits"].update(call_timeout=args.call_timeout, import_timeout=args.import_timeout, memory_mb=1024)
        (root / "course.yml").write_text(yaml.safe_dump(data, sort_keys=False), encoding="utf-8")
        course = load_course(root / "course.yml", known_checks=check_ids())
        class_dir, out = root / "class", root / "out"
        cases = [] if args.no_hostile else args.cases or sorted(p.name for p in HOSTILE.iterdir() if p.is_dir())
        kinds = build_class(class_dir, out, args.honest, cases)
        print(f"class: {len(kinds)} students ({args.honest} honest, {len(kinds) - args.honest} hostile), "
              f"--jobs {args.jobs}, call_timeout {args.call_timeout:g} s, load average {os.getloadavg()[0]:.1f}")
        started = time.monotonic()
        with Peaks() as peaks:
            results = grade_class(class_dir, out, course, jobs=args.jobs, regrade=True)
        took = time.monotonic() - started
        print(f"graded in {took:.1f} s")
        print(f"peak RSS: grader {peaks.grader / 1024:.0f} MB, zygotes {peaks.zygotes / 1024:.0f} MB together (with their templates), "
              f"sandbox children {peaks.children / 1024:.0f} MB together (each in its own cgroup; "
              f"their PSS {peaks.children_pss / 1024:.0f} MB)")
        top = {r.student: (r.score, r.max_score) for r in results}
        kept = [s for s, k in kinds.items() if k == "honest" and top[s][0] == top[s][1]]
        print(f"honest students with full marks: {len(kept)} of {args.honest}")
        trouble = json.loads((out / "summary.json").read_text(encoding="utf-8"))["trouble"]
        print("\nhung, crashed or refused:")
        for t in trouble:
            print(f"  {t['student']:22s} {t['exercise']:16s} {t['kind']:12s} {t['message'][:110]}")
        peak = {"grader_mb": peaks.grader / 1024, "zygotes_mb": peaks.zygotes / 1024,
                "children_mb": peaks.children / 1024, "children_pss_mb": peaks.children_pss / 1024}
        record.write("hostile" if cases else "hostile-honest-only", {
            "honest": args.honest, "hostile": len(kinds) - args.honest, "jobs": args.jobs, "cap_mb": args.cap_mb,
            "graded_s": took, "peak_rss": peak, "honest_full_marks": len(kept),
            "trouble": [{k: t[k] for k in ("student", "exercise", "kind")} for t in trouble]},
            headline=[record.figure(f"the grader's peak RSS, a class with {len(kinds) - args.honest} hostile "
                                    f"submissions", peak["grader_mb"], "MB", target=f"under a {args.cap_mb} MB cap"
                                    ", honest students keep full marks"),
                      record.figure("honest students with full marks", len(kept), f"of {args.honest}")])
    finally:
        shutil.rmtree(root, ignore_errors=True)
    return 0


def main(argv=None) -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--honest", type=int, default=4)
    p.add_argument("--jobs", type=int, default=2)
    p.add_argument("--no-hostile", action="store_true", help="the honest students only, to compare")
    p.add_argument("--cases", nargs="*", help="these cases of tests/hostile/ only (default: all)")
    p.add_argument("--call-timeout", type=float, default=2.0)
    p.add_argument("--import-timeout", type=float, default=3.0)
    p.add_argument("--cap-mb", type=int, default=2048, help="memory cap of the grader and its zygotes together")
    args = p.parse_args(argv)
    if os.environ.get(CAPPED):
        return grade(args)
    from tests.memory_capped import run_capped

    env = dict(os.environ, **{CAPPED: "1"}, PYTHONPATH=os.pathsep.join(filter(None, [str(KIT),
                                                                                    os.environ.get("PYTHONPATH")])))
    run = run_capped([sys.executable, __file__, *(argv if argv is not None else sys.argv[1:])], memory_mb=args.cap_mb,
                     timeout=3600, env=env)
    print(run.stdout, end="")
    print(f"\nthe run: exit code {run.returncode}, under a {args.cap_mb} MB {run.capped_by} cap"
          f"{', which it hit: out of memory' if run.out_of_memory else ''}")
    if run.returncode != 0:
        print(run.stderr[-3000:], file=sys.stderr)
    return run.returncode


if __name__ == "__main__":
    sys.exit(main())
