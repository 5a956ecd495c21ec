"""The torch helper's operation (torch_raised.py is the grader's side; autograder/sandbox/helper_process.py
the mechanism): a check, a misconception and the check's inputs in, what each torch-written
mutant raises out. The helper imports torch once; each question is a child forked from it. It
runs the kit's mutants only, never a student's code."""

from __future__ import annotations


def raised(request: dict, inputs: dict) -> list[list[str] | None] | str:
    from autograder.checks import CHECKS, EXERCISES
    from autograder.diagnosis.mutant_raised import raised_at

    check = next((c for c in CHECKS.get(request.get("exercise"), ()) if c.id == request.get("check")), None)
    mis = next((m for m in getattr(EXERCISES.get(request.get("stem")), "misconceptions", ())
                if m.id == request.get("misconception")), None)
    if check is None or mis is None:
        return "unknown check or misconception"
    return [None if r is None else list(r) for r in (raised_at(check, alt(), inputs) for alt in mis.torch_alternatives)]


OPS = {"raised": raised}


def warm() -> None:
    """torch and the kit's checks imported once, for every child; torch's threads are not started
    here (a fork does not take them along), and a child's mutants run on one."""
    import torch

    torch.set_num_threads(1)
    import autograder.checks  # noqa: F401
    import autograder.diagnosis.mutant_raised  # noqa: F401
