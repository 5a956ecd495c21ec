"""Runs one stem of a submission in a child process forked from a warm zygote.

See docs/architecture.md, "The sandbox protocol", and runner.py.
"""

from autograder.sandbox.protocol import TensorArg
from autograder.sandbox.runner import STATUSES, CallOutcome, Limits, Sandbox, SandboxError, Session, tensor

__all__ = ["CallOutcome", "Limits", "Sandbox", "SandboxError", "Session", "STATUSES", "TensorArg", "tensor"]
