"""Stand-ins for the sandbox on a Dask worker, for tests that measure the cluster client (not
the grading): imported by the workers, so it lives outside the test modules."""

from __future__ import annotations

import json
import resource
import sys
from pathlib import Path

from autograder.config.course import CourseConfig, course_from_data
from autograder.results import CheckResult, ExerciseResult, SubmissionResult


def passed_result(student: str, course: CourseConfig, message: str = "") -> SubmissionResult:
    """Full marks on every check of `course` (what the solutions earn), each saying `message`."""
    exercises = tuple(ExerciseResult(stem, ex.title, tuple(
        CheckResult(cid, stem, cid, "passed", cfg.points, cfg.points, message=message, hidden=cfg.hidden)
        for cid, cfg in ex.checks.items())) for stem, ex in course.exercises.items())
    return SubmissionResult(student, exercises, seed=course.seed, assignment=course.assignment, duration_s=0.5)


# What a check says at length (a report of what was compared): a student's result as large as a
# class with long reports writes, so fewer students stand for a larger class's bytes.
LONG_MESSAGE = "the values compared, row by row: " + " ".join(f"{i / 7:.6f}" for i in range(80))


def canned_task(student: str, packed: bytes, course_json: str, kit: str, plugin_name: str,
                message: str = "") -> str:
    """What `grade_packed` answers for a correct submission, without grading it."""
    result = passed_result(student, course_from_data(json.loads(course_json)), message)
    return json.dumps({"result": result.to_dict()}, allow_nan=False)


def main(class_dir: str, out: str, address: str) -> None:
    """Grade a class with the canned task, each check's message long, and print the client's peak
    memory (JSON)."""
    from functools import partial

    from autograder.checks import check_ids
    from autograder.cluster.client import grade_class_on_cluster
    from autograder.config import KIT_ROOT, load_course

    course = load_course(KIT_ROOT / "course.yml", known_checks=check_ids())
    results = grade_class_on_cluster(Path(class_dir), Path(out), course, address, in_flight=8,
                                     task=partial(canned_task, message=LONG_MESSAGE))
    print(json.dumps({"n": len(results), "max_rss_kb": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss}))


if __name__ == "__main__":
    main(*sys.argv[1:4])
