"""The torch helper's process (torch_raised.py is the grader's side): one frame of a check, a
misconception and its inputs in, one line of JSON out (what each torch-written mutant raises),
until the grader closes its end. It runs the kit's mutants only, never a student's code."""

from __future__ import annotations

import json
import os
import socket
import sys


def _answer(request: dict, inputs: dict) -> list[list[str] | None] | str:
    from autograder.checks import CHECKS, EXERCISES
    from autograder.diagnosis.mutant_raised import raised_at

    check = next((c for c in CHECKS.get(request.get("exercise"), ()) if c.id == request.get("check")), None)
    mis = next((m for m in getattr(EXERCISES.get(request.get("stem")), "misconceptions", ())
                if m.id == request.get("misconception")), None)
    if check is None or mis is None:
        return "unknown check or misconception"
    return [None if r is None else list(r) for r in (raised_at(check, alt(), inputs) for alt in mis.torch_alternatives)]


def main() -> int:
    """The helper: one frame in, one line of JSON out, until the grader closes its end."""
    from autograder.sandbox.inside import protocol

    with socket.socket(fileno=os.dup(0)) as sock:
        while True:
            try:
                header, blobs = protocol.recv_frame(sock)
            except (protocol.PeerClosed, ConnectionError):
                return 0
            inputs = protocol.decode(header.pop("inputs"), blobs, make_tensor=protocol.TensorArg)
            sock.sendall(json.dumps(_answer(header, inputs)).encode("utf-8") + b"\n")


if __name__ == "__main__":
    sys.exit(main())
