"""grades.csv: one row per student, one column per exercise, then total and max_total."""

from __future__ import annotations

import csv
import io

from autograder.results import SubmissionResult


def grades_csv(results: list[SubmissionResult], stems: tuple[str, ...]) -> str:
    buf = io.StringIO()
    writer = csv.writer(buf, lineterminator="\n")
    writer.writerow(["student", *stems, "total", "max_total"])
    for r in sorted(results, key=lambda r: r.student):
        scores = {e.stem: e.score for e in r.exercises}
        writer.writerow([r.student, *(f"{scores.get(s, 0.0):g}" for s in stems), f"{r.score:g}", f"{r.max_score:g}"])
    return buf.getvalue()
