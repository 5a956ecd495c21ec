"""Throughput of `attnkit grade` locally and on a Dask cluster of one and two workers on this
machine, and the cluster's overhead per submission.

    python benchmarks/bench_cluster.py                      # 40 students
    python benchmarks/bench_cluster.py --students 12 --hangs

The class is bench_class.py's synthetic class (correct, notebook, buggy, partial and stub
submissions; `--hangs` keeps its hanging ones, which measure the timeout, not the grader).
It is graded four times, from scratch each time (--regrade): locally with one job and with
two, then with `--scheduler` on a `dask scheduler` with one worker and with two workers (one
thread each), started here on 127.0.0.1. The workers get `--warm-up` seconds after the plugin
is registered (it starts their sandboxes), as a cluster started before a deadline would be. A local run's own sandbox start is in its time. The overhead per
submission is (cluster with one worker - local with one job) / students: packing, the
scheduler's round trip, validating and writing. Grades are compared across the four runs.
Writes the figures to benchmarks/results/cluster.json. This is a benchmark, not a test: nothing
is asserted, and on a shared machine the figures move with the load.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import socket
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import yaml

KIT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(KIT))
sys.path.insert(0, str(KIT / "benchmarks"))

from bench_class import build_class  # noqa: E402

from benchmarks import record  # noqa: E402

from autograder.checks import check_ids  # noqa: E402
from autograder.grading.local_grading import grade_class  # noqa: E402
from autograder.config import load_course  # noqa: E402


def _port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


class LoopbackCluster:
    """`dask scheduler` and `workers` `dask worker` processes (one thread each) on 127.0.0.1."""

    def __init__(self, workers: int, logs: Path, env_extra: dict[str, str] | None = None):
        env = dict(os.environ, PYTHONPATH=os.pathsep.join(p for p in (str(KIT), os.environ.get("PYTHONPATH")) if p),
                   MPLBACKEND="Agg", **(env_extra or {}))
        self.address = f"tcp://127.0.0.1:{_port()}"
        port = self.address.rsplit(":", 1)[1]
        self.procs = [subprocess.Popen([sys.executable, "-m", "distributed.cli.dask_scheduler", "--host", "127.0.0.1",
                                        "--port", port, "--dashboard-address", ":0", "--no-show"],
                                       env=env, stdout=subprocess.DEVNULL, stderr=open(logs / "scheduler.log", "ab"))]
        for i in range(workers):
            self.procs.append(subprocess.Popen(
                [sys.executable, "-m", "distributed.cli.dask_worker", self.address, "--nthreads", "1",
                 "--host", "127.0.0.1", "--no-dashboard", "--local-directory", str(logs / f"w{i}")],
                env=env, stdout=subprocess.DEVNULL, stderr=open(logs / f"worker{i}.log", "ab")))
        from distributed import Client

        deadline = time.monotonic() + 120
        while True:
            try:
                self.client = Client(self.address, timeout=5, set_as_default=False)
                self.client.wait_for_workers(workers, timeout=max(1.0, deadline - time.monotonic()))
                return
            except Exception:  # noqa: BLE001 - not up yet
                if time.monotonic() > deadline:
                    self.close()
                    raise
                time.sleep(1)

    def close(self) -> None:
        client = getattr(self, "client", None)
        if client is not None:
            client.close()
        for p in reversed(self.procs):
            p.terminate()
        for p in self.procs:
            try:
                p.wait(30)
            except subprocess.TimeoutExpired:
                p.kill()


def grades(out: Path) -> str:
    return (out / "grades.csv").read_text(encoding="utf-8")


def grading_seconds(out: Path) -> float:
    """The time spent inside grade_submission (wherever it ran), summed over the class."""
    return sum(json.loads(p.read_text(encoding="utf-8"))["extra_data"]["duration_s"]
               for p in (out / "results").glob("*.json"))


def report(label: str, wall: float, out: Path, n: int) -> float:
    """Prints one run's figures; returns its overhead per submission (s): wall time not spent
    grading, per submission, with the runs' parallelism taken out (jobs or workers)."""
    inside = grading_seconds(out)
    print(f"  {label:24s} {wall:7.1f} s   {n / wall:6.2f} submissions/s   grading {inside / n * 1000:6.0f} ms"
          f"/submission", flush=True)
    return inside


def main(argv=None) -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--students", type=int, default=40)
    p.add_argument("--hangs", action="store_true", help="keep bench_class's hanging submissions")
    p.add_argument("--warm-up", type=float, default=30.0,
                   help="seconds the workers get to warm up before the clock starts (default 30)")
    # The kit's own limits: on a loaded machine a short call_timeout times out honest code, and
    # the runs would differ by load, not by where they ran.
    p.add_argument("--call-timeout", type=float, default=10.0)
    p.add_argument("--import-timeout", type=float, default=20.0)
    args = p.parse_args(argv)

    from autograder.cluster.client import ensure_plugin, grade_class_on_cluster
    from autograder.cluster.worker import SandboxPlugin

    root = Path(tempfile.mkdtemp(prefix="attnkit-bench-cluster-"))
    data = yaml.safe_load((KIT / "course.yml").read_text(encoding="utf-8"))
    data["limits"].update(call_timeout=args.call_timeout, import_timeout=args.import_timeout)
    course_path = root / "course.yml"
    course_path.write_text(yaml.safe_dump(data, sort_keys=False), encoding="utf-8")
    course = load_course(course_path, known_checks=check_ids())
    class_dir = root / "class"
    kinds = build_class(class_dir, args.students)
    if not args.hangs:
        for name, kind in kinds.items():
            if kind == "hangs":
                shutil.rmtree(class_dir / name)
    n = sum(1 for p in class_dir.iterdir() if p.is_dir())
    print(f"class: {n} students, on {os.cpu_count()} cores; call_timeout {args.call_timeout:g} s")

    times: dict[str, float] = {}
    inside: dict[str, float] = {}
    csvs: dict[str, str] = {}
    for jobs in (1, 2):
        label = f"local, --jobs {jobs}"
        out = root / f"local{jobs}"
        started = time.monotonic()
        grade_class(class_dir, out, course, jobs=jobs, regrade=True)
        times[label] = time.monotonic() - started
        csvs[label] = grades(out)
        inside[label] = report(label, times[label], out, n)
    for workers in (1, 2):
        label = f"dask, {workers} worker{'s' if workers > 1 else ''}"
        logs = root / f"logs{workers}"
        logs.mkdir()
        cluster = LoopbackCluster(workers, logs)
        try:
            # Warm up: the plugin starts each worker's sandbox, as it would before a deadline.
            out = root / f"dask{workers}"
            hide = (str(class_dir.resolve()), str(out.resolve()))
            ensure_plugin(cluster.client, SandboxPlugin(course.limits, hide, course.seed))
            time.sleep(args.warm_up)   # the workers start their sandboxes now
            started = time.monotonic()
            grade_class_on_cluster(class_dir, out, course, cluster.client, regrade=True)
            times[label] = time.monotonic() - started
            csvs[label] = grades(out)
        finally:
            cluster.close()
        inside[label] = report(label, times[label], out, n)

    base, one, two = times["local, --jobs 1"], times["dask, 1 worker"], times["dask, 2 workers"]
    print(f"\ncluster overhead per submission (1 worker vs --jobs 1): {(one - base) / n * 1000:+.0f} ms "
          f"({one / base:.2f}x the local time)")
    # With one grading thread, wall time - grading time is what surrounds the grading: for the
    # cluster that is packing, the scheduler's round trips, validating and writing.
    local_rest = (base - inside["local, --jobs 1"]) / n
    dask_rest = (one - inside["dask, 1 worker"]) / n
    print(f"time around the grading per submission: local {local_rest * 1000:.0f} ms, dask {dask_rest * 1000:.0f} ms "
          f"(overhead {(dask_rest - local_rest) * 1000:+.0f} ms; the rest of the difference is grading slower "
          f"on a loaded machine)")
    print(f"two workers vs one: {one / two:.2f}x the throughput; two workers vs local --jobs 2: "
          f"{times['local, --jobs 2'] / two:.2f}x")
    same = len(set(csvs.values())) == 1
    print(f"grades.csv identical in all four runs: {'yes' if same else 'NO'}")
    record.write("cluster", {
        "students": n, "call_timeout_s": args.call_timeout, "warm_up_s": args.warm_up,
        "runs": {label: {"wall_s": times[label], "grading_s": inside[label]} for label in times},
        "overhead_per_submission_s": (one - base) / n, "around_grading_s": {"local": local_rest, "dask": dask_rest},
        "grades_identical": same},
        headline=[record.figure("Dask, 2 workers, a class", two, "s", anchor="local `--jobs 2`",
                                anchor_value=times["local, --jobs 2"], ratio=times["local, --jobs 2"] / two,
                                ratio_is="anchor / value"),
                  record.figure("Dask, 1 worker, per submission", one / n, "s",
                                anchor="local `--jobs 1`, per submission", anchor_value=base / n, ratio=one / base,
                                ratio_is="value / anchor")])
    if same:
        shutil.rmtree(root, ignore_errors=True)
    else:
        print(f"(kept for a look in {root})")
    return 0 if same else 1


if __name__ == "__main__":
    sys.exit(main())
