"""Grader side: what a child's answer, or its end, comes to: an answer frame read against the
declared kind (`read_answer`), an import's outcome (`import_outcome`), the words for a child that
died (`exit_text`, `end_text`) or never started (`not_started`), and a child's text made safe to
show (`clean`). Used by a Session, by the Sandbox and by inert.py for a file it reads instead of
running.
"""

from __future__ import annotations

import signal
from typing import Any

from autograder.sandbox.inside import protocol
from autograder.config.limits import Limits
from autograder.sandbox.outcome import CallOutcome, ErrorInfo, Reason, SkippedCell
from autograder.sandbox.validate import Invalid, validate

MESSAGE_MAX = 2000
EXIT_MEMORY = 113
EXIT_INTERNAL = 114
_SIGNALS = {
    signal.SIGSEGV: "segmentation fault", signal.SIGBUS: "bus error", signal.SIGABRT: "aborted",
    signal.SIGFPE: "floating-point exception", signal.SIGILL: "illegal instruction",
    signal.SIGTERM: "terminated", signal.SIGKILL: "killed; perhaps the machine ran out of memory",
    signal.SIGXFSZ: "wrote a file larger than the output limit",
}
ANSWERED = ("ok", "raised", "missing", "bad_return")    # a child's answers after which it lives on


def read_answer(head: dict, blobs: list, output: str, kind: Any) -> CallOutcome:
    """What a child's answer frame says, validated against the declared kind (a child's, or
    inert.py's for a file it reads instead of running)."""
    status = head.get("status")
    message = clean(head.get("message"))
    if status == "ok":
        try:
            value = protocol.decode(head.get("value"), blobs)
            value, dtype = validate(value, head.get("dtype"), kind)
        except (Invalid, protocol.ProtocolError) as err:
            return CallOutcome("bad_return", message=f"gave an answer that could not be read ({err})", output=output)
        except Exception as err:  # noqa: BLE001
            return CallOutcome("bad_return", message=f"gave an answer that could not be read ({type(err).__name__})",
                               output=output)
        return CallOutcome("ok", value=value, dtype=dtype, output=output)
    if status == "memory":
        return CallOutcome("crashed", reason=Reason.MEMORY, message=message or "exceeded the memory limit",
                           output=output)
    if status == "raised":
        return CallOutcome("raised", reason=Reason.RAISED, message=message, output=output,
                           error=ErrorInfo.from_json(head.get("error")))
    if status in ("missing", "bad_return"):
        returned = head.get("dtype")
        return CallOutcome(status, message=message, output=output,
                           dtype=returned[:100] if type(returned) is str else None)
    if status == "crashed":
        return CallOutcome("crashed", reason=Reason.SANDBOX, message=message, output=output)
    return CallOutcome("bad_return", message="gave an answer that could not be read (unknown status)", output=output)


def import_outcome(child, reply, filename: str, timeout: float) -> CallOutcome:
    """What the child's answer to its init frame (or the failed exchange) says of the import.
    Records the jail layers the child reports on `child`."""
    if isinstance(reply, CallOutcome):
        if reply.status == "timeout":
            message = (reply.message if reply.reason == Reason.BUDGET else
                       f"importing {filename} did not finish within {timeout:g} s (is there an infinite "
                       f"loop or a long computation at the top level of the file?)")
            return CallOutcome("not_run", reason=Reason.TIMEOUT, message=message, output=reply.output)
        if reply.reason == Reason.REFUSED:
            return CallOutcome("not_run", reason=Reason.REFUSED, output=reply.output,
                               message=f"importing {filename} was {reply.message}")
        reason = Reason.MEMORY if reply.reason == Reason.MEMORY else Reason.CRASHED
        return CallOutcome("not_run", reason=reason, output=reply.output,
                           message=f"the process crashed while importing {filename}: {reply.message}")
    header, _blobs, output = reply
    child.layers = header.get("layers") if isinstance(header.get("layers"), dict) else {}
    if header.get("status") == "ok":
        return CallOutcome("ok", output=output, skipped=_skipped(header.get("skipped")))
    reason = header.get("reason") if header.get("reason") in (Reason.SYNTAX, Reason.RAISED, Reason.MEMORY) \
        else Reason.RAISED
    return CallOutcome("not_run", reason=reason, output=output, error=ErrorInfo.from_json(header.get("error")),
                       message=clean(header.get("message")) or "the module could not be imported")


def _skipped(data: Any) -> tuple[SkippedCell, ...]:
    if type(data) is not list:
        return ()
    cells = []
    for item in data[:1000]:
        if type(item) is dict and type(item.get("index")) is int:
            first = item.get("first_line")
            cells.append(SkippedCell(index=item["index"], first_line=clean(first, 200) if type(first) is str else "",
                                     error=ErrorInfo.from_json(item.get("error")),
                                     solution=item.get("solution") is True))
    return tuple(cells)


def not_started(status: str, why: str) -> CallOutcome:
    """A child that could not be started (its fork failed, or the zygote died): the sandbox's
    failure, not the student's."""
    return CallOutcome(status, reason=Reason.SANDBOX, message=f"the sandbox could not start a process ({why})")


def end_text(child, limits: Limits) -> tuple[str, str]:
    """(message, reason) for a child whose connection closed: its exit status (waited for up to
    2 s), else its zygote's death or the closed connection; above all, its cgroup's memory limit."""
    z = child.zygote
    info = z.wait_exit(child.pid, 2.0)
    if info is None and not z.alive():
        message, reason = "the sandbox's server process died", Reason.SANDBOX
    elif info is None:
        message, reason = "the process closed its connection to the grader", Reason.EXIT
    else:
        message, reason = exit_text(info, limits)
    if child.cgroup is not None and child.cgroup.out_of_memory():
        message, reason = f"exceeded the memory limit of {limits.memory_mb} MB", Reason.MEMORY
    return message, reason


def exit_text(info: tuple[int | None, int | None] | None, limits: Limits) -> tuple[str, str]:
    """(message, reason) for a child that died."""
    if info is None:
        return "the process died", Reason.EXIT
    code, sig = info
    if sig is not None:
        if sig == signal.SIGXCPU:
            return f"exceeded the CPU time limit of {limits.cpu_seconds} s", Reason.SIGNAL
        try:
            name = signal.Signals(sig).name
        except ValueError:
            name = f"signal {sig}"
        what = _SIGNALS.get(sig) or (signal.strsignal(sig) or name).lower()
        return f"the process was killed by signal {sig} ({what})", Reason.SIGNAL
    if code == EXIT_MEMORY:
        return f"exceeded the memory limit of {limits.memory_mb} MB", Reason.MEMORY
    if code == EXIT_INTERNAL:
        return "the sandbox could not set up the process", Reason.SANDBOX
    return f"the process exited with code {code} (the code called os._exit({code}) or similar)", Reason.EXIT


def clean(text: Any, limit: int = MESSAGE_MAX) -> str:
    if not isinstance(text, str):
        return ""
    text = "".join(ch if ch.isprintable() or ch in "\n\t" else "?" for ch in text[: limit * 2])
    return text if len(text) <= limit else text[: limit - 3] + "..."
