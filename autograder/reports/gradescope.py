"""Gradescope's results.json schema (score, tests[] with name/score/max_score/status/output/tags).

Outputs are Markdown (`output_format` and `test_output_format` "md"), written as the feedback page
writes it (reports/feedback.py): the kit's prose with its `code` spans as code, whatever came from
the submission (messages quoting its errors, file names) escaped or in a code block, so a hint reads
as it does on the feedback page instead of showing its backticks.
"""

from __future__ import annotations

from autograder.reports.feedback import code, code_block, md_prose, md_text
from autograder.results import CheckResult, SubmissionResult, causes

OUTPUT_FORMAT = "md"


def check_output(check: CheckResult, *, same_as: str = "", explains: int = 0) -> str:
    """A test's output, in Markdown, of a check as the student may see it (CheckResult.for_student).
    One mistake, one hint: the first check of a cause carries the hint and says how many checks the
    mistake explains; the others (`same_as`: that first check) refer to it."""
    if check.passed:
        return "passed"
    text = md_text(check.message) if check.concealed else code_block(check.message or check.status)
    if same_as:
        return f"{text}\n\nThe same mistake as {code(same_as)}: its hint is given there."
    if check.hint:
        text += f"\n\n**Hint:** {md_prose(check.hint)}"
    if explains > 1:
        text += f"\n\n**1 mistake -> {explains} checks**: this one mistake explains {explains - 1} more failed checks."
    return text


def output_lines(lines) -> str:
    """Plain sentences (notes about the files) as Markdown paragraphs, their text escaped."""
    return "\n\n".join(md_text(line) for line in lines)


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
                "output_format": OUTPUT_FORMAT,
                # every id the result records, a hidden check's too: its hint names the mistake (and tags
                # are the instructor's), so results.json counts what summary.json counts
                "tags": [f"exercise:{c.exercise}"] + [f"misconception:{m}" for m in c.misconceptions],
                "visibility": "after_published" if c.concealed else "visible",
                "extra_data": {"check_id": c.check_id, "result": c.status},
            })
    notes = [f"{ex.stem}: {ex.note}" for ex in result.exercises if ex.note]
    return {
        "score": result.score,
        "max_score": result.max_score,
        "output": output_lines([f"seed {result.seed}"] + notes),
        "output_format": OUTPUT_FORMAT,
        "test_output_format": OUTPUT_FORMAT,
        "visibility": "visible",
        "stdout_visibility": "hidden",
        "tests": tests,
        "extra_data": {"student": result.student, "assignment": result.assignment, "seed": result.seed,
                       "duration_s": result.duration_s},
    }
