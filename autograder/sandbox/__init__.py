"""Runs one stem of a submission in a jailed child forked from a warm zygote.

See docs/architecture.md ("The sandbox protocol") and docs/security.md. Modules, one job each:
client (Sandbox), session (Session), outcome (types), children (one exchange with a child),
zygote_process (the zygote as a process), reaper (cgroups, killing), validate (values and
figures from a child); inside the zygote: zygote, jail, kernel, child, guard, errors, convert;
protocol on both sides.
"""

from autograder.sandbox.outcome import (STATUSES, CallOutcome, ErrorInfo, Isolation, Limits, Reason, SandboxError,
                                        SkippedCell)
from autograder.sandbox.protocol import TensorArg
from autograder.sandbox.runner import Sandbox, Session, tensor

__all__ = ["CallOutcome", "ErrorInfo", "Isolation", "Limits", "Reason", "Sandbox", "SandboxError", "Session",
           "SkippedCell", "STATUSES", "TensorArg", "tensor"]
