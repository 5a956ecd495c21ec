"""Red team: what the grader parses itself of a student's upload is bounded, and no one
else pays for it.

Three uploads attack the parsers the grader runs before any sandbox applies: a .tar.gz whose first
member is a pax header of digits (tarfile parses it in time quadratic in their number, holding
the interpreter), a .tar.gz whose GNU long-name header declares gigabytes (tarfile reads them
whole), and a notebook of long cells with `!` lines (IPython's input transformer reads the whole
cell again for each one). Each sits in a class beside honest students (copies of the solutions:
full marks) graded by `attnkit grade` in a subprocess, as a user runs it, under a 2 GiB memory
cap (tests/memory_capped.py) and a timeout: the run must finish, write grades.csv, keep the honest
students' full marks and tell the attacker which upload was refused. The same on a Dask worker
and under `nbgrader autograde`.

Then the budget: an honest submission's time is its own children's, never a stall of the grader
nor its work between calls; and a result whose failure is the grader's is graded again on resume.
"""

from __future__ import annotations

import csv
import gzip
import io
import json
import os
import re
import subprocess
import sys
import tarfile
import threading
import time
from pathlib import Path

import pytest
import yaml

from autograder.config import KIT_ROOT
from autograder.results import SubmissionResult
from tests.memory_capped import run_capped

SOLUTIONS = KIT_ROOT / "solutions"
CAP_MB = 2048
# The sandbox's children take their memory limit under the grader's cap: where that cap is RLIMIT_AS
# (no cgroup for a normal user), which they inherit, theirs must fit below it.
CHILD_MB = 1024
FULL_MARKS = 60
# Long enough for the run with bounded parsers on a loaded machine; a parser that is not bounded
# takes minutes of CPU on each attack.
RUN_TIMEOUT = 240


# ---------------------------------------------------------------------- the uploads


def pax_digits_tgz(digits: int = 250_000) -> bytes:
    """A .tar.gz (a few hundred bytes) whose first member is a pax header of `digits` digits."""
    info = tarfile.TarInfo("././@PaxHeader")
    info.type, info.size = tarfile.XHDTYPE, digits
    tar = info.tobuf(format=tarfile.USTAR_FORMAT) + _padded(b"1" * digits) + b"\0" * 1024
    return gzip.compress(tar, 9)


def gnu_long_name_tgz(declared: int = 4 << 30) -> bytes:
    """A .tar.gz of about 4 MB whose GNU long-name header declares `declared` bytes of zeros: gzip
    members of 64 MB of zeros each, one after the other (a gzip file may hold several)."""
    info = tarfile.TarInfo("././@LongLink")
    info.type, info.size = tarfile.GNUTYPE_LONGNAME, declared
    zeros = gzip.compress(b"\0" * (64 << 20), 9)
    return gzip.compress(info.tobuf(format=tarfile.GNU_FORMAT), 9) + zeros * (declared // (64 << 20))


def escaped_notebook(cells: int = 3, lines: int = 8_000, escaped: int = 200) -> bytes:
    """A notebook of `cells` code cells of `lines` lines, `escaped` of them `!` lines."""
    step = lines // escaped
    source = "\n".join("!echo hi" if i % step == 0 else f"x{i} = {i}" for i in range(lines))
    made = [{"cell_type": "code", "id": f"long-{i}", "metadata": {}, "execution_count": None, "outputs": [],
             "source": source} for i in range(cells)]
    return json.dumps({"nbformat": 4, "nbformat_minor": 5, "metadata": {}, "cells": made}).encode()


def _padded(data: bytes) -> bytes:
    return data + b"\0" * (-len(data) % 512)


# ---------------------------------------------------------------------- a class with one attacker


HONEST = ("honest_a", "honest_b")


def build_class(root: Path, attacker: dict[str, bytes]) -> Path:
    """Two honest students (the solutions) and `attacker` (file name -> bytes) beside the witness
    hand_computation.py, whose grade shows the attacker's other work is graded."""
    class_dir = root / "class"
    for name in HONEST:
        folder = class_dir / name
        folder.mkdir(parents=True)
        for path in SOLUTIONS.glob("*.py"):
            (folder / path.name).write_bytes(path.read_bytes())
    folder = class_dir / "attacker"
    folder.mkdir(parents=True)
    (folder / "hand_computation.py").write_bytes((SOLUTIONS / "hand_computation.py").read_bytes())
    for name, data in attacker.items():
        (folder / name).write_bytes(data)
    return class_dir


def why_not_graded(out: Path, name: str, row: dict) -> str:
    """A student's row and what their result says went wrong (a grader's failure leaves the total
    empty; its reason is in the result), for a failing assertion."""
    try:
        told = (out / "results" / f"{name}.json").read_text(encoding="utf-8")
    except OSError as err:
        told = f"no result: {err}"
    return f"{name}: {row}; {told[:4000]}"


def course_file(root: Path, exercises: tuple[str, ...] | None = None) -> Path:
    """The kit's course.yml (its `exercises` only, when given), its children's memory at CHILD_MB."""
    data = yaml.safe_load((KIT_ROOT / "course.yml").read_text(encoding="utf-8"))
    data["limits"]["memory_mb"] = CHILD_MB
    if exercises is not None:
        data["exercises"] = {stem: data["exercises"][stem] for stem in exercises}
    path = root / "course.yml"
    path.write_text(yaml.safe_dump(data, sort_keys=False), encoding="utf-8")
    return path


def kit_env(tmp: Path | None = None) -> dict:
    """The kit importable; `tmp`: the run's temporary folder (the uploads it unpacks are staged there,
    not among other tests' in the system's)."""
    env = dict(os.environ, PYTHONPATH=os.pathsep.join(filter(None, [str(KIT_ROOT), os.environ.get("PYTHONPATH")])))
    if tmp is not None:
        tmp.mkdir(exist_ok=True)
        env["TMPDIR"] = str(tmp)
    return env


def attnkit_grade(class_dir: Path, out: Path):
    """`attnkit grade` as a user runs it, under the memory cap; a run past RUN_TIMEOUT fails the test."""
    argv = [sys.executable, "-m", "autograder.cli", "--course", str(course_file(class_dir.parent)), "grade",
            str(class_dir), "--out", str(out), "--jobs", "2"]
    try:
        return run_capped(argv, memory_mb=CAP_MB, timeout=RUN_TIMEOUT, env=kit_env(class_dir.parent / "tmp"),
                          cwd=str(class_dir.parent))
    except subprocess.TimeoutExpired:
        pytest.fail(f"`attnkit grade` did not finish within {RUN_TIMEOUT} s")


def assert_only_the_attacker_paid(run, out: Path, refused: str, said: str) -> SubmissionResult:
    """The run finished under the cap, grades.csv holds everyone, the honest students have full
    marks, and the attacker's result says `said` of the upload `refused`. Returns the attacker's."""
    assert run.returncode == 0 and not run.out_of_memory, (run.capped_by, run.returncode, run.stderr[-3000:])
    rows = {r["student"]: r for r in csv.DictReader(io.StringIO((out / "grades.csv").read_text(encoding="utf-8")))}
    assert sorted(rows) == sorted([*HONEST, "attacker"]), rows
    for name in HONEST:
        assert rows[name]["total"] and float(rows[name]["total"]) == FULL_MARKS, why_not_graded(out, name, rows[name])
    assert float(rows["attacker"]["hand_computation"]) == 7, rows["attacker"]
    data = json.loads((out / "results" / "attacker.json").read_text(encoding="utf-8"))
    told = json.dumps(data["extra_data"]["result"])
    assert re.search(re.escape(refused) + r"[^\"]*" + said, told), told[:3000]
    return SubmissionResult.from_dict(data["extra_data"]["result"])


# past its CPU time or memory; or, on a machine so busy the parse got its CPU time slowly, its wall time
ARCHIVE_REFUSED = "was not opened: reading it (?:needs|took) more than"
NOTEBOOK_REFUSED = "was not read: reading it (?:needs|took) more than"


@pytest.mark.slow
def test_a_pax_header_of_digits_costs_its_author_alone(tmp_path):
    class_dir = build_class(tmp_path, {"attention.tar.gz": pax_digits_tgz()})
    run = attnkit_grade(class_dir, tmp_path / "out")
    assert_only_the_attacker_paid(run, tmp_path / "out", "attention.tar.gz", ARCHIVE_REFUSED)


@pytest.mark.slow
def test_a_long_name_header_of_gigabytes_costs_its_author_alone_within_the_memory_cap(tmp_path):
    class_dir = build_class(tmp_path, {"attention.tar.gz": gnu_long_name_tgz()})
    run = attnkit_grade(class_dir, tmp_path / "out")
    assert_only_the_attacker_paid(run, tmp_path / "out", "attention.tar.gz", ARCHIVE_REFUSED)


@pytest.mark.slow
def test_a_notebook_of_escaped_lines_costs_its_author_alone(tmp_path):
    class_dir = build_class(tmp_path, {"attention.ipynb": escaped_notebook()})
    run = attnkit_grade(class_dir, tmp_path / "out")
    result = assert_only_the_attacker_paid(run, tmp_path / "out", "attention.ipynb", NOTEBOOK_REFUSED)
    attention = result.exercise("attention")
    assert attention.graded_file == "attention.ipynb" and all(c.reason == "load_error" for c in attention.checks)


def python_of_definitions(functions: int = 70_000) -> bytes:
    """A .py under the size limit whose compiling takes the compiler seconds and hundreds of MB."""
    return "".join(f"def f{i}(a):\n    return a\n" for i in range(functions)).encode()


PYTHON_REFUSED = "(?:was not read: reading it (?:needs|took) more than|is too large to grade|cannot be compiled)"


@pytest.mark.slow
def test_a_python_file_that_is_costly_to_compile_costs_its_author_alone(tmp_path):
    class_dir = build_class(tmp_path, {"attention.py": python_of_definitions()})
    run = attnkit_grade(class_dir, tmp_path / "out")
    result = assert_only_the_attacker_paid(run, tmp_path / "out", "attention.py", PYTHON_REFUSED)
    assert all(c.reason == "load_error" for c in result.exercise("attention").checks)


def test_the_grader_compiles_no_large_python_file_itself(monkeypatch):
    """A .py past the in-process size is compiled in the bounded child; the grader only reads the
    answer (a file of exercises, a few KB, is compiled in the grader: its cost is bounded by its size)."""
    from autograder.intake import load

    def not_here(*args, **kwargs):
        raise AssertionError("the grader compiled a large student file in its own process")

    padding = "#" * (load.IN_PROCESS_BYTES + 1) + "\n"
    monkeypatch.setattr(load, "_compile_problem", not_here)
    broken = load.source_from_bytes(f"{padding}def softmax(x:\n    return x\n".encode(), "attention.py", ".py",
                                    "attention")
    assert isinstance(broken, load.LoadError) and "syntax error at line 2" in broken.message
    fine = f"{padding}def softmax(x):\n    return x\n"
    assert load.source_from_bytes(fine.encode(), "attention.py", ".py", "attention") == fine
    big = load.source_from_bytes(python_of_definitions(20_000), "attention.py", ".py", "attention")
    assert isinstance(big, load.LoadError) and "too large to grade" in big.message


# ---------------------------------------------------------------------- on a Dask worker


def test_the_client_sends_an_archive_as_it_is_for_the_worker_to_open(tmp_path):
    """The cluster's client packs an uploaded archive unopened (its parsers are the worker's)."""
    from autograder.cluster.transport import pack_submission, unpack_submission
    from autograder.checks.contract import STEMS

    data = pax_digits_tgz(2_000)
    folder = build_class(tmp_path, {"attention.tar.gz": data}) / "attacker"
    dest = tmp_path / "unpacked"
    dest.mkdir()
    unpack_submission(pack_submission(folder, STEMS).data, dest, STEMS)
    assert (dest / "attention.tar.gz").read_bytes() == data


@pytest.mark.slow
def test_on_a_dask_worker_the_uploads_cost_their_authors_alone(tmp_path):
    """The archive and the notebook attacks in one class graded on a worker under the memory cap."""
    pytest.importorskip("distributed")
    from tests.dask_capped import grade_on_capped_worker
    from tests.test_distributed import _env

    class_dir = build_class(tmp_path, {"attention.tar.gz": pax_digits_tgz(), "causal_mask.tar.gz": gnu_long_name_tgz()})
    notebook = class_dir / "notebook"
    notebook.mkdir()
    (notebook / "hand_computation.py").write_bytes((SOLUTIONS / "hand_computation.py").read_bytes())
    (notebook / "attention.ipynb").write_bytes(escaped_notebook())
    (tmp_path / "tmp").mkdir()      # where the worker stages the uploads it unpacks
    env = _env() | {"TMPDIR": str(tmp_path / "tmp")}
    run, out_of_memory, out = grade_on_capped_worker(tmp_path, class_dir, course_file(tmp_path), env, CAP_MB,
                                                     RUN_TIMEOUT)
    assert run.returncode == 0 and not out_of_memory, (run.returncode, run.stderr[-3000:])
    rows = {r["student"]: r for r in csv.DictReader(io.StringIO((out / "grades.csv").read_text(encoding="utf-8")))}
    for name in HONEST:
        assert rows[name]["total"] and float(rows[name]["total"]) == FULL_MARKS, why_not_graded(out, name, rows[name])
    for name, refused, said in (("attacker", "attention.tar.gz", ARCHIVE_REFUSED),
                                ("attacker", "causal_mask.tar.gz", ARCHIVE_REFUSED),
                                ("notebook", "attention.ipynb", NOTEBOOK_REFUSED)):
        assert rows[name]["hand_computation"] and float(rows[name]["hand_computation"]) == 7, why_not_graded(out, name, rows[name])
        told = (out / "results" / f"{name}.json").read_text(encoding="utf-8")
        assert re.search(re.escape(refused) + r"[^\"]*" + said, told), (name, refused, told[:3000])


LINK_FOLDERS, LINKS_EACH = 2, 3_000


def _worker_cpu_seconds(address: str) -> float:
    """CPU time the Dask worker process has used so far (its own threads; its sandboxes and parse
    children are processes of their own, with their own limits)."""
    import resource

    from distributed import Client

    with Client(address, timeout=60) as client:
        used = client.run(resource.getrusage, resource.RUSAGE_SELF)
    return sum(r.ru_utime + r.ru_stime for r in used.values())


def _many_entries(folder: Path, make) -> None:
    """LINK_FOLDERS subfolders of LINKS_EACH entries each, made by make(path)."""
    for i in range(LINK_FOLDERS):
        sub = folder / f"links{i}"
        sub.mkdir()
        for j in range(LINKS_EACH):
            make(sub / f"{j:05d}")


@pytest.mark.slow
def test_on_a_dask_worker_thousands_of_long_links_cost_the_worker_what_empty_files_do(tmp_path):
    """A student folder of thousands of symbolic links whose targets are 4,095 digits (in a tar, each
    one a pax record parsed in time quadratic in them, the worker's interpreter held) graded on a
    worker beside honest students: the worker spends on it no more than twice its own CPU time for a
    folder of as many empty files (each entry costs what creating it costs); every student has a
    row, the honest keep full marks and the attacker's own work is graded. The worker's temporary
    folder is a tmpfs, so that what is compared is the worker's work, not a disk's."""
    pytest.importorskip("distributed")
    import shutil
    import tempfile

    from tests.dask_capped import capped_worker
    from tests.test_distributed import _env

    class_dir = build_class(tmp_path, {})
    _many_entries(class_dir / "attacker", lambda path: path.symlink_to("1" * 4095))
    plain = class_dir / "plain"
    plain.mkdir()
    (plain / "hand_computation.py").write_bytes((SOLUTIONS / "hand_computation.py").read_bytes())
    _many_entries(plain, lambda path: path.write_bytes(b""))
    parked = tmp_path / "parked"
    parked.mkdir()
    for name in ("attacker", "plain"):       # graded one at a time, after the honest students
        (class_dir / name).rename(parked / name)
    worker_tmp = tempfile.mkdtemp(prefix="attnkit-test-", dir="/dev/shm")
    env = _env() | {"TMPDIR": worker_tmp}
    out, course = tmp_path / "out", course_file(tmp_path)
    try:
        with capped_worker(tmp_path, env, CAP_MB) as (address, cap, _procs):
            def grade(joining: str | None) -> float:
                if joining:
                    (parked / joining).rename(class_dir / joining)
                before = _worker_cpu_seconds(address)
                try:
                    run = subprocess.run([sys.executable, "-m", "autograder.cli", "--course", str(course), "grade",
                                          str(class_dir), "--out", str(out), "--scheduler", address],
                                         capture_output=True, text=True, timeout=RUN_TIMEOUT, env=env,
                                         cwd=str(tmp_path))
                except subprocess.TimeoutExpired:
                    pytest.fail(f"`attnkit grade --scheduler` did not finish within {RUN_TIMEOUT} s")
                assert run.returncode == 0, (run.returncode, run.stderr[-3000:])
                return _worker_cpu_seconds(address) - before

            grade(None)       # the honest students, and the worker's first grading
            files = grade("plain")        # each run sends only the student who joined it
            links = grade("attacker")
            out_of_memory = cap.out_of_memory()
    finally:
        shutil.rmtree(worker_tmp, ignore_errors=True)
    assert not out_of_memory
    rows = {r["student"]: r for r in csv.DictReader(io.StringIO((out / "grades.csv").read_text(encoding="utf-8")))}
    assert sorted(rows) == sorted([*HONEST, "attacker", "plain"]), rows
    for name in HONEST:
        assert rows[name]["total"] and float(rows[name]["total"]) == FULL_MARKS, why_not_graded(out, name, rows[name])
    for name in ("attacker", "plain"):
        assert rows[name]["hand_computation"] and float(rows[name]["hand_computation"]) == 7, why_not_graded(out, name, rows[name])
    assert links < 2 * files, (links, files)


# ---------------------------------------------------------------------- under nbgrader autograde


@pytest.mark.slow
def test_under_nbgrader_autograde_a_notebook_of_escaped_lines_costs_its_author_alone(tmp_path):
    """An honest student and one whose submitted notebook is the escaped one: `nbgrader autograde`
    (the kit reading the notebooks in nbgrader's own process) finishes under the cap; the honest
    student keeps full marks, the attacker's test cells say the notebook was not read."""
    import nbformat

    from tests.nbgrader_capped import CappedNbgraderCourse

    path = course_file(tmp_path, ("attention",))
    data = yaml.safe_load(path.read_text(encoding="utf-8"))
    course = CappedNbgraderCourse(tmp_path, path, kit_env(), CAP_MB, RUN_TIMEOUT)
    course.release()
    for student in ("honest", "attacker"):
        nb = course.released("attention")
        if student == "attacker":      # long cells of `!` lines after the student's own work
            long_cells = nbformat.reads(escaped_notebook().decode(), as_version=4).cells
            nb.cells.extend(nbformat.v4.new_code_cell(c.source) for c in long_cells)
        course.submit(student, "attention", nb)
    rows = course.autograde_and_export()
    assert rows["honest"] == sum(float(v if not isinstance(v, dict) else v["points"])
                                 for v in data["exercises"]["attention"]["checks"].values()), rows
    assert rows["attacker"] == 0, rows
    told = course.told("attacker", "attention")
    assert re.search("attention.ipynb " + NOTEBOOK_REFUSED, told), told[-2000:]


# ---------------------------------------------------------------------- the budget is the student's own time


BUSY = """
import time


def softmax(x, axis=-1):
    t = time.process_time()
    while time.process_time() - t < 0.05:
        pass
    return x
"""


def _digits_to_hold(seconds: float) -> int:
    """How many digits the regex below takes `seconds` over on this machine: its time grows with
    the square of their number, measured here on a small run."""
    started = time.perf_counter()
    re.search(rb"\d+ hdrcharset=", b"1" * 10_000)
    took = max(time.perf_counter() - started, 1e-4)
    return int(10_000 * (seconds / took) ** 0.5)


def _hold_the_interpreter(seconds: float = 3.0) -> threading.Thread:
    """A thread that holds the interpreter in one long C call (the regex tarfile's pax headers go
    through, on digits), as a parse in the grader would, for about `seconds` on this machine."""
    digits = _digits_to_hold(seconds)
    thread = threading.Thread(target=lambda: re.search(rb"\d+ hdrcharset=", b"1" * digits), daemon=True)
    thread.start()
    return thread


def test_a_stall_of_the_grader_is_not_charged_to_the_submission_being_graded(sandbox):
    from textwrap import dedent

    outcomes = []
    with sandbox.budget(2.0) as budget:
        with sandbox.session("attention", dedent(BUSY), "attention.py") as s:
            outcomes.append(s.call("softmax", [1.0]))
            started = time.monotonic()
            holder = _hold_the_interpreter()
            outcomes += [s.call("softmax", [1.0]) for _ in range(5)]
            holder.join()
            stood = time.monotonic() - started
    assert stood > 2.0, f"the interpreter was held only {stood:.1f} s: the test proves nothing here"
    assert [o.status for o in outcomes] == ["ok"] * 6, [(o.status, o.message) for o in outcomes]
    assert budget.used < 2.0, budget


def test_the_graders_own_work_between_calls_is_not_charged_to_the_submission(sandbox):
    from textwrap import dedent

    with sandbox.budget(1.0) as budget:
        with sandbox.session("attention", dedent(BUSY), "attention.py") as s:
            outcomes = []
            for _ in range(4):
                outcomes.append(s.call("softmax", [1.0]))
                time.sleep(0.4)      # the grader checking the answer, diagnosing, drawing
    assert [o.status for o in outcomes] == ["ok"] * 4, [(o.status, o.message) for o in outcomes]
    assert budget.used < 1.0, budget


# ---------------------------------------------------------------------- a failure of the grader is graded again


def _graded_result(course, reason: str = "") -> SubmissionResult:
    from autograder.results import CheckResult, ExerciseResult

    exercises = []
    for stem, ex in course.exercises.items():
        checks = tuple(CheckResult(cid, stem, cid, "passed", cfg.points, cfg.points, hidden=cfg.hidden)
                       for cid, cfg in ex.checks.items())
        exercises.append(ExerciseResult(stem, ex.title, checks))
    if reason:
        first = exercises[0].checks[0]
        exercises[0] = ExerciseResult(exercises[0].stem, exercises[0].title, (
            CheckResult(first.check_id, first.exercise, first.title, "error", 0.0, first.max_score, "stopped",
                        hidden=first.hidden, reason=reason), *exercises[0].checks[1:]))
    return SubmissionResult("ada", tuple(exercises), course.seed, course.assignment)


def test_a_stored_result_with_a_failure_of_the_grader_is_not_reused(tmp_path, course):
    from autograder.grading.student import Student, fingerprint, load_previous, result_path, result_text, run_key

    out, folder = tmp_path / "out", tmp_path / "class" / "ada"
    folder.mkdir(parents=True)
    (out / "results").mkdir(parents=True)
    student = Student("ada", folder)
    key, fp = run_key(out), fingerprint(student, course)
    path = result_path(out, "ada")
    path.write_text(result_text(_graded_result(course), fp, course, key))
    assert load_previous(out, student, fp, key) is not None
    path.write_text(result_text(_graded_result(course, "grader_error"), fp, course, key))
    assert load_previous(out, student, fp, key) is None


def test_a_timeout_while_the_grader_stood_still_is_the_graders(course):
    from autograder.grading.submission import _stalls_are_the_graders
    from autograder.sandbox.outcome import Budget

    result = _graded_result(course, "timeout")
    calm = _stalls_are_the_graders(result.exercises, Budget(60.0, used=3.0))
    assert [c.reason for e in calm for c in e.checks] == [c.reason for c in result.checks]
    stalled = _stalls_are_the_graders(result.exercises, Budget(60.0, used=3.0, stalled=30.0))
    first = stalled[0].checks[0]
    assert first.reason == "grader_error" and "graded again" in first.message, first


def test_a_call_the_sandbox_itself_failed_is_the_graders():
    from autograder.checks.base import StudentCallError
    from autograder.grading.student_implementation import StudentImplementation
    from autograder.sandbox.outcome import CallOutcome, Reason

    implementation = StudentImplementation.__new__(StudentImplementation)
    implementation._filename, implementation._stem, implementation._source = "attention.py", "attention", ""
    implementation._defined_in_skipped = {}
    with pytest.raises(StudentCallError) as raised:
        implementation._unwrap("softmax", CallOutcome("crashed", reason=Reason.SANDBOX,
                                                      message="the sandbox's server process died"))
    assert raised.value.status == "grader_error", raised.value.status
