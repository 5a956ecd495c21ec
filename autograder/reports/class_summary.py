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
from urllib.parse import quote

from autograder.config import CourseConfig
from autograder.contract import MISCONCEPTIONS
from autograder.reports.grades_csv import ordered, submitted
from autograder.reports.summary import trouble
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
    text = json.dumps(course.model_dump(mode="json"), sort_keys=True, separators=(",", ":"), ensure_ascii=False)
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


def class_summary(results: list[SubmissionResult], course: CourseConfig) -> dict:
    results = ordered(results)
    n = len(results)
    max_total = sum(course.max_points(s) for s in course.exercises)
    handed_in = [r for r in results if any(submitted(e) for e in r.exercises)]
    totals = [r.score for r in handed_in]
    return {
        "schema": SCHEMA,
        "course": course.course,
        "assignment": course.assignment,
        "seed": course.seed,
        "kit_version": kit_version(),
        "course_sha256": course_sha256(course),
        "settings": {"hints": course.hints, "show_hidden": course.show_hidden, "both_forms": course.both_forms,
                     "limits": asdict(course.limits), "tolerances": course.tolerances.model_dump()},
        "students": n,
        "submitted": len(handed_in),
        "max_score": max_total,
        "scores": _distribution(totals, max_total),
        "exercises": [_exercise(results, course, stem) for stem in course.exercises],
        "checks": _checks(results, course),
        "misconceptions": _misconceptions(results),
        "trouble": _trouble(results),
        "slowest": [{"student": r.student, "duration_s": r.duration_s, "feedback": feedback_link(r.student)}
                    for r in sorted(results, key=lambda r: -r.duration_s)[:SLOWEST] if r.duration_s > 0],
        "intake": _intake(results),
        "rows": [_row(r, course) for r in results],
    }


def _distribution(totals: list[float], max_total: float) -> dict:
    if not totals:
        return {"mean": None, "median": None, "min": None, "max": None, "full_marks": 0, "values": []}
    return {"mean": round(statistics.fmean(totals), 3), "median": statistics.median(totals),
            "min": min(totals), "max": max(totals), "full_marks": sum(t == max_total for t in totals),
            "values": sorted(totals)}


def _exercise(results: list[SubmissionResult], course: CourseConfig, stem: str) -> dict:
    exs = [e for r in results for e in r.exercises if e.stem == stem]
    handed = [e for e in exs if submitted(e)]
    top = course.max_points(stem)
    checks = [c for e in handed for c in e.checks]
    return {"stem": stem, "title": course.exercises[stem].title, "max_score": top, "submitted": len(handed),
            "mean": round(statistics.fmean([e.score for e in handed]), 3) if handed else None,
            "full_marks": sum(e.score == top for e in handed),
            "pass_rate": round(sum(c.passed for c in checks) / len(checks), 4) if checks else None}


def _checks(results: list[SubmissionResult], course: CourseConfig) -> list[dict]:
    out = []
    for stem, ex in course.exercises.items():
        for cid, cfg in ex.checks.items():
            statuses = Counter(c.status for r in results for c in r.checks if c.check_id == cid)
            graded = sum(statuses.values()) - statuses["missing"]
            out.append({"check_id": cid, "exercise": stem, "points": cfg.points, "hidden": cfg.hidden,
                        "pass_rate": round(statuses["passed"] / graded, 4) if graded else None,
                        **{status: statuses[status] for status in STATUS_CODE}})
    return out


def _misconceptions(results: list[SubmissionResult]) -> list[dict]:
    students: dict[str, list[str]] = defaultdict(list)
    checks: dict[str, Counter] = defaultdict(Counter)
    for r in results:
        for c in r.checks:
            for m in c.misconceptions:
                checks[m][c.check_id] += 1
        for m in sorted({m for c in r.checks for m in c.misconceptions}):
            students[m].append(r.student)
    return [{"id": m, "description": MISCONCEPTIONS.get(m, ""), "count": len(names), "students": names,
             "exercises": sorted({cid.split(".", 1)[0] for cid in checks[m]}), "checks": dict(checks[m])}
            for m, names in sorted(students.items(), key=lambda kv: (-len(kv[1]), kv[0]))]


def _trouble(results: list[SubmissionResult]) -> list[dict]:
    return [{"student": r.student, "exercise": stem, "kind": kind, "message": why, "feedback": feedback_link(r.student)}
            for r in results for stem, kind, why in trouble(r)]


def _intake(results: list[SubmissionResult]) -> list[dict]:
    return [{"student": r.student, "exercise": e.stem, "file": e.graded_file, "note": e.note,
             "flags": list(getattr(e, "flags", ()) or ())}
            for r in results for e in r.exercises if e.note or getattr(e, "flags", ())]


def _row(r: SubmissionResult, course: CourseConfig) -> dict:
    exercises = {e.stem: (e.score if submitted(e) else None) for e in r.exercises}
    return {"student": r.student, "score": r.score if any(v is not None for v in exercises.values()) else None,
            "exercises": exercises, "duration_s": r.duration_s, "feedback": feedback_link(r.student),
            "checks": "".join(STATUS_CODE.get(c.status, "?") for c in _in_course_order(r, course))}


def _in_course_order(r: SubmissionResult, course: CourseConfig):
    by_id = {c.check_id: c for c in r.checks}
    return [by_id[cid] for ex in course.exercises.values() for cid in ex.checks if cid in by_id]
