"""How many threads a process's arithmetic uses: one, set where every door starts a process; and
how many cores a process may run on, which every pool of lanes or workers is sized from.

The checks' arrays are small: a pool of BLAS or OpenMP threads only costs, and an idle OpenBLAS
thread spins for a while after numpy's import on the core a child (or the zygote) is starting on.
The zygote needs it besides: a process with more than one thread cannot enter a new user namespace
(its jail). The variables are read once, when numpy (or torch) is imported: set them before.
Called by the `attnkit` command for itself, by the sandbox for every zygote it starts (every door
grades through it), and by the handout's check.py for itself and the children it runs.
"""

from __future__ import annotations

import os
from collections.abc import MutableMapping

VARIABLES = ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS", "NUMEXPR_NUM_THREADS",
             "VECLIB_MAXIMUM_THREADS")


def one_thread(env: MutableMapping[str, str] | None = None, *, unless_given: bool = False) -> None:
    """One thread in `env` (this process's environment by default); `unless_given`: a value the
    environment already has is kept (the user's choice for the grader's own arithmetic)."""
    env = os.environ if env is None else env
    for name in VARIABLES:
        if unless_given:
            env.setdefault(name, "1")
        else:
            env[name] = "1"


def usable_cores() -> int:
    """The cores this process may run on (its CPU affinity where the system has one)."""
    try:
        return max(1, len(os.sched_getaffinity(0)))
    except (AttributeError, OSError):      # macOS, Windows
        return max(1, os.cpu_count() or 1)
