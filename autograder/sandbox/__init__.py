"""Runs one stem of a submission in a jailed child forked from a warm zygote.

See docs/architecture.md ("The sandbox protocol") and docs/security.md. Modules, one job each:
client (Sandbox), session (Session), outcome (types), children (one exchange with a child),
zygote_process (the zygote as a process), early (zygotes started before the grader's imports),
reaper (cgroups, killing), validate (values and figures from a child); inside the zygote:
zygote, jail, kernel, child, guard, errors, convert; protocol on both sides.

The names below are loaded on first use, so that `autograder.sandbox.early` can start a zygote
before numpy is imported.
"""

import importlib

_WHERE = {
    "CallOutcome": "outcome", "ErrorInfo": "outcome", "Isolation": "outcome", "Limits": "outcome",
    "Reason": "outcome", "SandboxError": "outcome", "SkippedCell": "outcome", "STATUSES": "outcome",
    "TensorArg": "protocol", "Sandbox": "client", "Session": "session",
}

__all__ = sorted(_WHERE)


def __getattr__(name: str):
    if name not in _WHERE:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    value = getattr(importlib.import_module(f"{__name__}.{_WHERE[name]}"), name)
    globals()[name] = value
    return value
