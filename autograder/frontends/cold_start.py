"""How the `attnkit` command starts cold (autograder/cli.py): what it does so that a student's first answer
comes about when a bare `import numpy` would."""

from __future__ import annotations

import importlib
import os
import threading


def one_blas_thread() -> None:
    """The grader's own arithmetic is on small arrays: one BLAS thread, as in the sandbox's children
    (unless the environment says otherwise). Set before numpy is imported: its OpenBLAS otherwise
    starts a thread per core, which spin for a while after the import on the core the zygote is
    starting on (a cold `attnkit check` of attention 0.03 s slower)."""
    for name in ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS"):
        os.environ.setdefault(name, "1")


def import_beside(*modules: str):
    """Imports `modules`, in order, in a thread started now and joined before the last one's first
    use: while the main thread waits for a child's answers the interpreter is free, so the imports
    cost no wall time. A failed import is left for the main thread's own import to raise."""

    def run() -> None:
        for module in modules:
            try:
                importlib.import_module(module)
            except Exception:  # noqa: BLE001 - the main thread imports it again and says what is wrong
                pass

    thread = threading.Thread(target=run, name="attnkit-import-beside", daemon=True)
    thread.start()
    return thread
