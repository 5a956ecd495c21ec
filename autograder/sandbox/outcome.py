"""The sandbox's types: typed outcomes and the isolation that holds out (the limits in are the
course's, autograder/config/limits.py, handed to the sandbox as they are).

`CallOutcome.status` says what happened, `reason` why (a constant below), `error` where (an
`ErrorInfo` built in the child from the traceback, checked again here); `message` is the
human sentence made from them. Callers decide on the typed fields, never on the English.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

STATUSES = ("ok", "missing", "raised", "timeout", "crashed", "bad_return", "not_run")


class Reason:
    """`CallOutcome.reason` values."""
    CPU = "cpu"            # timeout: the call used its CPU time
    WALL = "wall"          # timeout: no progress (sleeping, blocked) for the call's time
    BUDGET = "budget"      # timeout: the submission's wall budget is spent
    MEMORY = "memory"      # crashed / not_run: the memory limit
    SIGNAL = "signal"      # crashed: killed by a signal
    EXIT = "exit"          # crashed: the process exited (os._exit...)
    SYNTAX = "syntax"      # not_run: the source does not compile
    RAISED = "raised"      # not_run: the module raised at import
    TIMEOUT = "timeout"    # not_run: the import did not finish
    CRASHED = "crashed"    # not_run: the process died while importing
    SANDBOX = "sandbox"    # not_run / crashed: the sandbox itself failed (not the student's fault)
    REFUSED = "refused"    # crashed / not_run: a provided call above the grader's bounds (sandbox/provided.py)


class SandboxError(RuntimeError):
    """The sandbox itself cannot work (the zygote does not start, isolation is required but
    missing). Not the student's fault."""


@dataclass(frozen=True)
class ErrorInfo:
    """An exception raised by student code, located in the student's file."""
    type: str                         # the exception class name: "ValueError"
    text: str = ""                    # str(err), capped
    line: int | None = None           # innermost line in the student's file (in its cell, for notebooks)
    function: str | None = None       # the function of that frame ("<module>" at top level)
    cell: int | None = None           # notebook cell number (1-based), when the source came as cells
    operation: str = ""               # innermost frame overall: "numpy.matmul", or the student's source line

    @classmethod
    def from_json(cls, data: Any) -> "ErrorInfo | None":
        if type(data) is not dict or type(data.get("type")) is not str:
            return None

        def text(key: str, limit: int) -> str:
            value = data.get(key)
            return _printable(value)[:limit] if type(value) is str else ""

        def number(key: str) -> int | None:
            value = data.get(key)
            return value if type(value) is int and 0 <= value < 10 ** 9 else None

        function = text("function", 200) or None
        return cls(type=text("type", 100), text=text("text", 500), line=number("line"), function=function,
                   cell=number("cell"), operation=text("operation", 300))


@dataclass(frozen=True)
class SkippedCell:
    """A notebook cell that raised while the module was executed; the import went on without it."""
    index: int                        # the cell's number in the notebook (1-based)
    first_line: str
    error: ErrorInfo | None
    solution: bool = False            # a solution cell (the student's answer), not a scratch cell


@dataclass
class CallOutcome:
    """What one call into a child came to: its status, the value it returned, and why not."""
    status: str                       # one of STATUSES
    value: Any = None                 # plain data of the declared kind when status == "ok"
    dtype: Any = None                 # what the student returned: "float32", "list"... (a list for tuples)
    message: str = ""                 # a sentence; for bad_return what the call did, read after its name
                                      # ("returned None, expected an array", "gave an answer that ...")
    output: str = ""                  # the last ~2 KB the student printed during the call
    reason: str = ""                  # a Reason constant (empty for ok, missing, bad_return)
    error: ErrorInfo | None = None    # for raised (and not_run after an exception at import)
    skipped: tuple[SkippedCell, ...] = ()   # import outcomes of notebooks: cells that raised

    @property
    def ok(self) -> bool:
        return self.status == "ok"


@dataclass(frozen=True)
class Isolation:
    """Which layers of the jail hold for this sandbox's children (docs/security.md)."""
    user_namespace: bool = False      # children are uid 0 of their own user namespace, nobody outside
    mount_namespace: bool = False     # a new root: the kit, the class folder, OUT and homes are not in view
    pid_namespace: bool = False       # each child is pid 1 of its own namespace; daemons die with it
    ipc_namespace: bool = False       # SysV and POSIX shared memory die with the child
    network: bool = False             # no network (an empty network namespace)
    private_uid: bool = False         # as root: an unprivileged uid outside
    not_dumpable: bool = False        # the zygote's memory cannot be read through /proc or ptrace
    seccomp: bool = False             # a system-call filter (no ptrace, keyrings, namespaces, bpf, io_uring...)
    cgroups: str = ""                 # "v1" / "v2": memory and process count of a child's processes together
    why: tuple[str, ...] = ()         # what failed, in words, for the layers that do not hold

    @property
    def full(self) -> bool:
        return self.user_namespace and self.mount_namespace and self.pid_namespace and self.not_dumpable

    def describe(self) -> str:
        held = [name for name, on in (("user namespace", self.user_namespace), ("mount namespace",
                self.mount_namespace), ("PID namespace", self.pid_namespace), ("IPC namespace",
                self.ipc_namespace), ("no network", self.network), ("private uid", self.private_uid),
                ("not dumpable", self.not_dumpable), ("seccomp", self.seccomp),
                (f"cgroups {self.cgroups}", bool(self.cgroups))) if on]
        text = "isolation: " + (", ".join(held) or "none")
        return text + (f" (missing: {'; '.join(self.why)})" if self.why else "")


@dataclass
class Budget:
    """The time one submission's children may take, shared by all its calls (see Sandbox.budget):
    the wall time the grader spent waiting for them, and nothing else (exchange.Deadline)."""
    seconds: float
    used: float = 0.0        # s charged so far
    stalled: float = 0.0     # s the grader itself stood still meanwhile (not charged)
    spent: bool = False
    notes: list[str] = field(default_factory=list)


def _printable(text: str) -> str:
    return "".join(ch if ch.isprintable() or ch in "\n\t" else "?" for ch in text[:4000])
