"""What a misconception's torch-written mutants raise, made in a process of the kit's own.

A torch error in a student's code is explained by running the torch-written mutants on the check's
inputs (explain.diagnose_error). Making that imports torch: seconds of CPU under the grader's GIL,
which stall every lane of a class run, and memory the grader would then hold to the end of the
run. The answers are kept on disk (reference_cache.stored_json), so this happens once on a
machine -- the first class an instructor grades there, or the first after an upgrade. So the
grader asks a helper process instead: `python -m autograder.diagnosis.torch_raised_server`, started on
the first such question and kept for the next ones (torch imported once per grader, not once per
question), which runs the kit's mutants (trusted code, no student's) and exits with the grader.
The inputs cross as the sandbox protocol's frame (JSON and .npy, never pickle); each answer comes
back as one line of JSON.

    raised = torch_raised(check, misconception, inputs)   # [[type, message, line] | None, ...] or None
"""

from __future__ import annotations

import atexit
import json
import os
import socket
import subprocess
import sys
import threading
from pathlib import Path
from typing import Any

TIMEOUT_S = 120.0       # the first answer waits for torch's import: seconds, even on a loaded machine
KIT_ROOT = Path(__file__).resolve().parents[2]     # holds autograder/ and reference/


class _Helper:
    """The helper process and its socket; one question at a time (the lanes take turns)."""

    def __init__(self):
        env = dict(os.environ, PYTHONPATH=os.pathsep.join(filter(None, [str(KIT_ROOT), os.environ.get("PYTHONPATH")])))
        self.sock, theirs = socket.socketpair()
        try:
            self.proc = subprocess.Popen([sys.executable, "-m", "autograder.diagnosis.torch_raised_server"], stdin=theirs,
                                         stdout=theirs, stderr=subprocess.DEVNULL, env=env, cwd=str(KIT_ROOT))
        finally:
            theirs.close()
        self.sock.settimeout(TIMEOUT_S)
        self.replies = self.sock.makefile("rb")

    def ask(self, frame: bytes) -> Any:
        self.sock.sendall(frame)
        line = self.replies.readline()
        if not line:
            raise OSError("the helper process ended")
        return json.loads(line)

    def close(self) -> None:
        try:
            self.sock.shutdown(socket.SHUT_WR)      # end of input: the helper exits
            self.replies.close()
            self.sock.close()
            self.proc.wait(timeout=5)
        except (OSError, subprocess.TimeoutExpired):
            self.proc.kill()
            self.proc.wait()


_LOCK = threading.Lock()
_HELPER: _Helper | None = None


def torch_raised(check, misconception, inputs: dict[str, Any]) -> list[list[str] | None] | None:
    """[type, message, source line] for each of `misconception`'s torch-written mutants on `inputs`
    (None where it returns), made in the helper process; None when it could not say (inputs the
    protocol does not carry, a check it does not know, a crash, no answer in time): the caller then
    makes them itself."""
    global _HELPER
    from autograder.sandbox.inside import protocol

    request = {"exercise": check.exercise, "check": check.id, "stem": misconception.stem,
               "misconception": misconception.id}
    try:
        frame = protocol.message(request, {"inputs": inputs})
    except TypeError:          # a value the protocol does not carry
        return None
    with _LOCK:
        try:
            if _HELPER is None:
                _HELPER = _Helper()
            answer = _HELPER.ask(frame)
        except (OSError, ValueError):
            if _HELPER is not None:
                _HELPER.close()
            _HELPER = None       # the next question starts another
            return None
    return answer if fits(answer, len(misconception.torch_alternatives)) else None


def fits(answer: Any, count: int) -> bool:
    """Whether `answer` is what torch_raised answers: `count` items, each None or [type, message, line]."""
    return type(answer) is list and len(answer) == count and all(
        r is None or (type(r) is list and len(r) == 3 and all(type(t) is str for t in r)) for r in answer)


@atexit.register
def close_helper() -> None:
    global _HELPER
    with _LOCK:
        if _HELPER is not None:
            _HELPER.close()
            _HELPER = None
