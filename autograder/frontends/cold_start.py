"""How the `attnkit` command starts cold (autograder/cli.py): what it does so that a student's first answer
comes about when a bare `import numpy` would."""

from __future__ import annotations

import os


def one_blas_thread() -> None:
    """The grader's own arithmetic is on small arrays: one BLAS thread, as in the sandbox's children
    (unless the environment says otherwise). Set before numpy is imported: its OpenBLAS otherwise
    starts a thread per core, which spin for a while after the import on the core the zygote is
    starting on (which slows a cold `attnkit check`)."""
    for name in ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS"):
        os.environ.setdefault(name, "1")
