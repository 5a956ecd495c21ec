"""How fast `attnkit grade` grades a class, against nbgrader on the same notebooks.

    python benchmarks/bench_class.py                 # 200 students, then nbgrader on 5 of them
    python benchmarks/bench_class.py --students 60 --nbgrader 3 --jobs 1
    python benchmarks/bench_class.py --no-nbgrader --keep DIR

Builds a synthetic class in a temporary folder: mostly correct submissions (the solutions, the
correct files of tests/corpus/, the demo class's ada, notebooks made from the solutions),
some buggy ones (tests/corpus/<stem>/buggy/), some with files missing, a few untouched stubs,
and a few that hang (an infinite loop in a function, one at import). It grades them with
`autograder.grading.local_grading.grade_class` (what `attnkit grade` runs) under the kit's course.yml with
smaller time limits (`--call-timeout`, `--import-timeout`: a hang costs its timeout, and the
kit's default of 10 s would measure the timeout, not the grader), and prints the time per
submission, the throughput and the peak memory of the grader and all its sandbox processes.

Then it grades the first `--nbgrader` students' notebooks with `nbgrader autograde` (a
minimal nbgrader course made here: each exercise's solution notebook with one autograded
test cell of plain asserts per exercise) and prints nbgrader's time per submission and the
ratio. Writes the figures to benchmarks/results/class-<students>.json (`-cold` with
--cold-reference). This is a benchmark, not a test: nothing is asserted.
"""

from __future__ import annotations

import argparse
import atexit
import json
import os
import random
import resource
import shutil
import statistics
import subprocess
import sys
import tempfile
import textwrap
import threading
import time
from pathlib import Path

import nbformat
import yaml

KIT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(KIT))

from benchmarks import record  # noqa: E402
from autograder.checks import check_ids  # noqa: E402
from autograder.checks.reference_cache import cache_folder  # noqa: E402
from autograder.grading.local_grading import lanes_for  # noqa: E402
from autograder.grading.local_grading import grade_class  # noqa: E402
from autograder.config import load_course  # noqa: E402
from autograder.checks.contract import STEMS  # noqa: E402
from benchmarks.plain_nbgrader import (ONE_NOTEBOOK, SIBLING_IMPORT, solution_notebook,  # noqa: E402
                                       write_plain_course)

SOLUTIONS = KIT / "solutions"
CORPUS = KIT / "tests" / "corpus"
DEMO = KIT / "demo" / "class"
ASSIGNMENT = "self_attention"

HANG_IN_CALL = '''
import numpy as np


def softmax(x, axis=-1):
    while True:
        pass


def scaled_dot_product_attention(Q, K, V, mask=None):
    while True:
        pass
'''
HANG_AT_IMPORT = "import time\nwhile True:\n    time.sleep(0.01)\n"


# ====================================================================== the synthetic class

def bench_course(root: Path, call_timeout: float, import_timeout: float):
    """The kit's course.yml with smaller time limits (a hang costs its timeout, not the kit's 10 s),
    written to root/course.yml and read as `attnkit grade` reads it."""
    data = yaml.safe_load((KIT / "course.yml").read_text(encoding="utf-8"))
    data["limits"].update(call_timeout=call_timeout, import_timeout=import_timeout)
    course_path = root / "course.yml"
    course_path.write_text(yaml.safe_dump(data, sort_keys=False), encoding="utf-8")
    return load_course(course_path, known_checks=check_ids())


def _choices(stem: str, kind: str) -> list[Path]:
    folder = CORPUS / stem / kind
    return sorted(p for p in folder.glob("*") if p.suffix in (".py", ".ipynb")) if folder.is_dir() else []



def build_class(root: Path, n: int, seed: int = 0) -> dict[str, str]:
    """Writes n student folders under root; returns student -> kind."""
    rng = random.Random(seed)
    kinds: dict[str, str] = {}
    correct = {stem: [SOLUTIONS / f"{stem}.py", DEMO / "ada" / f"{stem}.py", *_choices(stem, "correct")]
               for stem in STEMS}
    buggy = {stem: _choices(stem, "buggy") for stem in STEMS}
    notebooks = {stem: solution_notebook(stem) for stem in STEMS}
    plan = (["correct"] * 45 + ["notebook"] * 10 + ["buggy"] * 30 + ["partial"] * 8 + ["stubs"] * 3
            + ["demo"] * 2 + ["hangs"] * 2)
    for i in range(n):
        kind = "hangs" if i % 50 == 7 else plan[rng.randrange(len(plan))]
        if kind == "hangs" and i % 50 != 7:
            kind = "correct"
        name = f"s{i:03d}_{kind}"
        folder = root / name
        folder.mkdir(parents=True)
        if kind == "demo":
            src = DEMO / rng.choice(sorted(p.name for p in DEMO.iterdir()))
            for f in src.iterdir():
                shutil.copy(f, folder / f.name)
        elif kind == "stubs":
            suffix = rng.choice([".py", ".ipynb"])
            for stem in STEMS:
                shutil.copy(KIT / "exercises" / f"{stem}{suffix}", folder / f"{stem}{suffix}")
        elif kind == "hangs":
            for stem in STEMS:
                shutil.copy(SOLUTIONS / f"{stem}.py", folder / f"{stem}.py")
            if (i // 50) % 2 == 0:
                (folder / "attention.py").write_text(HANG_IN_CALL, encoding="utf-8")
            else:
                (folder / "causal_mask.py").write_text(HANG_AT_IMPORT, encoding="utf-8")
        else:
            stems = list(STEMS)
            if kind == "partial":
                stems = rng.sample(stems, rng.randint(1, 4))
            wrong = set(rng.sample(stems, rng.randint(1, 2))) if kind == "buggy" else set()
            for stem in stems:
                if kind == "notebook":
                    (folder / f"{stem}.ipynb").write_text(notebooks[stem], encoding="utf-8")
                    continue
                pool = buggy[stem] if stem in wrong and buggy[stem] else correct[stem]
                src = rng.choice(pool)
                shutil.copy(src, folder / f"{stem}{src.suffix}")
        make_unique(folder)
        kinds[name] = kind
    return kinds


def make_unique(folder: Path) -> None:
    """A comment naming the student at the end of each file (a notebook's last code cell): a real
    class's files differ, so no cache keyed by a file's text may gain from copies of one file."""
    tag = f"\n# {folder.name}\n"
    for f in folder.iterdir():
        if f.suffix == ".py":
            f.write_text(f.read_text(encoding="utf-8") + tag, encoding="utf-8")
        elif f.suffix == ".ipynb":
            nb = json.loads(f.read_text(encoding="utf-8"))
            code = [c for c in nb.get("cells", []) if c.get("cell_type") == "code"]
            if code:
                source = code[-1].get("source", "")
                code[-1]["source"] = ("".join(source) if isinstance(source, list) else source) + tag
                f.write_text(json.dumps(nb), encoding="utf-8")


# ====================================================================== memory of a process tree

class TreeMemory:
    """Samples the memory of this process and all its descendants: RSS (cheap, /proc/<pid>/statm)
    every `interval` seconds, PSS (shared pages counted once; /proc/<pid>/smaps_rollup walks the
    page tables, so it costs CPU) every tenth sample. Keeps the peaks."""

    def __init__(self, interval: float = 0.25):
        self.interval = interval
        self.peak_rss = self.peak_pss = 0
        self.peak_processes = 0
        self._page_kb = os.sysconf("SC_PAGE_SIZE") // 1024
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, daemon=True)

    def __enter__(self):
        self._thread.start()
        return self

    def __exit__(self, *exc):
        self._stop.set()
        self._thread.join()

    def _run(self):
        n = 0
        while not self._stop.is_set():
            pids = _tree(os.getpid())
            rss = sum(_statm_rss(pid) for pid in pids) * self._page_kb
            self.peak_rss = max(self.peak_rss, rss)
            if n % 10 == 0:
                self.peak_pss = max(self.peak_pss, sum(_kb(f"/proc/{pid}/smaps_rollup", "Pss:") for pid in pids))
            self.peak_processes = max(self.peak_processes, len(pids))
            n += 1
            self._stop.wait(self.interval)


def _statm_rss(pid: int) -> int:
    try:
        with open(f"/proc/{pid}/statm") as f:
            return int(f.read().split()[1])
    except (OSError, ValueError, IndexError):
        return 0


def _tree(root: int) -> list[int]:
    parents = {}
    for name in os.listdir("/proc"):
        if name.isdigit():
            try:
                stat = Path(f"/proc/{name}/stat").read_bytes()
                parents[int(name)] = int(stat[stat.rfind(b")") + 2:].split()[1])
            except (OSError, IndexError, ValueError):
                pass
    found, frontier = [root], {root}
    while frontier:
        frontier = {pid for pid, ppid in parents.items() if ppid in frontier}
        found += sorted(frontier)
    return found


def _kb(path: str, key: str) -> int:
    try:
        with open(path) as f:
            for line in f:
                if line.startswith(key):
                    return int(line.split()[1])
    except (OSError, ValueError):
        pass
    return 0


# ====================================================================== nbgrader

def run_nbgrader(root: Path, class_dir: Path, students: list[str], timeout: int, *, one: bool = False) -> dict:
    """Makes a minimal nbgrader course, generates the assignment, submits the students'
    notebooks (their .ipynb files, or their .py files as notebooks) and times `nbgrader autograde`.
    `one`: the whole assignment as one notebook (the student's code of each exercise in that
    exercise's first solution cell), else one notebook per exercise."""
    course = root / ("nbgrader_one" if one else "nbgrader_five")
    write_plain_course(course, ASSIGNMENT, STEMS, timeout, one=one)
    env = dict(os.environ, PYTHONWARNINGS="ignore")
    started = time.monotonic()
    gen = subprocess.run(["nbgrader", "generate_assignment", ASSIGNMENT, "--force"], cwd=course, env=env,
                         capture_output=True, text=True)
    generate_s = time.monotonic() - started
    if gen.returncode != 0:
        return {"error": f"nbgrader generate_assignment failed: {gen.stderr[-1500:]}"}
    for student in students:
        target = course / "submitted" / student / ASSIGNMENT
        target.mkdir(parents=True)
        for name in ([ONE_NOTEBOOK] if one else STEMS):
            nb = nbformat.read(course / "source" / ASSIGNMENT / f"{name}.ipynb", as_version=4)
            for stem in STEMS if one else (name,):
                theirs = _student_code(class_dir / student, stem)
                if theirs is None:
                    continue
                if one:
                    theirs = SIBLING_IMPORT.sub(lambda m: "" if (m.group(1) or m.group(2)) in STEMS else m.group(0),
                                                theirs)
                # the student's code in the exercise's solution cell(s): the first one gets it all
                cells = [c for c in nb.cells if c.metadata.get("nbgrader", {}).get("solution")
                         and (not one or c.metadata["nbgrader"]["grade_id"].startswith(f"{stem}__"))]
                for k, cell in enumerate(cells):
                    cell.source = theirs if k == 0 else ""
            nbformat.write(nb, target / f"{name}.ipynb")
        (target / "timestamp.txt").write_text("2026-01-01 00:00:00.000000 UTC")
    started = time.monotonic()
    auto = subprocess.run(["nbgrader", "autograde", ASSIGNMENT, "--force"], cwd=course, env=env,
                          capture_output=True, text=True)
    autograde_s = time.monotonic() - started
    graded = sorted(p.name for p in (course / "autograded").glob("*")) if (course / "autograded").is_dir() else []
    return {"generate_s": generate_s, "autograde_s": autograde_s, "students": len(students),
            "graded": graded, "returncode": auto.returncode, "log_tail": auto.stderr[-800:]}


def _student_code(folder: Path, stem: str) -> str | None:
    from autograder.intake.load import load_stem

    loaded = load_stem(folder, stem)
    return getattr(loaded, "source", None)


# ====================================================================== main

def main(argv=None) -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--students", type=int, default=200)
    p.add_argument("--jobs", type=int, default=0, help="default: as `attnkit grade` (one per core)")
    p.add_argument("--call-timeout", type=float, default=2.0)
    p.add_argument("--import-timeout", type=float, default=3.0)
    p.add_argument("--nbgrader", type=int, default=5, help="students graded by nbgrader too (0: none)")
    p.add_argument("--no-nbgrader", action="store_true")
    p.add_argument("--compare-jobs", action="store_true",
                   help="grade the class once more with --jobs 1 and print the speed-up of --jobs N")
    p.add_argument("--memory-interval", type=float, default=0.5,
                   help="seconds between two samples of the memory of the process tree (0: do not sample)")
    p.add_argument("--keep", type=Path, help="build the class and the results here and keep them")
    p.add_argument("--cold-reference", action="store_true",
                   help="an empty cache of reference runs (the first class graded on a machine); default: the "
                        "user's cache as it is (made by any earlier run)")
    args = p.parse_args(argv)
    if args.cold_reference:     # an empty cache of this run's own, removed at its end
        os.environ["ATTNKIT_CACHE_DIR"] = cold_cache = tempfile.mkdtemp(prefix="attnkit-bench-cache-")
        atexit.register(shutil.rmtree, cold_cache, ignore_errors=True)

    root = args.keep or Path(tempfile.mkdtemp(prefix="attnkit-bench-"))
    root.mkdir(parents=True, exist_ok=True)
    try:
        course = bench_course(root, args.call_timeout, args.import_timeout)
        class_dir, out = root / "class", root / "out"
        shutil.rmtree(class_dir, ignore_errors=True)
        shutil.rmtree(out, ignore_errors=True)
        kinds = build_class(class_dir, args.students)
        jobs = lanes_for(args.jobs or None, args.students)     # what `attnkit grade` does without --jobs
        print(f"class: {len(kinds)} students ({', '.join(f'{k} {v}' for k, v in sorted(_count(kinds).items()))})")
        print(f"grading with --jobs {jobs} on {os.cpu_count()} cores; call_timeout {args.call_timeout:g} s, "
              f"import_timeout {args.import_timeout:g} s; load average {os.getloadavg()[0]:.1f}")
        cached = len(list(cache_folder().glob("*.json"))) if cache_folder().is_dir() else 0
        print(f"reference runs cached on disk before grading: {cached} "
              f"({'cold: made by this run' if not cached else 'warm: made by an earlier run'})")

        cpu0 = os.times()
        started = time.monotonic()
        memory = TreeMemory(args.memory_interval)
        checked = []     # the preflight: graded in this run (its seconds are in the wall time), or passed before
        with memory if args.memory_interval > 0 else _nothing():
            results = grade_class(class_dir, out, course, jobs=jobs, regrade=True, on_preflight=checked.append)
        wall = time.monotonic() - started
        cpu1 = os.times()
        durations = {r.student: r.duration_s for r in results}
        honest = [d for s, d in durations.items() if kinds[s] != "hangs"]
        per_sub = wall / len(results)
        print(f"\nattnkit: {len(results)} submissions in {wall:.1f} s (including starting {jobs} sandboxes)")
        if checked:
            print(f"  {checked[0].describe()}")
        print(f"  wall time per submission     {per_sub * 1000:8.0f} ms   (throughput {len(results) / wall:.1f}/s)")
        print(f"  grading time per submission  mean {statistics.mean(durations.values()) * 1000:.0f} ms, "
              f"median {statistics.median(durations.values()) * 1000:.0f} ms, "
              f"p95 {_pct(list(durations.values()), 95) * 1000:.0f} ms, max {max(durations.values()) * 1000:.0f} ms")
        print(f"  without the hanging ones     mean {statistics.mean(honest) * 1000:.0f} ms "
              f"({len(results) - len(honest)} hang, each costs about one timeout)")
        for kind in sorted(set(kinds.values())):
            ds = [d for s, d in durations.items() if kinds[s] == kind]
            print(f"    {kind:9s} {len(ds):4d}  mean {statistics.mean(ds) * 1000:7.0f} ms")
        user = (cpu1.user - cpu0.user) + (cpu1.children_user - cpu0.children_user)
        grader_cpu = (cpu1.user - cpu0.user) + (cpu1.system - cpu0.system)
        print(f"  grader process CPU           {grader_cpu:.1f} s ({grader_cpu / wall * 100:.0f}% of one core)")
        print(f"  peak memory, grader + sandboxes: RSS {memory.peak_rss / 1024:.0f} MB, "
              f"PSS {memory.peak_pss / 1024:.0f} MB, {memory.peak_processes} processes at most")
        self_rss = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
        child_rss = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss / 1024
        print(f"  ru_maxrss: grader {self_rss:.0f} MB, largest waited-for child (a zygote or a zygote template) {child_rss:.0f} MB")
        del user
        figures = {"students": len(results), "kinds": _count(kinds), "jobs": jobs, "cores": os.cpu_count(),
                   "call_timeout_s": args.call_timeout, "import_timeout_s": args.import_timeout,
                   "reference_cache": "cold" if args.cold_reference else ("warm" if cached else "empty, made by this run"),
                   "preflight": checked[0].describe() if checked else "passed before",
                   "wall_s": wall, "per_submission_s": per_sub,
                   "grading_s": {"mean": statistics.mean(durations.values()),
                                 "median": statistics.median(durations.values()),
                                 "p95": _pct(list(durations.values()), 95), "max": max(durations.values())},
                   "grader_cpu_s": grader_cpu, "grader_peak_rss_mb": self_rss,
                   "tree_peak_rss_mb": memory.peak_rss / 1024, "tree_peak_pss_mb": memory.peak_pss / 1024}
        headline = [record.figure(f"`attnkit grade`, wall time per submission, {len(results)} students",
                                  per_sub, "s")]

        if args.compare_jobs and jobs > 1:
            started = time.monotonic()
            grade_class(class_dir, root / "out-1", course, jobs=1, regrade=True)
            wall1 = time.monotonic() - started
            print(f"\n--jobs 1: {wall1:.1f} s ({wall1 / len(results) * 1000:.0f} ms per submission); "
                  f"--jobs {jobs} is {wall1 / wall:.2f}x faster")
            figures["jobs_1_wall_s"] = wall1

        if args.nbgrader and not args.no_nbgrader and shutil.which("nbgrader") is None:
            print("\nnbgrader: not installed; skipped")
        elif args.nbgrader and not args.no_nbgrader:
            # from the end of the class: the first students of each worker also pay for starting it
            sample = [r.student for r in results if kinds[r.student] in ("correct", "notebook", "buggy")][-args.nbgrader:]
            ours = {s: durations[s] for s in sample}
            print(f"\nplain nbgrader autograde on {len(sample)} of them, in the same run:", flush=True)
            for one, what in ((True, "ONE notebook holding every exercise (the headline anchor)"),
                              (False, f"{len(STEMS)} notebooks, one per exercise")):
                nb = run_nbgrader(root, class_dir, sample, timeout=int(max(30, args.call_timeout * 10)), one=one)
                if "error" in nb:
                    print(f"  {what}: {nb['error']}")
                    return 1
                nb_per = nb["autograde_s"] / nb["students"]
                anchor = "plain nbgrader, one notebook" if one else f"plain nbgrader, {len(STEMS)} notebooks"
                figures["one_notebook" if one else "five_notebooks"] = {
                    "students": nb["students"], "autograde_s": nb["autograde_s"], "per_submission_s": nb_per,
                    "generate_s": nb["generate_s"], "returncode": nb["returncode"], "graded": len(nb["graded"])}
                headline.append(record.figure(
                    f"`attnkit grade` per submission, {len(results)} students", per_sub, "s", anchor=anchor,
                    anchor_value=nb_per, ratio=nb_per / per_sub, ratio_is="anchor / value",
                    target="at least 30x against one notebook" if one else None))
                print(f"  {what}:\n    nbgrader autograde {nb['autograde_s']:.1f} s for {nb['students']} submissions "
                      f"(exit code {nb['returncode']}, graded {len(nb['graded'])}); generate_assignment "
                      f"{nb['generate_s']:.1f} s")
                print(f"    nbgrader per submission    {nb_per * 1000:8.0f} ms;  attnkit {per_sub * 1000:.0f} ms wall "
                      f"in the class run  ->  {nb_per / per_sub:.1f}x")
                if nb["returncode"] != 0:
                    print(f"    nbgrader's log ends with:\n{textwrap.indent(nb['log_tail'], '      ')}")
            print(f"  attnkit grading these {len(sample)}: {statistics.mean(ours.values()) * 1000:.0f} ms each "
                  f"(target: at least 30x against the one-notebook form)")
            figures["nbgrader_sample_attnkit_grading_s"] = statistics.mean(ours.values())
        if len(headline) > 1:
            headline.pop(0)         # the ratios hold the figure
        record.write(f"class-{args.students}{'-cold' if args.cold_reference else ''}", figures, headline=headline)
        return 0
    finally:
        if args.keep is None:
            shutil.rmtree(root, ignore_errors=True)


class _nothing:
    def __enter__(self):
        return self

    def __exit__(self, *exc):
        return None


def _count(kinds: dict[str, str]) -> dict[str, int]:
    out: dict[str, int] = {}
    for kind in kinds.values():
        out[kind] = out.get(kind, 0) + 1
    return out


def _pct(values: list[float], q: float) -> float:
    values = sorted(values)
    return values[min(len(values) - 1, int(round(q / 100 * (len(values) - 1))))]


if __name__ == "__main__":
    sys.exit(main())
