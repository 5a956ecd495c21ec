"""How fast `attnkit check --watch` re-grades an exercise after a save (warm session).

    python benchmarks/bench_watch.py            # the solutions, 5 saves per exercise

Copies the solutions to a temporary folder, grades them once in a GradingSession (as
`attnkit check --watch` does before it starts watching), then for each exercise changes its
file (a comment appended, so the code is new) and times `Watcher.regrade`: loading the file
and grading it in the warm sandbox, the report included. The file watcher's own latency
(watchfiles, 50 ms debounce) comes on top. Between saves it waits `--pause` (the student's
edit), not timed. Target: under 0.1 s. Besides the wall time, each save's CPU time
(user + system) of the whole process tree: this process, its sandbox processes and theirs, from
one save to the next (the re-grade and whatever ran in the background between).
Writes the figures to benchmarks/results/watch.json. This is a benchmark, not a test: nothing is
asserted.

    python benchmarks/bench_watch.py --handout  # the handout's check.py --watch, a notebook saved

The student's side, without the kit: a handout (`attnkit handout`) whose notebooks hold the
solutions (their .py the untouched stubs). Per exercise, a cold `python check.py STEM` (the
median of --saves runs), then `python check.py --watch STEM`: each save rewrites the notebook as
Jupyter saves it (one cell changed), and the time from the save to the watch's report (its
"--- HH:MM:SS" line, printed once the check is done) is the answer. The watch polls twice a
second, so an answer costs the cold check's time and up to 0.5 s. Target: within 1 s of the cold
check. Writes benchmarks/results/watch-handout.json.
"""

from __future__ import annotations

import argparse
import io
import json
import os
import queue
import resource
import shutil
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path

KIT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(KIT))

from rich.console import Console  # noqa: E402

from benchmarks import record  # noqa: E402
from autograder.checks import check_ids  # noqa: E402
from autograder.config import load_course  # noqa: E402
from autograder.grading.course_session import GradingSession  # noqa: E402
from autograder.frontends.watch import Watcher  # noqa: E402
from autograder.build.exercises import make_solution, to_notebook  # noqa: E402
from autograder.handout.write import write_handout  # noqa: E402


TICK = os.sysconf("SC_CLK_TCK")


def tree_cpu() -> float:
    """CPU seconds (user + system) of this process, its descendants alive now and those reaped."""
    own = [resource.getrusage(who) for who in (resource.RUSAGE_SELF, resource.RUSAGE_CHILDREN)]
    total = sum(used.ru_utime + used.ru_stime for used in own)
    stats: dict[int, list[str]] = {}
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit():
            try:
                text = (entry / "stat").read_text()
            except OSError:
                continue          # gone meanwhile: its time is in its parent's reaped children
            stats[int(entry.name)] = text.rpartition(")")[2].split()
    children: dict[int, list[int]] = {}
    for pid, fields in stats.items():
        children.setdefault(int(fields[1]), []).append(pid)
    pending = list(children.get(os.getpid(), ()))
    while pending:
        pid = pending.pop()
        pending.extend(children.get(pid, ()))
        total += sum(int(ticks) for ticks in stats[pid][11:15]) / TICK   # utime stime cutime cstime
    return total


def main(argv=None) -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--saves", type=int, default=5)
    p.add_argument("--pause", type=float, default=0.3, help="seconds between a re-grade and the next save")
    p.add_argument("--handout", action="store_true", help="the handout's check.py --watch on a notebook save")
    args = p.parse_args(argv)
    course = load_course(known_checks=check_ids())
    if args.handout:
        return handout_watch(course, args.saves, max(args.pause, 1.0))
    folder = Path(tempfile.mkdtemp(prefix="attnkit-bench-watch-"))
    try:
        for path in (KIT / "solutions").glob("*.py"):
            shutil.copy(path, folder)
        print(f"load average {os.getloadavg()[0]:.1f}; {args.saves} saves per exercise")
        medians: dict[str, dict] = {}
        with GradingSession(course).start() as session:
            first = session.grade(folder)
            watcher = Watcher(session, folder, tuple(course.exercises), Console(file=io.StringIO()))
            watcher.first(first.exercises)
            time.sleep(args.pause)
            for stem in course.exercises:
                times, cpu = [], []
                for k in range(args.saves):
                    path = folder / f"{stem}.py"
                    path.write_text(path.read_text() + f"\n# save {k}\n")
                    cpu_before = tree_cpu()
                    started = time.monotonic()
                    watcher.regrade(stem)
                    times.append(time.monotonic() - started)
                    time.sleep(args.pause)
                    cpu.append(tree_cpu() - cpu_before)
                print(f"  {stem:18s} re-grade after a save: median {statistics.median(times):.3f} s, "
                      f"min {min(times):.3f} s, max {max(times):.3f} s; CPU a save {statistics.median(cpu):.3f} s")
                medians[stem] = {"median_s": statistics.median(times), "min_s": min(times), "max_s": max(times),
                                 "median_cpu_s": statistics.median(cpu)}
        slowest = max(medians, key=lambda stem: medians[stem]["median_s"])
        record.write("watch", {"saves": args.saves, "pause_s": args.pause, "exercises": medians},
                     headline=[record.figure(f"`attnkit check --watch`, re-grade after a save ({slowest}, the "
                                             f"slowest exercise; median)", medians[slowest]["median_s"], "s",
                                             target="under 0.1 s")])
        return 0
    finally:
        shutil.rmtree(folder, ignore_errors=True)


def handout_watch(course, saves: int, pause: float) -> int:
    """The handout's check.py: a cold check of each exercise's notebook, and --watch answering a save."""
    folder = Path(tempfile.mkdtemp(prefix="attnkit-bench-watch-handout-")) / "handout"
    env = dict(os.environ, PYTHONUNBUFFERED="1")
    env.pop("PYTHONPATH", None)
    try:
        write_handout(folder, course)
        for stem in course.exercises:
            text = (KIT / "solutions" / f"{stem}.py").read_text(encoding="utf-8")
            (folder / f"{stem}.ipynb").write_text(to_notebook(make_solution(text, f"{stem}.py", stem), stem),
                                                  encoding="utf-8")
        print(f"load average {os.getloadavg()[0]:.1f}; {saves} cold checks and saves per exercise")
        figures: dict[str, dict] = {}
        for stem in course.exercises:
            cold = []
            for _ in range(saves):
                started = time.monotonic()
                subprocess.run([sys.executable, "check.py", stem], cwd=folder, env=env, capture_output=True)
                cold.append(time.monotonic() - started)
            answers = watched_saves(folder, stem, saves, pause, env)
            figures[stem] = {"cold_median_s": statistics.median(cold), "watch_median_s": statistics.median(answers),
                             "watch_max_s": max(answers)}
            print(f"  {stem:18s} cold check {statistics.median(cold):.2f} s; --watch answers a notebook save in "
                  f"{statistics.median(answers):.2f} s (median; max {max(answers):.2f} s)")
        worst = max(figures, key=lambda s: figures[s]["watch_median_s"] - figures[s]["cold_median_s"])
        record.write("watch-handout", {"saves": saves, "pause_s": pause, "exercises": figures}, headline=[
            record.figure(f"check.py --watch, a notebook save answered ({worst}, the farthest from its cold check; "
                          f"median)", figures[worst]["watch_median_s"], "s",
                          anchor=f"a cold `python check.py {worst}`", anchor_value=figures[worst]["cold_median_s"],
                          ratio=figures[worst]["watch_median_s"] / figures[worst]["cold_median_s"],
                          ratio_is="value / anchor", target="within 1 s of the cold check")])
        return 0
    finally:
        shutil.rmtree(folder.parent, ignore_errors=True)


def watched_saves(folder: Path, stem: str, saves: int, pause: float, env: dict) -> list[float]:
    """Seconds from each save of STEM.ipynb to the report of `check.py --watch STEM`."""
    proc = subprocess.Popen([sys.executable, "check.py", "--watch", stem], cwd=folder, env=env, text=True,
                            stdout=subprocess.PIPE, stderr=subprocess.DEVNULL)
    lines: queue.Queue = queue.Queue()

    def read():
        for line in proc.stdout:
            lines.put((time.monotonic(), line))

    threading.Thread(target=read, daemon=True).start()
    try:
        while not lines.get(timeout=600)[1].startswith("watching "):
            pass
        answers = []
        path = folder / f"{stem}.ipynb"
        for k in range(saves):
            time.sleep(pause)                      # the student's edit
            notebook = json.loads(path.read_text(encoding="utf-8"))
            cell = next(c for c in notebook["cells"] if c["cell_type"] == "code")
            cell["source"] = "".join(cell["source"]) + f"\n# save {k}"
            saved = time.monotonic()
            path.write_text(json.dumps(notebook, indent=1) + "\n", encoding="utf-8")
            while True:
                at, line = lines.get(timeout=600)
                if line.startswith("--- "):
                    answers.append(at - saved)
                    break
        return answers
    finally:
        proc.kill()
        proc.wait()


if __name__ == "__main__":
    sys.exit(main())
