"""Runs one stem of a submission in a jailed child forked from a warm zygote.

See docs/architecture.md ("The sandbox protocol") and docs/security.md. Two sides, one job per module.

In the grader (this package): client (Sandbox), zygotes (the warm zygotes it forks from), session
(Session: one stem in one child), answers (what a child's answer or end comes to), outcome (the types;
the limits are the course's, autograder/config/limits.py), literals (a file of literals read, not run), exchange (one request/answer with a child), zygote_process (the zygote as a process),
template_process (the process that imports once and forks each Sandbox's zygote of a kind),
cgroups (a child's processes as one unit,
killing), validate (values and figures from a child), provided (answering a child's calls of the
reference's functions).

Inside the jail (`inside/`, loaded by file path in the zygote, nothing of the kit importable there):
zygote (its script first serves as the template: template), jail, kernel, start, child, guard,
warm_up, import_path; and protocol, the
framing both sides speak (the grader imports it from there). The zygote loads the judge (autograder/judge/:
convert, errors, ipython_shell, notebook, torch_module) from its folder the same way.

The names below are loaded on first use: importing the package imports nothing else.
"""

import importlib

_WHERE = {
    "CallOutcome": "outcome", "ErrorInfo": "outcome", "Isolation": "outcome",
    "Reason": "outcome", "SandboxError": "outcome", "SkippedCell": "outcome", "STATUSES": "outcome",
    "TensorArg": "inside.protocol", "Sandbox": "client", "Session": "session",
    "close_templates": "template_process",
}

__all__ = sorted([*_WHERE, "Limits"])


def __getattr__(name: str):
    if name == "Limits":           # the course's limits, which the sandbox takes as they are
        from autograder.config.limits import Limits

        return Limits
    if name not in _WHERE:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    value = getattr(importlib.import_module(f"{__name__}.{_WHERE[name]}"), name)
    globals()[name] = value
    return value
