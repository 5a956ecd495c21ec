"""The class's results as data: what OUT/summary.json holds and OUT/report.html shows.

A pure function of the results and the course; the schema is documented in docs/report.md
(bump SCHEMA when a field changes meaning or goes away; adding fields keeps it).
"""

from __future__ import annotations

import hashlib
from dataclasses import asdict
import importlib.metadata
import json
import statistics
from collections import Counter, defaultdict
from dataclasses import dataclass
from urllib.parse import quote

from autograder.config.course import CourseConfig, course_data
from autograder.checks.contract import MISCONCEPTIONS
from autograder.reports.grades_csv import ordered, scored
from autograder.reports.status import EXCUSED, GRADED, GRADER_ERROR, status_of
from autograder.reports.trouble import trouble
from autograder.results import SubmissionResult

SCHEMA = "attnkit-summary/1"
SLOWEST = 10
# One letter per check status in the check-by-student matrix.
STATUS_CODE = {"passed": "P", "failed": "F", "error": "E", "not_implemented": "N", "missing": "M"}


def feedback_link(student: str) -> str:
    """The feedback page of a student, relative to OUT (names are data: quoted, never raw)."""
    return "feedback/" + quote(f"{student}.html", safe="")


def kit_version() -> str:
    """The installed attnkit's version, or "dev" for a checkout that is not installed."""
    try:
        return importlib.metadata.version("attnkit")
    except importlib.metadata.PackageNotFoundError:
        return "dev"


def course_sha256(course: CourseConfig) -> str:
    """The sha256 of the course as graded, as canonical JSON (every setting with its defaults filled
    in, keys sorted, no spaces, UTF-8): two course files that grade alike hash alike, whatever
    their comments, key order or defaults spelled out (docs/report.md says how to compute it)."""
    text = json.dumps(course_data(course), sort_keys=True, separators=(",", ":"), ensure_ascii=False)
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


def class_summary(results: list[SubmissionResult], course: CourseConfig) -> dict:
    """One pass over the results, one at a time (a class's stored results are read back from OUT
    as they are needed: a summary of 2,000 students holds their tallies, not their results)."""
    tally = SummaryTally(course)
    for r in ordered(results):
        tally.add(r)
    return tally.summary()


def _distribution(totals: list[float], max_total: float) -> dict:
    if not totals:
        return {"mean": None, "median": None, "min": None, "max": None, "full_marks": 0, "values": []}
    return {"mean": round(statistics.fmean(totals), 3), "median": statistics.median(totals),
            "min": min(totals), "max": max(totals), "full_marks": sum(t == max_total for t in totals),
            "values": sorted(totals)}


class SummaryTally:
    """What the summary needs of each result, gathered as the results go by (in `ordered`'s order:
    the rows are the summary's students in that order); `summary()` when the last has been added."""

    def __init__(self, course: CourseConfig):
        self.course = course
        self.n = 0
        self.totals: list[float] = []                                   # of the students who handed in
        self.raw_totals: list[float] = []         # the same students' scores before a late penalty
        self.penalties: list[float] = []          # and their late penalties (0: none)
        self.scored: Counter = Counter()       # the statuses of the students in `totals`
        self.exercise_scores: dict[str, list[float]] = defaultdict(list)     # stem -> scores handed in
        self.exercise_checks: dict[str, list[int]] = defaultdict(lambda: [0, 0])   # stem -> [passed, checks]
        self.statuses: dict[str, Counter] = defaultdict(Counter)      # check id -> its statuses
        self.students_with: dict[str, list[str]] = defaultdict(list)  # misconception -> students
        self.checks_with: dict[str, Counter] = defaultdict(Counter)   # misconception -> check ids
        self.trouble: list[dict] = []
        self.intake: list[dict] = []
        self.durations: list[tuple[float, str]] = []
        self.rows: list[StudentRow] = []
        self.stems: dict[tuple, tuple] = {}       # one tuple of stems for the rows that share it

    def add(self, r: SubmissionResult, status: str | None = None, late=None, override: str = "") -> None:
        """`status`: the instructor's word for the student (excused: left out of the numbers);
        `late`: their late_policy.Lateness (course.yml `late:`): the penalty is points off the total;
        `override`: the instructor's changes to the result, as grades.csv says them."""
        self.n += 1
        word = status or status_of(r)
        penalty = late.penalty(r.score) if late is not None else 0.0
        counted = word not in (EXCUSED, GRADER_ERROR)     # no grade to count: the instructor's, or the grader's doing
        if counted and any(e.handed_in for e in r.exercises):
            self.totals.append(round(r.score - penalty, 2) if penalty else r.score)
            self.raw_totals.append(r.score)
            self.penalties.append(penalty)
            self.scored[word] += 1
        for e in r.exercises:
            if status != EXCUSED and scored(e):
                self.exercise_scores[e.stem].append(e.score)
                counts = self.exercise_checks[e.stem]
                counts[0] += sum(c.passed for c in e.checks)
                counts[1] += len(e.checks)
            if e.note or getattr(e, "flags", ()):
                self.intake.append({"student": r.student, "exercise": e.stem, "file": e.graded_file, "note": e.note,
                                    "flags": list(getattr(e, "flags", ()) or ())})
        for c in r.checks:
            self.statuses[c.check_id][c.status] += 1
            for m in c.misconceptions:
                self.checks_with[m][c.check_id] += 1
        for m in sorted({m for c in r.checks for m in c.misconceptions}):
            self.students_with[m].append(r.student)
        self.trouble += [{"student": r.student, "exercise": stem, "kind": kind, "message": why,
                          "feedback": feedback_link(r.student)} for stem, kind, why in trouble(r)]
        self.durations.append((r.duration_s, r.student))
        self.rows.append(student_row(r, self.course, self.stems, status, late, override))

    def exercise(self, stem: str) -> dict:
        scores, (passed, checks) = self.exercise_scores.get(stem, []), self.exercise_checks.get(stem, [0, 0])
        top = self.course.max_points(stem)
        return {"stem": stem, "title": self.course.exercises[stem].title, "max_score": top,
                "submitted": len(scores), "mean": round(statistics.fmean(scores), 3) if scores else None,
                "full_marks": sum(s == top for s in scores),
                "pass_rate": round(passed / checks, 4) if checks else None}

    def checks(self) -> list[dict]:
        out = []
        for stem, ex in self.course.exercises.items():
            for cid, cfg in ex.checks.items():
                statuses = self.statuses.get(cid, Counter())
                graded = sum(statuses.values()) - statuses["missing"]
                out.append({"check_id": cid, "exercise": stem, "points": cfg.points, "hidden": cfg.hidden,
                            "pass_rate": round(statuses["passed"] / graded, 4) if graded else None,
                            **{status: statuses[status] for status in STATUS_CODE}})
        return out

    def misconceptions(self) -> list[dict]:
        return [{"id": m, "description": MISCONCEPTIONS.get(m, ""), "count": len(names), "students": names,
                 "exercises": sorted({cid.split(".", 1)[0] for cid in self.checks_with[m]}),
                 "checks": dict(self.checks_with[m])}
                for m, names in sorted(self.students_with.items(), key=lambda kv: (-len(kv[1]), kv[0]))]

    def late_numbers(self, max_total: float) -> dict:
        """The late policy's part in the headline numbers: the scores before it, and its penalties."""
        penalised = [p for p in self.penalties if p]
        return {"raw_scores": _distribution(self.raw_totals, max_total), "penalised": len(penalised),
                "penalty_mean": round(statistics.fmean(self.penalties), 3) if self.penalties else None,
                "penalty_total": round(sum(penalised), 2)}

    def summary(self) -> dict:
        course = self.course
        max_total = sum(course.max_points(s) for s in course.exercises)
        return {
            "schema": SCHEMA,
            "course": course.course,
            "assignment": course.assignment,
            "seed": course.seed,
            "kit_version": kit_version(),
            "course_sha256": course_sha256(course),
            "settings": {"hints": course.hints, "show_hidden": course.show_hidden, "both_forms": course.both_forms,
                         "limits": asdict(course.limits), "tolerances": asdict(course.tolerances)},
            "students": self.n,
            "submitted": len(self.totals),
            "scores_over": dict(self.scored),
            "statuses": dict(Counter(row.status for row in self.rows)),
            "max_score": max_total,
            "scores": _distribution(self.totals, max_total),
            **({"late": self.late_numbers(max_total)} if course.late is not None else {}),
            "exercises": [self.exercise(stem) for stem in course.exercises],
            "checks": self.checks(),
            "misconceptions": self.misconceptions(),
            "trouble": self.trouble,
            "slowest": [{"student": student, "duration_s": duration, "feedback": feedback_link(student)}
                        for duration, student in sorted(self.durations, key=lambda d: -d[0])[:SLOWEST] if duration > 0],
            "intake": self.intake,
            "rows": self.rows,
        }


@dataclass(frozen=True, slots=True)
class StudentRow:
    """A student's line of the summary (summary.json's `rows[]`, the report's table and heat map).
    One per student, held until the report is written: slotted rather than a dict, since a large
    class holds many; what can be derived (the feedback link, the scores by stem) is not stored."""

    student: str
    score: float | None               # None: nothing handed in; else the final score (after a late penalty)
    stems: tuple[str, ...]            # the result's exercises (one tuple shared by the rows)
    scores: tuple[float | None, ...]  # their scores, None where not submitted
    duration_s: float
    checks: str                       # a STATUS_CODE letter per check, in the course's order
    status: str = GRADED              # autograder.reports.status
    penalty: float = 0.0              # the late penalty taken off the score (course.yml `late:`)
    lateness: str = ""                # when it came against the due date, as the feedback page says it
    override: str = ""                # the instructor's changes (overrides.csv), as grades.csv says them

    @property
    def exercises(self) -> dict[str, float | None]:
        return dict(zip(self.stems, self.scores))

    @property
    def raw(self) -> float | None:
        """The score before the late penalty."""
        return None if self.score is None else round(self.score + self.penalty, 2)

    @property
    def feedback(self) -> str:
        return feedback_link(self.student)

    def to_dict(self) -> dict:
        return {"student": self.student, "score": self.score, "exercises": self.exercises,
                "duration_s": self.duration_s, "feedback": self.feedback, "checks": self.checks, "status": self.status,
                **({"raw_score": self.raw, "penalty": self.penalty} if self.penalty else {}),
                **({"lateness": self.lateness} if self.lateness else {}),
                **({"override": self.override} if self.override else {})}


def student_row(r: SubmissionResult, course: CourseConfig, stems: dict[tuple, tuple],
                status: str | None = None, late=None, override: str = "") -> StudentRow:
    """`r`'s row; `stems` keeps one tuple of stems for the rows that share it; `late`: its
    late_policy.Lateness, `override`: the instructor's changes, as grades.csv says them."""
    scores = tuple(e.score if e.handed_in else None for e in r.exercises)
    key = tuple(e.stem for e in r.exercises)
    word = status or status_of(r)
    counted = word not in (EXCUSED, GRADER_ERROR) and any(v is not None for v in scores)
    scores = tuple(e.score if scored(e) else None for e in r.exercises)
    penalty = late.penalty(r.score) if late is not None and counted else 0.0
    final = round(r.score - penalty, 2) if penalty else r.score      # as final_grade.Grade says it
    return StudentRow(r.student, final if counted else None,
                      stems.setdefault(key, key), scores, r.duration_s,
                      "".join(STATUS_CODE.get(c.status, "?") for c in _in_course_order(r, course)),
                      word, penalty, late.said() if late is not None else "", override)


def _in_course_order(r: SubmissionResult, course: CourseConfig):
    by_id = {c.check_id: c for c in r.checks}
    return [by_id[cid] for ex in course.exercises.values() for cid in ex.checks if cid in by_id]
