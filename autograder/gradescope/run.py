"""What run_autograder runs on Gradescope for each submission:

    python -m autograder.gradescope.run          # root: $ATTNKIT_GRADESCOPE_ROOT or /autograder

It grades ROOT/submission in the sandbox with the course in ROOT/source and writes
ROOT/results/results.json. Whatever happens, results.json is written: a grader failure gives
every check 0 with a message asking the student to tell the instructor (as `attnkit grade`
does), never a silent zero and never Gradescope's bare "autograder failed". With a late policy in
course.yml, Gradescope's submission time (submission_metadata.json `created_at`) is held against
the due date (gradescope/late.py) and the penalty taken off the total, said in the top text.
"""

from __future__ import annotations

import json
import os
import sys
import time
from pathlib import Path

from autograder.gradescope.settings import DEFAULT_ROOT, ROOT_ENV, SETTINGS_FILE, GradescopeSettings

SOURCE_COURSE = "course.yml"


def gradescope_root() -> Path:
    return Path(os.environ.get(ROOT_ENV) or DEFAULT_ROOT)


def run(root: Path) -> dict:
    from autograder.checks import check_ids
    from autograder.grading.grade import grade, grading_sandbox
    from autograder.grading.student import Student, grader_failure
    from autograder.config import load_course
    from autograder.gradescope.results import results_json
    from autograder.gradescope.late import late_lines, runner_late
    from autograder.gradescope.student_id import read_metadata, submission_student
    from autograder.gradescope.submission import find_submission
    from autograder.grading.preflight import run_preflight
    from autograder.results import dumps, write_atomic

    started = time.monotonic()
    source, submission, results = root / "source", root / "submission", root / "results"
    settings = _settings(source / SETTINGS_FILE)
    course = load_course(source / SOURCE_COURSE, known_checks=check_ids())
    notes: tuple[str, ...] = ()
    metadata = read_metadata(root)
    try:
        found = find_submission(submission, tuple(course.exercises))
        notes = found.notes
        # Hidden from the student's code: the upload itself, the course and kit, the results
        # (a private mount namespace where the container allows one; and root-only permissions,
        # which hold for the children's unprivileged uid where it does not).
        hide = tuple(str(p) for p in (submission, source, results) if p.is_dir())
        _root_only(hide)
        with grading_sandbox(course.limits, hide=hide) as sandbox:
            run_preflight(course, sandbox)      # the kit's solutions at full marks here first
            result = grade(Student("submission", found.folder), course, sandbox,
                                   identity=submission_student(root, metadata))     # whose variant: Gradescope's metadata
    except Exception as err:  # noqa: BLE001 - a result is written whatever happens
        result = grader_failure(Student("submission", submission), course, err)
    try:     # course.yml's late policy on Gradescope's submission time (none: Gradescope's own)
        late = runner_late(course, metadata)
    except ValueError as err:
        late, notes = None, (*notes, f"late work: {err}; no penalty applied")
    penalty = late.penalty(result.score) if late is not None else 0.0
    if late is not None:
        notes = (*late_lines(late, result.score, result.max_score), *notes)
    data = results_json(result, course, settings, notes=notes, execution_time=time.monotonic() - started)
    if penalty:     # the tests keep what each check earned; a row of its own takes the penalty off,
        # so the rows add up to the total Gradescope shows
        data["score"] = round(result.score - penalty, 2)
        data["tests"].append({"name": "late penalty", "score": -round(penalty, 2), "max_score": 0,
                              "status": "failed", "output": late_lines(late, result.score, result.max_score)[0],
                              "visibility": "visible"})
        for entry in data.get("leaderboard", ()):
            entry["value"] = data["score"]
    write_atomic(results / "results.json", dumps(data))
    return data


def _root_only(folders: tuple[str, ...]) -> None:
    if os.geteuid() != 0:
        return
    for folder in folders:
        try:
            os.chmod(folder, 0o700)
        except OSError:
            pass


def _settings(path: Path) -> GradescopeSettings:
    try:
        return GradescopeSettings.model_validate_json(path.read_text(encoding="utf-8"))
    except OSError:
        return GradescopeSettings()


def main() -> int:
    root = gradescope_root()
    data = run(root)
    # The log Gradescope keeps (hidden from students by default): the score, and per exercise
    # what failed. The student's own prints stay in the sandbox's capped capture.
    print(f"attnkit: {data['score']:g}/{data['max_score']:g} written to {root / 'results' / 'results.json'}")
    for test in data["tests"]:
        if test["status"] != "passed":
            said = [line for line in test["output"].splitlines() if line.strip() and not line.startswith("```")]
            print(f"  {test['name']}: {said[0][:160] if said else 'failed'}")   # the first line, not a fence
    print(json.dumps({"output": data["output"]})[:2000])
    return 0


if __name__ == "__main__":
    sys.exit(main())
