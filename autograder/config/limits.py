"""course.yml's `limits:`, the one type the sandbox takes as it is (autograder/sandbox/)."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Annotated

from autograder.config.constraints import Constraints


@dataclass(frozen=True)
class IntakeLimits:
    """What reading one student's submission may use in all (course.yml `limits.intake`), every
    child of the parse helper together (autograder/intake/budget.py counts it)."""
    __pydantic_config__ = {"extra": "forbid"}     # a misspelt key in course.yml is an error

    cpu_seconds: Annotated[float, Constraints(ge=1, le=3600)] = 30.0     # every child of one submission together
    item_cpu_seconds: Annotated[int, Constraints(ge=1, le=600)] = 10     # one archive, notebook or file
    memory_mb: Annotated[int, Constraints(ge=64, le=1 << 16)] = 256      # each child, above what it maps at its start
    staged_mb: Annotated[int, Constraints(ge=1, le=1 << 16)] = 64        # bytes copied or unpacked (sparse files: their size)
    files: Annotated[int, Constraints(ge=1, le=1_000_000)] = 1_000       # files staged
    entries: Annotated[int, Constraints(ge=1, le=1_000_000)] = 10_000    # folder entries and archive members looked at
    archives: Annotated[int, Constraints(ge=1, le=1_000)] = 8            # archives opened
    notebook_kb: Annotated[int, Constraints(ge=1, le=1 << 20)] = 4_096   # notebooks' code, their cells joined

    @property
    def staged_bytes(self) -> int:
        return self.staged_mb * 1024 * 1024


@dataclass(frozen=True)
class Limits:
    """What one submission may use: course.yml's `limits:` (validated where the course is read,
    through the constraints below) handed to the sandbox as is -- the one type, with one set of
    defaults, on every path (check, grade, Dask)."""

    __pydantic_config__ = {"extra": "forbid"}     # a misspelt key in course.yml is an error

    call_timeout: Annotated[float, Constraints(gt=0, le=3600)] = 10.0      # s of CPU time per call (docs/security.md)
    import_timeout: Annotated[float, Constraints(gt=0, le=3600)] = 20.0    # s of CPU time executing the module
    memory_mb: Annotated[int, Constraints(ge=64, le=1 << 20)] = 2048       # each process (RLIMIT_AS); a child's together: 1.25 x + 64
    cpu_seconds: Annotated[int, Constraints(ge=1, le=86400)] = 120         # CPU time per child process (RLIMIT_CPU)
    max_processes: Annotated[int, Constraints(ge=1, le=4096)] = 32         # processes of one child together (pids cgroup / NPROC)
    output_kb: Annotated[int, Constraints(ge=1, le=1 << 20)] = 1024        # what a submission may print (RLIMIT_FSIZE of its capture)
    submission_timeout: Annotated[float, Constraints(gt=0, le=86400)] = 60.0   # s of waiting for one submission's children, all checks
    # The sandbox's own settings: the defaults suit every course.
    max_frame_bytes: Annotated[int, Constraints(ge=1 << 16)] = 64 * 1024 * 1024   # the largest answer accepted from a child
    max_restarts: Annotated[int, Constraints(ge=0)] = 3             # fresh children per session after a timeout or crash
    drop_privileges: bool = True      # as root: the zygote and its children run as a private unprivileged uid
    tmp_mb: Annotated[int, Constraints(ge=1)] = 256                 # the child's private /tmp (a tmpfs; counts against memory_mb)
    wall_factor: Annotated[float, Constraints(ge=1)] = 5.0          # a call busy on a loaded machine is stopped at this many times its limit
    # What the grader may spend reading one submission before any of it runs (its own bytes parsed,
    # listed, staged, unpacked).
    intake: IntakeLimits = field(default_factory=IntakeLimits)

    def __post_init__(self) -> None:
        if isinstance(self.intake, dict):       # as plain data travels (a Dask worker's plugin)
            object.__setattr__(self, "intake", IntakeLimits(**self.intake))

    @property
    def output_bytes(self) -> int:
        return self.output_kb * 1024

    @property
    def group_memory_mb(self) -> int:
        """All processes of one child together (cgroup): a little above the per-process limit,
        so that a single process meets its own limit first (a MemoryError it can name)."""
        return self.memory_mb + self.memory_mb // 4 + 64
