"""Gradescope's results.json schema (score, tests[] with name/score/max_score/status/output/tags)."""

from __future__ import annotations

from autograder.results import CheckResult, SubmissionResult, causes


def check_output(check: CheckResult, *, same_as: str = "", explains: int = 0) -> str:
    """A test's output (of a check as the student may see it: CheckResult.for_student). One mistake,
    one hint: the first check of a cause carries the hint and says how many checks the mistake
    explains; the others (`same_as`: that first check) refer to it."""
    if check.passed:
        return "passed"
    text = check.message
    if same_as:
        return f"{text}\n\nThe same mistake as {same_as}: its hint is given there."
    if check.hint:
        text += f"\n\nHint: {check.hint}"
    if explains > 1:
        text += f"\n\n1 mistake -> {explains} checks: this one mistake explains {explains - 1} more failed checks."
    return text


def to_gradescope(result: SubmissionResult, *, show_hidden: bool = False) -> dict:
    result = result.for_student(show_hidden)
    tests = []
    for ex in result.exercises:
        first_of = {o.check_id: cause.first for cause in causes(ex.checks) for o in cause.others}
        explains = {cause.first.check_id: len(cause.checks) for cause in causes(ex.checks)}
        for c in ex.checks:
            tests.append({
                "name": f"{c.check_id}: {c.title}",
                "score": c.score,
                "max_score": c.max_score,
                "status": "passed" if c.passed else "failed",
                "output": check_output(c, same_as=first_of[c.check_id].check_id if c.check_id in first_of else "",
                                       explains=explains.get(c.check_id, 0)),
                "tags": [f"exercise:{c.exercise}"] + ([] if c.concealed else [f"misconception:{m}" for m in c.misconceptions]),
                "visibility": "after_published" if c.concealed else "visible",
                "extra_data": {"check_id": c.check_id, "result": c.status},
            })
    notes = [f"{ex.stem}: {ex.note}" for ex in result.exercises if ex.note]
    return {
        "score": result.score,
        "max_score": result.max_score,
        "output": "\n".join([f"seed {result.seed}"] + notes),
        "visibility": "visible",
        "stdout_visibility": "hidden",
        "tests": tests,
        "extra_data": {"student": result.student, "assignment": result.assignment, "seed": result.seed,
                       "duration_s": result.duration_s},
    }
