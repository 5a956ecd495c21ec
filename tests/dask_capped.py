"""A loopback Dask cluster whose one worker runs under a memory cap (tests/memory_capped.py): the
red-team tests grade a class on it with `attnkit grade --scheduler` as an instructor would."""

from __future__ import annotations

import contextlib
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

from tests.memory_capped import memory_cap


@contextlib.contextmanager
def capped_worker(folder: Path, env: dict, cap_mb: int, nthreads: int = 1) -> Iterator[tuple[str, object, list]]:
    """(scheduler address, the cap, the processes: the worker last) while the cluster runs."""
    from distributed import Client

    from tests.test_distributed import _free_port

    address = f"tcp://127.0.0.1:{_free_port()}"
    procs = [subprocess.Popen([sys.executable, "-m", "distributed.cli.dask_scheduler", "--host", "127.0.0.1",
                               "--port", address.rsplit(":", 1)[1], "--dashboard-address", ":0", "--no-show"],
                              env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)]
    try:
        with memory_cap(cap_mb) as (cap, enter):
            procs.append(subprocess.Popen(
                [sys.executable, "-m", "distributed.cli.dask_worker", address, "--nthreads", str(nthreads),
                 "--nworkers", "1", "--host", "127.0.0.1", "--no-dashboard", "--local-directory", str(folder / "worker")],
                env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, preexec_fn=enter))
            with Client(address, timeout=60) as client:
                client.wait_for_workers(1, timeout=120)
            yield address, cap, procs
    finally:
        for proc in reversed(procs):
            proc.kill()
            proc.wait(30)


def grade_on_capped_worker(tmp_path: Path, class_dir: Path, course: Path, env: dict, cap_mb: int,
                           timeout: float) -> tuple[subprocess.CompletedProcess, bool, Path]:
    """(the run, whether the worker was killed for memory, the output folder) of `attnkit grade
    --scheduler` on a class, as an instructor runs it, with one capped worker of two threads."""
    import pytest

    out = tmp_path / "out"
    with capped_worker(tmp_path, env, cap_mb, nthreads=2) as (address, cap, _procs):
        try:
            run = subprocess.run([sys.executable, "-m", "autograder.cli", "--course", str(course), "grade",
                                  str(class_dir), "--out", str(out), "--scheduler", address],
                                 capture_output=True, text=True, timeout=timeout, env=env, cwd=str(tmp_path))
        except subprocess.TimeoutExpired:
            pytest.fail(f"`attnkit grade --scheduler` did not finish within {timeout} s")
        return run, cap.out_of_memory(), out
