"""The local class loop keeps its workers busy (issue 23.1): while the main thread writes one
student's files, the worker that graded them is already grading the next student."""

from __future__ import annotations

import threading

from autograder.grading import class_run
from autograder.grading.class_run import ClassRun, LocalGrading
from autograder.grading.student import unanswered

WAIT_S = 20.0      # a bound for a stuck test, not a timing: the event comes at once or never


def test_a_worker_grades_the_next_student_while_the_last_ones_files_are_written(tmp_path, course, monkeypatch):
    for name in ("ada", "bob", "cyd"):
        (tmp_path / "class" / name).mkdir(parents=True)
        (tmp_path / "class" / name / "attention.py").write_text("x = 1\n", encoding="utf-8")
    started: list[str] = []
    next_started = threading.Event()

    def grade_student(student, course, box):      # the grading itself does not matter here
        started.append(student.name)
        if len(started) >= 2:
            next_started.set()
        return unanswered(student, course, "stand-in", "refused")

    monkeypatch.setattr(class_run, "grade_student", grade_student)
    seen_while_writing: list[bool] = []

    def on_result(result, reused):
        if not seen_while_writing:      # the first student's files: the one worker is free meanwhile
            seen_while_writing.append(next_started.wait(WAIT_S))

    run = ClassRun(tmp_path / "class", tmp_path / "out", course, on_result=on_result)
    run.run(LocalGrading(course, jobs=1, isolation=False, preflight=False))
    assert seen_while_writing == [True]
    assert sorted(started) == ["ada", "bob", "cyd"]
