"""The local class loop keeps its workers busy: while the main thread writes one
student's files, the worker that graded them is already grading the next student."""

from __future__ import annotations

import os
import threading

from autograder.grading import local_grading
from autograder.grading.class_run import ClassRun
from autograder.grading.local_grading import LocalGrading
from autograder.grading.student import unanswered

WAIT_S = 20.0      # a bound for a stuck test, not a timing: the event comes at once or never


def test_a_worker_grades_the_next_student_while_the_last_ones_files_are_written(tmp_path, course, monkeypatch):
    for name in ("ada", "bob", "cyd"):
        (tmp_path / "class" / name).mkdir(parents=True)
        (tmp_path / "class" / name / "attention.py").write_text("x = 1\n", encoding="utf-8")
    started: list[str] = []
    next_started = threading.Event()

    def grade_student(student, course, box, **_):      # the grading itself does not matter here
        started.append(student.name)
        if len(started) >= 2:
            next_started.set()
        return unanswered(student, course, "stand-in", "refused")

    monkeypatch.setattr(local_grading, "grade", grade_student)
    seen_while_writing: list[bool] = []

    def on_result(result, reused):
        if not seen_while_writing:      # the first student's files: the one worker is free meanwhile
            seen_while_writing.append(next_started.wait(WAIT_S))

    run = ClassRun(tmp_path / "class", tmp_path / "out", course, on_result=on_result)
    run.run(LocalGrading(course, jobs=1, isolation=False, preflight=False))
    assert seen_while_writing == [True]
    assert sorted(started) == ["ada", "bob", "cyd"]


def test_an_automatic_run_adds_a_lane_for_a_large_class(monkeypatch, course):
    """Without --jobs: one lane per core, and one more from SPARE_LANE_FROM students to grade (it
    fills the moments a lane waits; its sandbox's start is paid back from about that size). --jobs
    is taken as given."""
    monkeypatch.setattr(local_grading, "default_jobs", lambda: 2)
    monkeypatch.setattr(local_grading, "solution_sources", lambda course: [])    # no zygote started here
    assert local_grading.lanes_for(None, local_grading.SPARE_LANE_FROM - 1) == 2
    assert local_grading.lanes_for(None, local_grading.SPARE_LANE_FROM) == 3
    assert local_grading.lanes_for(2, 10_000) == 2 and local_grading.lanes_for(5, 3) == 5
    grading = LocalGrading(course, jobs=None, isolation=False, preflight=False)
    for to_grade, lanes in ((3, 2), (local_grading.SPARE_LANE_FROM, 3)):
        grading.start((), to_grade)
        assert (grading.jobs, grading.in_flight) == (lanes, 2 * lanes)
        grading.close()


def test_every_lanes_sandbox_starts_its_zygotes_before_the_first_student(monkeypatch, course):
    """At the start: one sandbox per lane (none more than students to grade), each starting the
    zygotes the course's solutions need, without waiting for them (waiting, the preflight would
    leave the other core idle for the first sandbox's, and each lane's first student wait for its
    own)."""
    monkeypatch.setattr(local_grading, "solution_sources", lambda course: ["import numpy\n\ndef f(x):\n    return numpy.exp(x)\n"])
    grading = LocalGrading(course, jobs=2, isolation=False, preflight=False)
    try:
        for to_grade, boxes in ((1, 1), (5, 2)):
            grading.start((), to_grade)
            assert len(grading._free) == boxes
            assert all((False, False) in box.zygotes.by_needs for box in grading._free)
            assert not any((True, True) in box.zygotes.by_needs for box in grading._free)
            grading.close()
            grading._free.clear()
    finally:
        grading.close()


def _parent(pid: int) -> int:
    with open(f"/proc/{pid}/stat", "rb") as f:
        return int(f.read().rsplit(b")", 1)[1].split()[1])


def _namespace(pid: int, kind: str) -> str:
    return os.readlink(f"/proc/{pid}/ns/{kind}")


def test_the_lanes_zygotes_of_a_kind_are_forks_of_one_import_each_jailed_as_its_lane(monkeypatch, course):
    """numpy (torch, matplotlib) is imported once for the class, by a template that forks each
    lane's zygote; each fork builds its own jail (its namespaces, as root its private uid), and
    the template is gone when the run closes."""
    monkeypatch.setattr(local_grading, "solution_sources", lambda course: ["import numpy\n\ndef f(x):\n    return numpy.exp(x)\n"])
    grading = LocalGrading(course, jobs=2, isolation=False, preflight=False)
    try:
        grading.start((), 5)
        first, second = (box.zygotes.get((False, False)) for box in grading._free)
        template = _parent(first.pid)
        assert template == _parent(second.pid) and template != os.getpid() and _parent(template) == os.getpid()
        assert first.pid != second.pid and first.proc.template is second.proc.template
        if first.layers.get("jailed"):
            for kind in ("user", "net", "mnt", "ipc"):
                assert len({_namespace(p, kind) for p in (template, first.pid, second.pid)}) == 3, kind
        if os.geteuid() == 0 and course.limits.drop_privileges:
            uids = [os.stat(f"/proc/{p}").st_uid for p in (first.pid, second.pid)]
            assert uids[0] != uids[1] and 0 not in uids
    finally:
        grading.close()
    assert not os.path.exists(f"/proc/{template}")


def test_a_class_is_graded_with_the_interpreter_as_the_caller_set_it(tmp_path, course, monkeypatch):
    """The run leaves the interpreter's switch interval alone (a shorter one earned under 10%:
    benchmarks/results/speedups.json)."""
    import sys

    (tmp_path / "class" / "ada").mkdir(parents=True)
    (tmp_path / "class" / "ada" / "attention.py").write_text("x = 1\n", encoding="utf-8")
    seen: list[float] = []

    def grade_student(student, course, box, **_):
        seen.append(sys.getswitchinterval())
        return unanswered(student, course, "stand-in", "refused")

    monkeypatch.setattr(local_grading, "grade", grade_student)
    before = sys.getswitchinterval()
    ClassRun(tmp_path / "class", tmp_path / "out", course).run(
        LocalGrading(course, jobs=1, isolation=False, preflight=False))
    assert seen == [before]
    assert sys.getswitchinterval() == before


def _three_students(tmp_path):
    for name in ("ada", "bob", "cyd"):
        (tmp_path / "class" / name).mkdir(parents=True)
        (tmp_path / "class" / name / "attention.py").write_text("x = 1\n", encoding="utf-8")


def test_the_preflight_is_graded_beside_the_first_students_and_no_result_comes_before_it(tmp_path, course,
                                                                                        monkeypatch):
    """The first run after the kit changed: the preflight grades the solutions on the first
    sandbox while a lane grades a student on another, and that student's result is
    written only once the preflight has passed."""
    from autograder.grading.preflight import Preflight, PreflightStatus

    _three_students(tmp_path)
    a_student_graded = threading.Event()
    events: list[str] = []

    def grade_student(student, course, box, **_):
        a_student_graded.set()
        return unanswered(student, course, "stand-in", "refused")

    def grade_preflight(course, box):
        events.append(f"student graded during the preflight: {a_student_graded.wait(WAIT_S)}")
        events.append("preflight passed")
        return Preflight(PreflightStatus.PASSED, 0.1)

    monkeypatch.setattr(local_grading, "grade", grade_student)
    monkeypatch.setattr(local_grading, "preflight_known", lambda *args, **kwargs: None)
    monkeypatch.setattr(local_grading, "grade_preflight", grade_preflight)
    monkeypatch.setattr(local_grading, "solution_sources", lambda course: [])
    seen: list[Preflight] = []
    run = ClassRun(tmp_path / "class", tmp_path / "out", course, on_preflight=seen.append,
                   on_result=lambda result, reused: events.append(f"result {result.student}"))
    run.run(LocalGrading(course, jobs=2, isolation=False))
    assert events[:2] == ["student graded during the preflight: True", "preflight passed"]
    assert sorted(events[2:]) == ["result ada", "result bob", "result cyd"]
    assert [p.status for p in seen] == [PreflightStatus.PASSED]


def test_a_preflight_that_fails_beside_the_first_students_writes_none_of_their_results(tmp_path, course,
                                                                                       monkeypatch):
    import pytest

    from autograder.grading.preflight import PreflightFailed

    _three_students(tmp_path)
    a_student_graded = threading.Event()

    def grade_student(student, course, box, **_):
        a_student_graded.set()
        return unanswered(student, course, "stand-in", "refused")

    def grade_preflight(course, box):
        a_student_graded.wait(WAIT_S)
        raise PreflightFailed(1.0, 2.0, [("attention.softmax.values", "not seen")])

    monkeypatch.setattr(local_grading, "grade", grade_student)
    monkeypatch.setattr(local_grading, "preflight_known", lambda *args, **kwargs: None)
    monkeypatch.setattr(local_grading, "grade_preflight", grade_preflight)
    monkeypatch.setattr(local_grading, "solution_sources", lambda course: [])
    with pytest.raises(PreflightFailed, match="no grade was written"):
        ClassRun(tmp_path / "class", tmp_path / "out", course).run(LocalGrading(course, jobs=2, isolation=False))
    assert a_student_graded.is_set()
    assert not list((tmp_path / "out" / "results").glob("*.json"))
