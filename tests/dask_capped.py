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
