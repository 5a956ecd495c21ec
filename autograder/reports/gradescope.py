"""Gradescope's results.json schema (score, tests[] with name/score/max_score/status/output/tags)."""

from __future__ import annotations

from autograder.results import CheckResult, SubmissionResult


def check_output(check: CheckResult, *, show_hidden: bool) -> str:
    if check.passed:
        return "passed"
    if check.hidden and not show_hidden:   # the hint was made for it: it names no hidden input
        text = "A hidden check failed; its details are shown after grading."
        return f"{text}\n\nHint: {check.hint}" if check.hint else text
    text = check.message
    if check.hint:
        text += f"\n\nHint: {check.hint}"
    return text


def to_gradescope(result: SubmissionResult, *, show_hidden: bool = False) -> dict:
    tests = []
    for ex in result.exercises:
        for c in ex.checks:
            concealed = c.hidden and not show_hidden
            tests.append({
                "name": f"{c.check_id}: {c.title}",
                "score": c.score,
                "max_score": c.max_score,
                "status": "passed" if c.passed else "failed",
                "output": check_output(c, show_hidden=show_hidden),
                "tags": [f"exercise:{c.exercise}"] + ([] if concealed else [f"misconception:{m}" for m in c.misconceptions]),
                "visibility": "after_published" if concealed else "visible",
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
