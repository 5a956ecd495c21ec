"""What a misconception's torch-written mutants raise, made in a short-lived process of the kit's own.

A torch error in a student's code is explained by running the torch-written mutants on the check's
inputs (explain.diagnose_error). Making that imports torch: about 2-3 core-s under the grader's GIL,
which stalls every lane of a class run, and some 300 MB the grader then holds to the end of the
run. The answers are kept on disk (reference_cache.stored_json), so this happens once on a
machine -- the first class an instructor grades there, or the first after an upgrade. So the
grader asks a process of its own instead: `python -m autograder.diagnosis.torch_raised`, which runs
the kit's mutants (trusted code, no student's) and exits. The inputs cross as the sandbox
protocol's frame (JSON and .npy, never pickle); the answer comes back as JSON.

    raised = torch_raised(check, misconception, inputs)   # [[type, message, line] | None, ...] or None
"""

from __future__ import annotations

import json
import os
import socket
import subprocess
import sys
from pathlib import Path
from typing import Any

TIMEOUT_S = 120.0       # the process imports torch and the kit: seconds, even on a loaded machine
KIT_ROOT = Path(__file__).resolve().parents[2]     # holds autograder/ and reference/


def torch_raised(check, misconception, inputs: dict[str, Any]) -> list[list[str] | None] | None:
    """[type, message, source line] for each of `misconception`'s torch-written mutants on `inputs`
    (None where it returns), made in a process of its own; None when that process could not say
    (inputs it cannot be sent, a check it does not know, a crash): the caller then makes them here."""
    from autograder.sandbox.inside import protocol

    request = {"exercise": check.exercise, "check": check.id, "stem": misconception.stem,
               "misconception": misconception.id}
    try:
        frame = protocol.message(request, {"inputs": inputs})
    except TypeError:          # a value the protocol does not carry
        return None
    env = dict(os.environ, PYTHONPATH=os.pathsep.join(filter(None, [str(KIT_ROOT), os.environ.get("PYTHONPATH")])))
    ours, theirs = socket.socketpair()
    try:
        proc = subprocess.Popen([sys.executable, "-m", "autograder.diagnosis.torch_raised"], stdin=theirs,
                                stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, env=env, cwd=str(KIT_ROOT))
        theirs.close()
        try:
            ours.sendall(frame)
            ours.shutdown(socket.SHUT_WR)
            out, _ = proc.communicate(timeout=TIMEOUT_S)
        except (OSError, subprocess.TimeoutExpired):
            proc.kill()
            proc.communicate()
            return None
    except OSError:
        return None
    finally:
        ours.close()
        theirs.close()
    try:
        answer = json.loads(out)
    except ValueError:
        return None
    count = len(misconception.torch_alternatives)
    fits = type(answer) is list and len(answer) == count and all(
        r is None or (type(r) is list and len(r) == 3 and all(type(t) is str for t in r)) for r in answer)
    return answer if proc.returncode == 0 and fits else None


def _answer(request: dict, inputs: dict) -> list[list[str] | None]:
    from autograder.checks import CHECKS, EXERCISES
    from autograder.diagnosis.explain import _raised_at

    check = next(c for c in CHECKS[request["exercise"]] if c.id == request["check"])
    mis = next(m for m in EXERCISES[request["stem"]].misconceptions if m.id == request["misconception"])
    return [None if r is None else list(r) for r in (_raised_at(check, alt(), inputs) for alt in mis.torch_alternatives)]


def main() -> int:
    from autograder.sandbox.inside import protocol

    with socket.socket(fileno=os.dup(0)) as sock:
        header, blobs = protocol.recv_frame(sock)
    inputs = protocol.decode(header.pop("inputs"), blobs, make_tensor=protocol.TensorArg)
    sys.stdout.write(json.dumps(_answer(header, inputs)))
    return 0


if __name__ == "__main__":
    sys.exit(main())
