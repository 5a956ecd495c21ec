"""What a misconception's torch-written mutants raise, made in a process of the kit's own.

A torch error in a student's code is explained by running the torch-written mutants on the check's
inputs (explain.diagnose_error). Making that imports torch: seconds of CPU under the grader's GIL,
which stall every lane of a class run, and memory the grader would then hold to the end of the
run. The answers are kept on disk (reference_cache.stored_json), so this happens once on a
machine -- the first class an instructor grades there, or the first after an upgrade. So the
grader asks a helper process instead (autograder/sandbox/helper_process.py, the mechanism the parse
helper uses too): started on the first such question with torch imported
(torch_raised_server.py), kept for the next ones, each answered in a child forked from it under
limits of its own; it runs the kit's mutants (trusted code, no student's) and ends with the
grader. The inputs cross as the sandbox protocol's frame (JSON and .npy, never pickle), and so
does the answer.

    raised = torch_raised(check, misconception, inputs)   # [[type, message, line] | None, ...] or None
"""

from __future__ import annotations

from typing import Any

from autograder.sandbox import helper_process

LIMITS = helper_process.Limits(cpu_seconds=60, memory_mb=2048, wall_seconds=120.0, answer_bytes=1 << 20)
# The helper's start imports torch: seconds, more on a loaded machine.
HELPER = helper_process.Helper("autograder.diagnosis.torch_raised_server", start_seconds=120.0)


def torch_raised(check, misconception, inputs: dict[str, Any]) -> list[list[str] | None] | None:
    """[type, message, source line] for each of `misconception`'s torch-written mutants on `inputs`
    (None where it returns), made in a child of the torch helper; None when it could not say
    (inputs the protocol does not carry, a check it does not know, a crash, no answer in time):
    the caller then makes them itself."""
    request = {"exercise": check.exercise, "check": check.id, "stem": misconception.stem,
               "misconception": misconception.id}
    try:
        answer = HELPER.run("raised", [request, inputs], LIMITS).value
    except TypeError:          # a value the protocol does not carry
        return None
    except (helper_process.OverLimit, helper_process.Unavailable):
        return None
    return answer if fits(answer, len(misconception.torch_alternatives)) else None


def fits(answer: Any, count: int) -> bool:
    """Whether `answer` is what torch_raised answers: `count` items, each None or [type, message, line]."""
    return type(answer) is list and len(answer) == count and all(
        r is None or (type(r) is list and len(r) == 3 and all(type(t) is str for t in r)) for r in answer)


def close_helper() -> None:
    """Ends the helper (the next question starts it again)."""
    HELPER.stop()
