"""Gradescope's results.json for one submission: the kit's own schema (reports/gradescope.py)
with the autograder's settings applied (hidden checks' visibility, leaderboard, log visibility)
and the notes about the upload on top."""

from __future__ import annotations

from autograder.config.course import CourseConfig
from autograder.gradescope.settings import GradescopeSettings
from autograder.reports.gradescope import output_lines, to_gradescope
from autograder.results import SubmissionResult

CONCEALED = "after_published"    # what to_gradescope gives a hidden check whose details are withheld


def results_json(result: SubmissionResult, course: CourseConfig, settings: GradescopeSettings, *,
                 notes: tuple[str, ...] = (), execution_time: float = 0.0) -> dict:
    data = to_gradescope(result, show_hidden=course.show_hidden)
    for test in data["tests"]:
        if test["visibility"] == CONCEALED:
            test["visibility"] = settings.hidden_visibility
    data["output"] = "\n\n".join([output_lines(notes), data["output"]]) if notes else data["output"]   # Markdown
    data["stdout_visibility"] = settings.stdout_visibility
    data["execution_time"] = max(0, round(execution_time))
    if settings.leaderboard:
        data["leaderboard"] = [{"name": "score", "value": result.score, "order": "desc"}]
    return data
