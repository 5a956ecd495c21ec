"""grades.csv: one row per student, one column per exercise, then total, max_total and status
(autograder.reports.status: graded, nothing gradable, not submitted, ...); with course.yml's late
policy, raw_total and penalty before the total (raw - penalty = total: reports/final_grade.py),
and the submission time and its lateness at the end.

An exercise the student did not submit is an empty cell (a 0 is a 0 earned); a student with
nothing submitted at all has an empty total too. Rows are in a stable order (by name) and
every text cell is made safe for a spreadsheet (`safe_cell`)."""

from __future__ import annotations

import csv
import io
from collections.abc import Iterator

from autograder.reports.final_grade import Grade, points
from autograder.reports.status import EXCUSED, status_of
from autograder.results import ExerciseResult, SubmissionResult, Why

# A cell starting with one of these is read as a formula by Excel, LibreOffice and Sheets
# (OWASP "CSV injection"); tab, carriage return and newline start one too in some of them, and
# some trim leading white space before reading the cell, so "\n=cmd" is a formula as well.
FORMULA_START = ("=", "+", "-", "@", "\t", "\r", "\n")


def safe_cell(text: str) -> str:
    """Text a spreadsheet shows as text: a cell that starts with a formula character, or with
    white space before one, gets a quote before it. A dash alone is no formula: Moodle's worksheet
    writes it for "no date", and its own cells must come back as it wrote them."""
    text = str(text)
    risky = text.startswith(FORMULA_START) or text.lstrip().startswith(FORMULA_START)
    return "'" + text if risky and text != "-" else text


def scored(exercise: ExerciseResult) -> bool:
    """Handed in and graded: an exercise the grader failed on has no score to give (status
    "grader error"), not a 0."""
    return exercise.handed_in and not any(c.reason == Why.grader_error for c in exercise.checks)


def score_cell(score: float | None) -> str:
    """A score as every sheet writes it; None (not handed in) an empty cell."""
    return f"{score:g}" if score is not None else ""


def exercise_cell(result: SubmissionResult, stem: str) -> str:
    ex = next((e for e in result.exercises if e.stem == stem), None)
    return score_cell(ex.score if ex is not None and scored(ex) else None)


def total_cell(result: SubmissionResult) -> str:
    graded = any(e.handed_in for e in result.exercises) and all(scored(e) or not e.handed_in
                                                                 for e in result.exercises)
    return score_cell(result.score if graded else None)


def ordered(results: list[SubmissionResult]) -> Iterator[SubmissionResult]:
    """The results by student, one at a time (`with_sources` without the digests)."""
    for result, _source in with_sources(results):
        yield result


def with_sources(results: list[SubmissionResult]) -> Iterator[tuple[SubmissionResult, str | None]]:
    """Each result by student with the digest of the text it was stored as: a class's stored
    results (grading.stored_results, `in_order`) are read back one at a time, never held together;
    results held only in memory have no such text (None)."""
    in_order = getattr(results, "in_order", None)
    if in_order is not None:
        yield from in_order()
    else:
        yield from ((result, None) for result in sorted(results, key=lambda r: r.student))


def on_roster(result: SubmissionResult | None, enrolment) -> str:
    """Where a roster was given: whether the row is a student of it ("no": a submission matching no row)."""
    return "no" if result is not None and result.student in enrolment.unmatched else "yes"


class GradesTable:
    """grades.csv row by row, in the order `ordered` gives (finish_run adds each result as its one
    pass over the class reads it). With an enrolment from a roster (intake.roster.enrol), also the
    name, login, SIS id, email and status of each row, and, in `text()`, a row for each roster
    student with no submission (its total empty, or 0 with `missing_as_zero`)."""

    def __init__(self, stems: tuple[str, ...], enrolment=None, max_total: float = 0, missing_as_zero: bool = False,
                 excused: set[str] | None = None, late: bool = False):
        self.stems, self.enrolment, self.max_total = stems, enrolment, max_total
        self.excused = excused          # None: no overrides file (no `override` column)
        self.late = late                # course.yml `late:`: raw total, penalty and submission time too
        self.missing = "0" if missing_as_zero else ""       # a roster student's total who handed in nothing
        self.roster = enrolment is not None and enrolment.roster
        self.buf = io.StringIO()
        self.writer = csv.writer(self.buf, lineterminator="\n")
        self.writer.writerow(["student", *stems, *(PENALTY_COLUMNS if late else ()), "total", "max_total", "status",
                              *(PERSON_COLUMNS if self.roster else ()), *(("override",) if excused is not None else ()),
                              *(TIME_COLUMNS if late else ())])

    def add(self, r: SubmissionResult, status: str | None = None, trail: list[dict] = (), late=None) -> None:
        """`status`: the instructor's word (excused) or late; `trail`: the overrides applied to `r`;
        `late`: its late_policy.Lateness (the total is the raw total less its penalty)."""
        self._row(self.enrolment.person(r.student) if self.roster else None, r, status, trail, late)

    def text(self) -> str:
        """The table, closed by the roster's students with no submission: asked for once, after
        the last `add`."""
        if self.roster:
            for p in sorted(self.enrolment.absent, key=lambda p: p.sort_key):
                excused = self.excused is not None and p.key in self.excused
                self._row(p, None, EXCUSED if excused else None,
                          [{"check": "(all)", "original": None, "overridden": "excused"}] if excused else ())
        return self.buf.getvalue()

    def _row(self, person, r: SubmissionResult | None, status: str | None = None, trail=(), late=None) -> None:
        cells = ([safe_cell(r.student), *(exercise_cell(r, s) for s in self.stems)] if r is not None
                 else [safe_cell(person.key), *("" for _ in self.stems)])
        raw = total_cell(r) if r is not None else self.missing
        penalty, total = "", raw
        if status == EXCUSED:
            total = ""
        elif late is not None and raw and r is not None:
            grade = Grade.held(r.score, r.max_score, late)
            penalty, total = points(grade.penalty), points(grade.final)
        if self.late:
            cells += [raw if status != EXCUSED else "", penalty]
        cells += [total, f"{r.max_score if r is not None else self.max_total:g}", status or status_of(r)]
        if person is not None:
            cells += [safe_cell(v) for v in (person.listed, person.login, person.sis_id, person.email)]
            cells.append(on_roster(r, self.enrolment))
        if self.excused is not None:
            cells.append(safe_cell("; ".join(override_said(t) for t in trail)))
        if self.late:
            when = "" if late is None or late.submitted_at is None else late.submitted_at.isoformat(timespec="minutes")
            cells += [when, safe_cell(late.said() if late is not None and r is not None else "")]
        self.writer.writerow(cells)


def grades_csv(results: list[SubmissionResult], stems: tuple[str, ...], enrolment=None, max_total: float = 0) -> str:
    """The whole of grades.csv for `results` (GradesTable, fed in the stable order)."""
    table = GradesTable(stems, enrolment, max_total)
    for r in ordered(results):
        table.add(r)
    return table.text()


PERSON_COLUMNS = ("name", "login", "sis_id", "email", "on_roster")
PENALTY_COLUMNS = ("raw_total", "penalty")       # before the total: raw - penalty = total
TIME_COLUMNS = ("submitted_at", "lateness")


def override_said(t: dict) -> str:
    """One override as grades.csv's `override` cell says it: what, from, to, why, who."""
    was = "-" if t.get("original") is None else f"{t['original']:g}"
    now = t["overridden"] if isinstance(t["overridden"], str) else f"{t['overridden']:g}"
    why = ", ".join(filter(None, (t.get("reason", ""), t.get("who", ""))))
    return f"{t['check']}: {was} -> {now}" + (f" ({why})" if why else "")
