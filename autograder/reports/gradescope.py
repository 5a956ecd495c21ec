"""Gradescope's results.json schema (score, tests[] with name/score/max_score/status/output/tags).

Outputs are Markdown (`output_format` and `test_output_format` "md"), written as the feedback page
writes it (reports/feedback.py): the kit's prose with its `code` spans as code, whatever came from
the submission (messages quoting its errors, file names) escaped or in a code block, so a hint reads
as it does on the feedback page instead of showing its backticks.
"""

from __future__ import annotations

from autograder.reports.feedback import code, code_block, md_prose, md_text
from autograder.reports.causes import Told, causes, failure as _failure
from autograder.results import CheckResult, SubmissionResult

OUTPUT_FORMAT = "md"


def check_output(check: CheckResult, told: Told | None = None) -> str:
    """A test's output, in Markdown, of a check as the student may see it (CheckResult.for_student).
    Each cause once: its first check (`told.first`) says what the cause's checks share -- how many
    it explains, the message they all have, the hint --; every other check of the cause says what
    is its own (its message, unless the cause said it) and refers to that first one."""
    if check.passed:
        return "passed"
    stand_in = check.concealed and check.ran_on_its_inputs

    def said(message: str) -> str:
        return md_text(message) if stand_in else code_block(message)

    cause = told.cause if told is not None and told.cause.others else None
    own = cause.own_message(_failure(check)) if cause is not None else check.message or check.status
    if cause is not None and told.first.check_id != check.check_id:
        refer = f"The same cause as {code(told.first.check_id)}: what it is, and its hint, are told there."
        return f"{said(own)}\n\n{refer}" if own else refer
    parts = []
    if cause is not None:
        parts.append(f"**{cause.headline('→')}**: this one cause explains {len(cause.checks) - 1} more failed checks.")
        if cause.message:
            parts.append(code_block(cause.message))
    if own:
        parts.append(said(own))
    if check.hint:
        parts.append(f"**Hint:** {md_prose(check.hint)}")
    return "\n\n".join(parts)


def output_lines(lines) -> str:
    """Plain sentences (notes about the files) as Markdown paragraphs, their text escaped."""
    return "\n\n".join(md_text(line) for line in lines)


def to_gradescope(result: SubmissionResult, *, show_hidden: bool = False) -> dict:
    result = result.for_student(show_hidden)
    tests = []
    for ex in result.exercises:
        told = {c.check_id: cause for cause in causes(ex.checks) for c in cause.checks}
        for c in ex.checks:
            tests.append({
                "name": f"{c.check_id}: {c.title}",
                "score": c.score,
                "max_score": c.max_score,
                "status": "passed" if c.passed else "failed",
                "output": check_output(c, told.get(c.check_id)),
                "output_format": OUTPUT_FORMAT,
                # every id the result records, a hidden check's too: its hint names the mistake (and tags
                # are the instructor's), so results.json counts what summary.json counts
                "tags": [f"exercise:{c.exercise}"] + [f"misconception:{m}" for m in c.misconceptions],
                "visibility": "after_published" if c.concealed else "visible",
                "extra_data": {"check_id": c.check_id, "result": c.status},
            })
    shared = result.shared_note()
    own = [(ex.stem, ex.note_without(shared)) for ex in result.exercises]
    notes = ([shared] if shared else []) + [f"{stem}: {note}" for stem, note in own if note]
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
