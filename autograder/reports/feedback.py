"""A feedback page a student can read: OUT/feedback/<student>.md.

A pure function of a SubmissionResult and the course's policies: the score table, then each
check that did not pass with what went wrong and, as the course allows, a hint. Hidden checks
keep their details unless `show_hidden`; `hints: off` shows no hint, `generic` the same nudge
to everyone. Everything that came from the submission (exception texts, printed output quoted
in a message) is shown verbatim inside code blocks, never as Markdown or HTML.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, replace

from autograder.config.course import CourseConfig
from autograder.reports.final_grade import Grade, points
from autograder.reports.status import GRADED, NOTHING_GRADABLE, status_of
from autograder.reports.causes import causes
from autograder.reports.maths import readable
from autograder.results import CheckResult, SubmissionResult


STATUS = {"passed": "passed", "failed": "wrong answer", "error": "error", "not_implemented": "not implemented yet",
          "missing": "not submitted"}
REASON = {"timeout": "timed out", "crashed": "crashed", "raised": "raised an exception",
          "not_run": "the file could not be run", "load_error": "the file could not be read",
          "bad_return": "returned something unusable", "missing": "not defined", "grader_error": "not graded",
          "refused": "refused"}
_MD_SPECIAL = re.compile(r"([\\`*\[\]<>|~&])")   # intraword _ and bare parentheses are plain text
_CODE_SPAN = re.compile(r"`([^`]+)`")


def _escaped(text: str) -> str:
    return _MD_SPECIAL.sub(r"\\\1", text)


def md_text(text: str) -> str:
    """Plain text, one line, with every Markdown/HTML special character escaped."""
    return _escaped(" ".join(str(text).split()))


def md_prose(text: str) -> str:
    """The kit's own prose (a hint, a title) as Markdown: its `code` spans stay code (<code> in
    HTML), its maths reads as maths (maths.readable), everything else is escaped as md_text escapes
    it; a stray backtick is shown as typed. Its lines that start with "- " stay a list (the
    explanations that fit an answer); its other lines are joined into one paragraph."""
    out: list[str] = []
    for line in str(text).splitlines():
        words = " ".join(line.split())
        if words.startswith("- "):
            out += ([""] if out and not out[-1].startswith("- ") else []) + [f"- {_prose_line(words[2:])}"]
        elif words and out and out[-1] and not out[-1].startswith("- "):
            out[-1] += f" {_prose_line(words)}"
        elif words:
            out += ([""] if out else []) + [_prose_line(words)]
    return "\n".join(out)


def _prose_line(text: str) -> str:
    parts = _CODE_SPAN.split(text)
    # re.split with one group: the text between spans at even indices, the spans' code at odd ones
    return "".join(code(part) if index % 2 else _escaped(readable(part)) for index, part in enumerate(parts))


def code_block(text: str) -> str:
    """A fenced block that no backtick run inside `text` can close early."""
    text = "".join(ch if ch.isprintable() or ch in "\n\t" else "?" for ch in str(text)).rstrip()
    longest = max((len(m) for m in re.findall(r"`+", text)), default=0)
    fence = "`" * max(3, longest + 1)
    return f"{fence}text\n{text}\n{fence}"


def code(text: str) -> str:
    """An inline code span (for names the contract fixes: stems, files, check ids)."""
    text = " ".join(str(text).split())
    ticks = "`" * (max((len(m) for m in re.findall(r"`+", text)), default=0) + 1)
    pad = " " if text.startswith("`") or text.endswith("`") else ""
    return f"{ticks}{pad}{text}{pad}{ticks}"


def _label(check: CheckResult) -> str:
    if check.status in ("failed", "error") and check.reason in REASON:
        return REASON[check.reason]
    return STATUS.get(check.status, check.status)


def _pts(x: float) -> str:
    return f"{x:g}"


@dataclass(frozen=True)
class FeedbackSection:
    """A part of the feedback page: its head (score table), one exercise's section, or its foot."""
    stem: str | None          # the exercise the section is about; None for the head and the foot
    lines: tuple[str, ...]    # Markdown


def feedback_markdown(result: SubmissionResult, course: CourseConfig, shown: str | None = None,
                      grade: Grade | None = None) -> str:
    """`shown`: the student's name as the roster gives it (their id is said beside it); `grade`:
    the late penalty and the gradebook's points the score is said with (grade_of)."""
    lines = [line for section in feedback_sections(result, course, shown, grade) for line in section.lines]
    return "\n".join(lines).rstrip() + "\n"


def grade_of(result: SubmissionResult, course: CourseConfig, lateness=None, column_points: float | None = None,
             overridden: SubmissionResult | None = None, changes: tuple[str, ...] = ()) -> Grade:
    """`result`'s grade as its pages say it: with its late_policy.Lateness where course.yml has
    `late:`, in the gradebook column's points (`column_points`, the exports' Target) too; with the
    instructor's overrides (`overridden`: the result with them in, `changes`: as grades.csv says
    them), the score the gradebook gets."""
    raw = overridden.score if overridden is not None else result.score
    return Grade.held(raw, result.max_score, lateness if course.late is not None else None, column_points,
                      round(raw - result.score, 2), changes)


def feedback_sections(result: SubmissionResult, course: CourseConfig,
                      shown: str | None = None, grade: Grade | None = None) -> list[FeedbackSection]:
    """The page in parts, so the HTML page can put each exercise's pictures under its section."""
    grade = grade or Grade(result.score, result.max_score)
    result = result.for_student(course.show_hidden)
    who = f"**{md_text(result.student)}**" if not shown or shown == result.student else \
        f"**{md_text(shown)}** ({code(result.student)})"
    status = status_of(result)
    standing = grade.said(bold="**") if status == GRADED else f"**{status}**, no score"
    lines = [f"# {md_text(course.course)}: {code(result.assignment)}", "",
             f"Feedback for {who}: {standing}.", ""]
    if grade.lateness is not None:
        lines += [f"Submission: {md_text(grade.lateness.said())}.", ""]
    if grade.changes:
        lines += [f"Your instructor changed your grade: {md_text('; '.join(grade.changes))}.", ""]
    if status == NOTHING_GRADABLE:      # one reason for every exercise: said once
        said = next((c.message for c in result.checks if c.message), "")
        foot = ["", f"Checks with random inputs use the seed {result.seed}."]
        return [FeedbackSection(None, tuple(lines + ["Nothing in your submission could be graded:", "",
                                                      code_block(said)])), FeedbackSection(None, tuple(foot))]
    lines += ["| exercise | file | checks passed | score |", "|---|---|---:|---:|"]
    for ex in result.exercises:
        passed = sum(c.passed for c in ex.checks)
        lines.append(f"| {code(ex.stem)} | {code(ex.graded_file) if ex.graded_file else '-'} | "
                     f"{passed}/{len(ex.checks)} | {_pts(ex.score)}/{_pts(ex.max_score)} |")
    lines.append(f"| **total** | | {sum(c.passed for c in result.checks)}/{len(result.checks)} | "
                 f"**{_pts(result.score)}/{_pts(result.max_score)}** |")
    if status == GRADED and grade.changed:
        lines.append(f"| your instructor's change | | | {'+' if grade.changed > 0 else '-'}{points(abs(grade.changed))} |")
    if status == GRADED and grade.penalty:      # the page's one grade: raw, penalty, final
        lines.append(f"| late penalty ({grade.lateness.percent:g}%) | | | -{points(grade.penalty)} |")
    if status == GRADED and (grade.changed or grade.penalty):
        lines.append(f"| **final** | | | **{points(grade.final)}/{_pts(result.max_score)}** |")
    shared = result.shared_note()
    if shared:            # what intake did to the whole submission: said once, not per exercise
        lines += ["", f"Note: {md_text(shared)}"]
    sections = [FeedbackSection(None, tuple(lines))]
    for ex in result.exercises:
        failed = [c for c in ex.checks if not c.passed]
        ex = replace(ex, note=ex.note_without(shared))
        if failed or ex.note:
            sections.append(FeedbackSection(ex.stem, tuple(_exercise_lines(ex, failed, course))))
    foot = ["", f"Checks with random inputs used the seed {result.seed}; the same seed gives the same inputs."]
    return sections + [FeedbackSection(None, tuple(foot))]


def _exercise_lines(ex, failed: list[CheckResult], course: CourseConfig) -> list[str]:
    lines = ["", f"## {code(ex.stem)}: {md_prose(ex.title)}", ""]
    if ex.note:
        lines += [f"Note: {md_text(ex.note)}", ""]
    if not failed:
        return lines + ["Every check passed."]
    first = failed[0]
    if len(failed) == len(ex.checks) and len({(c.status, c.message) for c in failed}) == 1 \
            and first.status in ("missing", "not_implemented", "error") and not first.hint:
        # One reason for the whole exercise (no file, a file that could not be read or run).
        return lines + [f"{_label(first).capitalize()}: 0/{_pts(ex.max_score)}.", "", code_block(first.message)]
    # Each cause once: what its checks share, then each check with what is its own.
    for told in causes(failed):
        cause, c = told.cause, told.first
        if not cause.others:
            lines.append(f"- {_named(c)}")
            lines += _said(c.message or _label(c), c.concealed and c.ran_on_its_inputs)
        else:
            lines.append(f"- **{cause.headline('→')}**")
            if cause.message:
                lines += _said(cause.message, False)
        if c.hint:   # decided once by grading, for the course's hint policy (a hidden check's names no input)
            lines += ["", *_indent_lines(f"Hint: {md_prose(c.hint)}")]
        if cause.others:
            lines += ["", "  The checks it explains:"]
            for checks, text in told.evidence:
                lines.append(f"  - {'; '.join(_named(o) for o in checks)}")    # several: the same message
                if text:
                    lines += _indent_lines("\n".join(_said(text, checks[0].concealed and checks[0].ran_on_its_inputs)))
        lines.append("")
    return lines


def _named(check: CheckResult) -> str:
    return f"{code(check.check_id)} ({md_prose(check.title)}): **{_label(check)}**, 0/{_pts(check.max_score)}"


def _said(message: str, stand_in: bool) -> list[str]:
    """A message under its list item: a hidden check's note as text, anything else verbatim in a block."""
    if stand_in:
        return [f"  - {md_text(message)}"]
    return ["", _indent(code_block(message))]


def _indent_lines(text: str) -> list[str]:
    return [f"  {line}" if line else "" for line in text.splitlines()]


def _indent(block: str) -> str:
    return "\n".join(f"  {line}" for line in block.splitlines())
