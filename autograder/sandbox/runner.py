"""Kept for imports written against the old single-file sandbox: see client.py and outcome.py."""

from autograder.sandbox.client import Sandbox  # noqa: F401
from autograder.sandbox.outcome import STATUSES, CallOutcome, Limits, SandboxError  # noqa: F401
from autograder.sandbox.protocol import TensorArg
from autograder.sandbox.session import Session


def tensor(array, dtype: str | None = None) -> TensorArg:
    """Marks an argument to arrive in the child as a torch tensor (of `dtype`, default: the array's)."""
    return TensorArg(array, dtype)


__all__ = ["CallOutcome", "Limits", "Sandbox", "SandboxError", "Session", "STATUSES", "tensor"]
