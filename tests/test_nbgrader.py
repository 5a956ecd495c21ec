"""The exercises as an nbgrader course: the generated course, the test cells' grader, the
gradebook, and the real nbgrader end to end (generate_assignment, autograde, generate_feedback,
export) on a small class: the solution, the released stub, and a buggy notebook that also
monkeypatches numpy, torch and the kit in its kernel."""

from __future__ import annotations

import csv
import json
import os
import re
import subprocess
import sys
from pathlib import Path

import nbformat
import pytest
import yaml

from autograder.checks import CHECKS
from autograder.config import DEFAULT_COURSE, KIT_ROOT
from autograder.nbgrader.cells import load_notebook
from autograder.handout.notebook_tests import report_html
from autograder.results import HIDDEN_CHECK_NOTE
from autograder.nbgrader.course import (COURSE_FILE, WRITTEN_QUESTIONS, CourseError,
                                        execute_timeout, task_grade_id, write_course)
from autograder.nbgrader.shared_machine import NBGRADER_EXCHANGE

ASSIGNMENT = "self_attention"


def _cells(path: Path):
    return nbformat.read(path, as_version=4).cells


def _meta(cell) -> dict:
    return cell.metadata.get("nbgrader", {})


# --------------------------------------------------------------------------- the generated course


def test_the_course_has_one_notebook_per_exercise_with_nbgrader_cells(course, tmp_path):
    written = write_course(tmp_path, KIT_ROOT, course)
    source = tmp_path / "source" / ASSIGNMENT
    # the notebooks, and the handout's checker their test cells run (released with them)
    from autograder.handout.write import MODULES

    assert sorted(p.name for p in source.iterdir()) == sorted(
        [f"{s}.ipynb" for s in course.exercises] + ["check.py", "check_data", *{m.split("/")[0] for m in MODULES},
                                                    "attnkit_tests.py", "attnkit_tests.json"])
    assert tmp_path / "nbgrader_config.py" in written and (tmp_path / COURSE_FILE).is_file()
    for stem in course.exercises:
        cells = _cells(source / f"{stem}.ipynb")
        ids = [_meta(c)["grade_id"] for c in cells if _meta(c)]
        assert len(ids) == len(set(ids)), stem
        solutions = [c for c in cells if "### BEGIN SOLUTION" in c.source]
        assert solutions
        for cell in solutions:
            assert cell.cell_type == "code"
            assert {k: _meta(cell)[k] for k in ("solution", "grade", "locked", "schema_version")} == \
                {"solution": True, "grade": False, "locked": False, "schema_version": 3}
        tests = [c for c in cells if _meta(c).get("grade") and not _meta(c).get("solution")]
        # The autograded points of a notebook are course.yml's, task by task.
        assert sum(_meta(c)["points"] for c in tests) == course.max_points(stem)
        tasks = {".".join(c.id.split(".")[:2]) for c in CHECKS[stem]}
        assert {_meta(c)["grade_id"] for c in tests} == {task_grade_id(t) for t in tasks}
        table = json.loads((source / "attnkit_tests.json").read_text())
        for cell in tests:
            assert cell.cell_type == "code" and _meta(cell)["locked"] is True
            task = next(t for t in tasks if task_grade_id(t) == _meta(cell)["grade_id"])
            # a few lines a student can read: what is tested and one call naming the task
            assert cell.source.splitlines()[-2:] == ["import attnkit_tests", f'attnkit_tests.run("{task}")']
            assert len(cell.source.splitlines()) <= 5 and max(map(len, cell.source.splitlines())) <= 80
            spec = table[task]
            assert spec["exercise"] == stem and spec["points"] == _meta(cell)["points"]
            assert 0 < spec["timeout"] < execute_timeout(course)   # the cell's own wait ends before nbgrader's
            ids = [c.id for c in CHECKS[stem] if c.id.startswith(task + ".")]
            # Only the visible checks are run by the released cell: the release equals the source
            # cell (no checksum change), and the hidden ids are only in the course file.
            assert spec["checks"] == [c for c in ids if not course.check(c).hidden]
            assert "HIDDEN TESTS" not in cell.source and not any(c in cell.source for c in ids)
            header = re.search(r"\((\d+) points\)", cell.source)
            assert float(header.group(1)) == _meta(cell)["points"]
            hidden_pts = sum(course.check(c).points for c in ids if course.check(c).hidden)
            assert (f"# {hidden_pts:g} of the" in cell.source) == (hidden_pts > 0)
        written_qs = [c for c in cells if _meta(c).get("grade") and _meta(c).get("solution")]
        expected = [q for q in WRITTEN_QUESTIONS if q.stem == stem]
        assert [(_meta(c)["grade_id"], _meta(c)["points"]) for c in written_qs] == \
            [(q.grade_id, q.points) for q in expected]
        assert all(c.cell_type == "markdown" for c in written_qs)
    assert (source / "attnkit_tests.py").read_bytes() == (KIT_ROOT / "autograder" / "handout" / "notebook_tests.py").read_bytes()
    config = (tmp_path / "nbgrader_config.py").read_text()
    assert f"c.Execute.timeout = {execute_timeout(course)}" in config
    # what release_assignment, fetch_assignment, submit and collect need
    assert "c.CourseDirectory.course_id = 'self_attention_from_scratch'" in config
    # the exchange is nbgrader's (its default, or a global config's), outside the course folder,
    # which only the instructor may enter; collect checks who made each submission
    assert not [line for line in config.splitlines() if line.startswith("c.Exchange.root")]
    assert not (tmp_path / "exchange").exists() and tmp_path.stat().st_mode & 0o777 == 0o700
    from nbgrader.exchange.default.exchange import Exchange

    assert NBGRADER_EXCHANGE == Exchange.class_traits()["root"].default_value
    assert "c.ExchangeFactory.collect = 'autograder.nbgrader.collect.OwnerCheckedCollect'" in config
    assert "configure(c)" in config              # the kit's preprocessors in nbgrader's autograde
    assert str(tmp_path) not in config           # the config finds its folder itself
    with pytest.raises(CourseError):
        write_course(tmp_path, KIT_ROOT, course)
    assert write_course(tmp_path, KIT_ROOT, course, force=True)


def test_the_subcommand_writes_a_course(course, tmp_path, capsys):
    from autograder.cli import main

    assert main(["nbgrader", str(tmp_path / "c")]) == 0
    assert (tmp_path / "c" / "source" / ASSIGNMENT / "attention.ipynb").is_file()
    # the totals nbgrader will count, computed from the course: every test and written cell's points
    cells = [_meta(c) for stem in course.exercises
             for c in _cells(tmp_path / "c" / "source" / ASSIGNMENT / f"{stem}.ipynb") if _meta(c).get("grade")]
    auto = sum(m["points"] for m in cells if not m["solution"])
    written = sum(m["points"] for m in cells if m["solution"])
    assert f"nbgrader will count {auto:g} autograded + {written:g} written = {auto + written:g} points" in \
        capsys.readouterr().out
    other = tmp_path / "shared-exchange"
    assert main(["nbgrader", str(tmp_path / "d"), "--course-id", "cs101", "--exchange", str(other)]) == 0
    config = (tmp_path / "d" / "nbgrader_config.py").read_text()
    assert "c.CourseDirectory.course_id = 'cs101'" in config and f"c.Exchange.root = {str(other)!r}" in config
    assert not (tmp_path / "d" / "exchange").exists()
    # an exchange inside the course would open the course folder to every student
    assert main(["nbgrader", str(tmp_path / "e"), "--exchange", str(tmp_path / "e" / "exchange")]) == 2
    assert "inside the course folder" in capsys.readouterr().out and not (tmp_path / "e").exists()
    assert main(["nbgrader", str(tmp_path / "c")]) == 2                 # no overwrite without --force
    assert main(["nbgrader", str(tmp_path / "c"), "--force"]) == 0


def test_collect_takes_a_folder_only_from_the_account_it_is_named_after(tmp_path):
    """What collect refuses (tests/test_nbgrader_accounts.py runs it with real accounts)."""
    from autograder.nbgrader.collect import account, entries, refusal

    me = account(os.getuid())
    folder = tmp_path / "submission"
    (folder / "data").mkdir(parents=True)
    (folder / "attention.ipynb").write_text("{}")
    assert refusal(entries(str(folder)), me, check_owner=True) is None
    assert refusal(entries(str(folder)), "ada", check_owner=True) == f"the folder is owned by {me}"
    assert refusal(entries(str(folder)), "ada", check_owner=False) is None     # one account for all
    (tmp_path / "link").symlink_to(folder)
    assert refusal(entries(str(tmp_path / "link")), me, check_owner=False) == "the folder is a symbolic link"
    (folder / "data" / "other.ipynb").symlink_to(tmp_path / "elsewhere.ipynb")
    assert refusal(entries(str(folder)), me, check_owner=True) == "data/other.ipynb is a symbolic link"
    (folder / "data" / "other.ipynb").unlink()
    os.mkfifo(folder / "pipe")
    assert refusal(entries(str(folder)), me, check_owner=True) == "pipe is neither a file nor a folder"


def test_collect_copies_by_descriptor_what_was_checked_and_refuses_what_changed(tmp_path):
    """A folder that passed collect's check and was changed before the copy (a file swapped for a
    link to another student's work) is refused at the copy, never followed."""
    from autograder.nbgrader.collect import Changed, account, confined_copy, entries, refusal

    me = account(os.getuid())
    victim = tmp_path / "victim.ipynb"
    victim.write_text("the victim's work")
    folder = tmp_path / "submission"
    (folder / "data").mkdir(parents=True)
    (folder / "attention.ipynb").write_text("mine")
    (folder / "data" / "notes.txt").write_text("notes")
    (folder / "skip.log").write_text("ignored")
    assert refusal(entries(str(folder)), me, check_owner=True) is None
    confined_copy(str(folder), str(tmp_path / "ok"), me, lambda d, names: [n for n in names if n.endswith(".log")], 10**6)
    assert (tmp_path / "ok" / "attention.ipynb").read_text() == "mine"
    assert (tmp_path / "ok" / "data" / "notes.txt").read_text() == "notes"
    assert not (tmp_path / "ok" / "skip.log").exists()
    # changed after the check
    (folder / "attention.ipynb").unlink()
    (folder / "attention.ipynb").symlink_to(victim)
    with pytest.raises(Changed, match="attention.ipynb cannot be opened as a file or folder"):
        confined_copy(str(folder), str(tmp_path / "raced"), me, None, 10**6)
    (folder / "attention.ipynb").unlink()
    (folder / "attention.ipynb").write_text("mine")
    with pytest.raises(Changed, match="owned by"):
        confined_copy(str(folder), str(tmp_path / "other"), "ada", None, 10**6)
    with pytest.raises(Changed, match="more than 5 bytes"):
        confined_copy(str(folder), str(tmp_path / "big"), me, None, 5)


def test_notebook_code_leaves_out_test_cells_and_nbgrader_stubs(tmp_path):
    nb = nbformat.v4.new_notebook()
    nb.cells = [nbformat.v4.new_code_cell("A = 1\n# YOUR CODE HERE\nraise NotImplementedError()"),
                nbformat.v4.new_code_cell("def f():\n    raise NotImplementedError()"),
                nbformat.v4.new_code_cell("%time x = 1\nprint('grading')")]
    nb.cells[2].metadata["nbgrader"] = {"grade": True, "solution": False, "grade_id": "t", "points": 1}
    path = tmp_path / "x.ipynb"
    nbformat.write(nb, path)
    code = load_notebook(path).source
    assert "A = 1" in code and "grading" not in code
    assert "\nraise NotImplementedError()" not in code             # the module-level stub is skipped
    assert "    raise NotImplementedError()" in code              # a function's stub stays: "not implemented"


def test_a_half_finished_hand_computation_keeps_its_finished_half(course, tmp_path, capsys):
    """nbgrader's module-level stub (`raise NotImplementedError()`) in part B must not stop
    part A's answers from being graded."""
    from autograder.nbgrader.cells import grade

    write_course(tmp_path / "course", KIT_ROOT, course)
    nb = nbformat.read(tmp_path / "course" / "source" / ASSIGNMENT / "hand_computation.ipynb", as_version=4)
    for cell in nb.cells:
        if "# Task: hand_computation.part_b" in cell.source:
            head, _, rest = cell.source.partition("### BEGIN SOLUTION")
            cell.source = head + "# YOUR CODE HERE\nraise NotImplementedError()" + rest.partition("### END SOLUTION")[2]
    path = tmp_path / "hand_computation.ipynb"
    nbformat.write(nb, path)
    score = grade(["hand_computation"], notebook=path, course_file=DEFAULT_COURSE)
    assert score == sum(course.check(c).points for c in course.exercises["hand_computation"].checks
                        if ".part_a." in c)
    out = capsys.readouterr().out
    assert "[PASS] hand_computation.part_a.weights" in out
    assert "CSM_SCORES is still None" in out


def test_the_cell_grader_runs_isolated_and_reports_json(course, tmp_path):
    """`python -I -m autograder.nbgrader.cells` still finds the installed kit (site-packages stay
    on the path under -I; the working folder does not), and a folder named autograder/ next to
    the notebook cannot stand in for it."""
    write_course(tmp_path / "course", KIT_ROOT, course)
    work = tmp_path / "work"
    work.mkdir()
    (work / "attention.ipynb").write_bytes((tmp_path / "course" / "source" / ASSIGNMENT /
                                            "attention.ipynb").read_bytes())
    (work / "autograder").mkdir()
    (work / "autograder" / "__init__.py").write_text("raise SystemExit('the fake kit was imported')\n")
    (work / "autograder" / "nbgrader").mkdir()
    (work / "autograder" / "nbgrader" / "cells.py").write_text("print('{\"attnkit\": 1, \"score\": 99}')\n")
    run = subprocess.run([sys.executable, "-I", "-m", "autograder.nbgrader.cells", "--notebook", "attention.ipynb",
                          "--points", "4", "attention.softmax"], cwd=work, capture_output=True, text=True,
                         timeout=120)
    assert run.returncode == 0, run.stderr
    result = [json.loads(line) for line in run.stdout.splitlines() if line.startswith('{"attnkit"')][-1]
    assert result["score"] == result["max_score"] == 4.0, result["report"]
    assert "[PASS] attention.softmax.stable" in result["report"]


def test_configure_puts_the_kit_first_in_sanitize_and_in_place_of_execute():
    from nbgrader.converters import Autograde
    from nbgrader.preprocessors import Execute, SaveAutoGrades
    from traitlets.config import Config

    from autograder.nbgrader.execute import ExecuteWhereNeeded
    from autograder.nbgrader.preprocessor import GradeInSandbox, SnapshotSubmissions, configure

    c = Config()
    configure(c)
    assert c.Autograde.sanitize_preprocessors[0] is SnapshotSubmissions
    auto = c.Autograde.autograde_preprocessors
    assert Execute not in auto                                    # nbgrader's own Execute is gone ...
    at = auto.index(ExecuteWhereNeeded)                           # ... its place taken by the kit's
    assert auto[at + 1] is GradeInSandbox and SaveAutoGrades in auto
    nbgraders = list(Autograde.class_traits()["autograde_preprocessors"].default())
    assert at == nbgraders.index(Execute)
    assert [p for p in auto if p not in (ExecuteWhereNeeded, GradeInSandbox)] == \
        [p for p in nbgraders if p is not Execute]               # the others as nbgrader has them


def test_execute_settings_reach_the_kits_execute(course, tmp_path):
    """The generated config's c.Execute.timeout applies to ExecuteWhereNeeded (a subclass), and
    `always` is off: no kernel unless a notebook needs one."""
    from traitlets.config import Config

    from autograder.nbgrader.execute import ExecuteWhereNeeded

    write_course(tmp_path, KIT_ROOT, course)
    c = Config()
    c.Execute.timeout = 4321
    c.ExecuteWhereNeeded.always = False
    assert "c.ExecuteWhereNeeded.always = False" in (tmp_path / "nbgrader_config.py").read_text()
    assert f"c.Execute.timeout = {execute_timeout(course)}" in (tmp_path / "nbgrader_config.py").read_text()
    pp = ExecuteWhereNeeded(config=c)
    assert pp.timeout == 4321 and pp.always is False and pp.allow_errors is True


def _kernel_runs(course, nb, stem, monkeypatch, always: bool = False) -> bool:
    """Whether ExecuteWhereNeeded starts a kernel for this notebook (nbgrader's Execute replaced
    by a recorder: no kernel is started by this test)."""
    from nbgrader.preprocessors import Execute

    from autograder.nbgrader.autograde_run import AutogradeRun
    from autograder.nbgrader.execute import ExecuteWhereNeeded

    ran = []
    monkeypatch.setattr(Execute, "preprocess", lambda self, nb, resources: (ran.append(stem), (nb, resources))[1])
    run = AutogradeRun(course=course, started=True)
    ExecuteWhereNeeded(always=always, run=run).preprocess(nb, {"nbgrader": {"student": "ada", "assignment": ASSIGNMENT, "notebook": stem}})
    return ran == [stem]


def test_no_kernel_for_a_notebook_whose_grades_the_kit_writes(course, tmp_path, monkeypatch):
    write_course(tmp_path, KIT_ROOT, course)
    source = tmp_path / "source" / ASSIGNMENT
    for stem in course.exercises:
        nb = nbformat.read(source / f"{stem}.ipynb", as_version=4)
        assert not _kernel_runs(course, nb, stem, monkeypatch), stem


def test_a_kernel_where_nbgrader_reads_outputs(course, tmp_path, monkeypatch):
    """An instructor's own assert cell (nbgrader would give it full marks unexecuted), a manually
    graded code cell, a notebook of no exercise of the course, and `always`: the kernel runs."""
    from autograder.nbgrader.execute import cells_needing_a_kernel, kit_test_cells

    write_course(tmp_path, KIT_ROOT, course)
    source = tmp_path / "source" / ASSIGNMENT

    def with_cell(meta: dict):
        nb = nbformat.read(source / "attention.ipynb", as_version=4)
        cell = nbformat.v4.new_code_cell("assert softmax(np.zeros(2)).sum() == 1")
        cell.metadata["nbgrader"] = dict(meta, schema_version=3)
        nb.cells.append(cell)
        return nb

    own_asserts = with_cell({"grade": True, "solution": False, "locked": True, "points": 1, "grade_id": "my_test"})
    assert cells_needing_a_kernel(own_asserts, kit_test_cells(course, "attention")) == ["my_test"]
    assert _kernel_runs(course, own_asserts, "attention", monkeypatch)
    manual = with_cell({"grade": True, "solution": True, "locked": False, "points": 2, "grade_id": "my_code"})
    assert _kernel_runs(course, manual, "attention", monkeypatch)
    # a kit grade id on a cell that is also a solution cell is not the kit's test cell
    posing = with_cell({"grade": True, "solution": True, "locked": False, "points": 2,
                        "grade_id": "tests_attention_softmax"})
    assert _kernel_runs(course, posing, "attention", monkeypatch)
    ungraded = with_cell({"grade": False, "solution": True, "locked": False, "grade_id": "helper"})
    assert not _kernel_runs(course, ungraded, "attention", monkeypatch)
    other = nbformat.read(source / "attention.ipynb", as_version=4)
    assert _kernel_runs(course, other, "extra_notebook", monkeypatch)
    assert _kernel_runs(course, nbformat.read(source / "attention.ipynb", as_version=4), "attention", monkeypatch,
                        always=True)


def test_the_preprocessors_grade_the_snapshot_and_overwrite_the_test_cells(course, tmp_path, monkeypatch):
    """In-process, without nbgrader's CLI: the code is read at the snapshot; a kernel that then
    empties the file and prints its own scores changes nothing."""
    import shutil

    from traitlets.config import Configurable

    from autograder.nbgrader import preprocessor as pp
    from autograder.nbgrader.cells import MARKER_ENV

    root = tmp_path / "course"
    write_course(root, KIT_ROOT, course)
    submitted = root / "submitted" / "ada" / ASSIGNMENT
    submitted.mkdir(parents=True)
    shutil.copy(root / "source" / ASSIGNMENT / "attention.ipynb", submitted / "attention.ipynb")
    monkeypatch.chdir(root)
    monkeypatch.setenv("ATTNKIT_COURSE", str(root / COURSE_FILE))
    monkeypatch.setenv(MARKER_ENV, "")
    resources = {"nbgrader": {"student": "ada", "assignment": ASSIGNMENT, "notebook": "attention"}}
    nb = nbformat.read(submitted / "attention.ipynb", as_version=4)
    # nbgrader makes each preprocessor under one converter, which keeps the run they share
    converter = Configurable()
    exporter = Configurable(parent=converter)
    try:
        pp.SnapshotSubmissions(parent=exporter).preprocess(nb, resources)
        assert os.environ[MARKER_ENV] == "1"                 # the kernels' test cells stand down
        nbformat.write(nbformat.v4.new_notebook(), submitted / "attention.ipynb")    # the kernel's doing
        tests = [c for c in nb.cells if _meta(c).get("grade") and not _meta(c).get("solution")]
        for cell in tests:
            cell.outputs = [nbformat.v4.new_output("execute_result", data={"text/plain": "99.0"}, execution_count=1)]
        pp.GradeInSandbox(parent=exporter).preprocess(nb, resources)
    finally:
        shared = getattr(converter, "_attnkit_run", None)
        if shared is not None:
            shared.close()
    for cell in tests:
        points = _meta(cell)["points"]
        assert [o.output_type for o in cell.outputs] == ["display_data", "execute_result"]
        assert float(cell.outputs[1]["data"]["text/plain"]) == points
        report = cell.outputs[0].data["text/plain"]
        assert report.endswith(f"score: {points:g} / {points:g}")
        assert cell.outputs[0].data["text/html"] == report_html(report)
    assert sum(_meta(c)["points"] for c in tests) == course.max_points("attention")


# --------------------------------------------------------------------------- the real nbgrader, end to end


def _nbgrader(course_dir: Path, *args: str, timeout: float = 600) -> subprocess.CompletedProcess:
    # nbgrader_config.py imports the kit: this tree's kit, whatever is installed
    env = dict(os.environ, PYTHONPATH=os.pathsep.join(filter(None, [str(KIT_ROOT), os.environ.get("PYTHONPATH")])))
    run = subprocess.run([sys.executable, "-m", "nbgrader", *args, f"--CourseDirectory.root={course_dir}"],
                         cwd=course_dir, capture_output=True, text=True, timeout=timeout, env=env)
    assert run.returncode == 0, f"nbgrader {' '.join(args)}:\n{run.stdout[-3000:]}\n{run.stderr[-3000:]}"
    return run


def _small_course(course_at, tmp_path: Path, stems: tuple[str, ...], exchange: Path | None = None):
    """The kit's course.yml cut to some exercises (a shorter run), and its course in tmp_path/course."""
    data = yaml.safe_load(DEFAULT_COURSE.read_text())
    data["exercises"] = {s: data["exercises"][s] for s in stems}
    course_file = tmp_path / "course.yml"
    course_file.write_text(yaml.safe_dump(data, sort_keys=False))
    small = course_at(course_file)
    write_course(tmp_path / "course", KIT_ROOT, small, course_file=course_file, exchange=exchange)
    return small, tmp_path / "course"


def _grades(csv_path: Path) -> dict[str, tuple[float, float]]:
    with open(csv_path, newline="") as fh:
        return {row["student_id"]: (float(row["score"]), float(row["max_score"])) for row in csv.DictReader(fh)}


SOFTMAX_STABLE = "shifted = x - np.max(x, axis=axis, keepdims=True)"
MASK_BEFORE = "        scores = np.where(allowed, scores, -1e9)  # (..., n_q, n_k)\n"
WEIGHTS_LINE = "    weights = softmax(scores, axis=-1)  # (..., n_q, n_k), each row sums to 1\n"
CHEAT = """\
import numpy as np, torch
np.allclose = lambda *a, **k: True
np.testing.assert_allclose = lambda *a, **k: None
torch.allclose = lambda *a, **k: True
try:
    import autograder.nbgrader.cells as _kit
    _kit.grade = lambda *a, **k: 100.0
    _kit.grade_notebook = lambda *a, **k: {"attnkit": 1, "score": 100.0, "max_score": 1.0, "report": "ok"}
    _kit.main = lambda *a, **k: print('{"attnkit": 1, "score": 100.0, "report": "ok"}')
except ImportError:
    pass
"""


def _buggy_attention(source: Path, target: Path) -> None:
    """Softmax without max-subtraction, the mask applied after the softmax, and a cell that
    monkeypatches numpy, torch and the kit's helper in the kernel."""
    nb = nbformat.read(source, as_version=4)
    edits = 0
    for cell in nb.cells:
        if SOFTMAX_STABLE in cell.source:
            cell.source = cell.source.replace(SOFTMAX_STABLE, "shifted = x")
            edits += 1
        if MASK_BEFORE in cell.source and WEIGHTS_LINE in cell.source:
            cell.source = cell.source.replace(MASK_BEFORE, "").replace(
                WEIGHTS_LINE, WEIGHTS_LINE + "    if mask is not None:\n        weights = weights * np.asarray(mask)\n")
            edits += 1
    assert edits == 2, "the solution changed: update the buggy student of this test"
    nb.cells.insert(2, nbformat.v4.new_code_cell(CHEAT))
    nbformat.write(nb, target)


@pytest.mark.slow
def test_nbgrader_generates_autogrades_gives_feedback_and_exports(course_at, course, tmp_path):
    # A smaller course keeps the run short: three exercises, one with hidden checks, one with a
    # written question and a module-level answer region.
    small, root = _small_course(course_at, tmp_path, ("hand_computation", "attention", "causal_mask"))

    # generate_assignment: no solution code, no hidden tests in the release
    _nbgrader(root, "generate_assignment", ASSIGNMENT, "--force")
    release = root / "release" / ASSIGNMENT
    hidden_ids = [cid for stem in small.exercises for cid in small.exercises[stem].checks
                  if small.check(cid).hidden]
    assert hidden_ids
    for stem in small.exercises:
        text = (release / f"{stem}.ipynb").read_text()
        assert "BEGIN SOLUTION" not in text and "HIDDEN TESTS" not in text
        assert not [cid for cid in hidden_ids if cid in text]
    assert "np.max(x, axis=axis, keepdims=True)" not in (release / "attention.ipynb").read_text()
    assert "0.7071" not in (release / "hand_computation.ipynb").read_text()
    assert (release / "check.py").is_file() and (release / "judge" / "forms.py").is_file()   # the checker, whole

    # a class of three
    source = root / "source" / ASSIGNMENT
    for student, folder in (("solution", source), ("stub", release), ("buggy", source)):
        target = root / "submitted" / student / ASSIGNMENT
        target.mkdir(parents=True)
        for stem in small.exercises:
            (target / f"{stem}.ipynb").write_bytes((folder / f"{stem}.ipynb").read_bytes())
    _buggy_attention(source / "attention.ipynb", root / "submitted" / "buggy" / ASSIGNMENT / "attention.ipynb")

    run = _nbgrader(root, "autograde", ASSIGNMENT, "--force")
    assert "Attribute 'checksum'" not in run.stdout + run.stderr      # untouched test cells: no warning
    _nbgrader(root, "export")
    grades = _grades(root / "grades.csv")
    auto_max = sum(small.max_points(s) for s in small.exercises)
    written = sum(q.points for q in WRITTEN_QUESTIONS if q.stem in small.exercises)
    assert grades["solution"] == (auto_max, auto_max + written)
    assert grades["stub"] == (0.0, auto_max + written)
    # The buggy notebook earns what it computed: the kit, grading the same file outside any
    # kernel, agrees to the point, and the monkeypatching bought nothing.
    from autograder.grading.submission import grade_submission
    from autograder.sandbox import Sandbox

    with Sandbox(small.limits) as sandbox:
        results = [grade_submission(root / "submitted" / s / ASSIGNMENT, small, sandbox, student=s)
                   for s in ("solution", "stub", "buggy")]
    kit = {r.student: r.score for r in results}
    assert 0 < grades["buggy"][0] < auto_max
    assert grades["buggy"][0] == kit["buggy"] == auto_max - 5    # softmax.stable, bool/binary/broadcast/padding mask
    assert kit["solution"] == auto_max

    # no kernel ran: the student's own cells have no outputs and no execution count (a kernel
    # numbers every cell it runs), only the kit's test cells do
    for student in ("solution", "stub", "buggy"):
        for stem in small.exercises:
            graded = nbformat.read(root / "autograded" / student / ASSIGNMENT / f"{stem}.ipynb", as_version=4)
            code = [c for c in graded.cells if c.cell_type == "code"]
            ran = [c for c in code if c.outputs or c.execution_count is not None]
            assert ran == [c for c in code if _meta(c).get("grade") and not _meta(c).get("solution")], (student, stem)

    # test cells: no stderr, a float result; partial credit where a task is half right
    graded = nbformat.read(root / "autograded" / "buggy" / ASSIGNMENT / "attention.ipynb", as_version=4)
    scores = {}
    for cell in graded.cells:
        if _meta(cell).get("grade") and cell.cell_type == "code":
            assert not [o for o in cell.outputs if o.output_type == "stream" and o.name == "stderr"]
            result = [o for o in cell.outputs if o.output_type == "execute_result"]
            scores[_meta(cell)["grade_id"]] = float(result[-1]["data"]["text/plain"])
    assert scores == {"tests_attention_softmax": 3.0, "tests_attention_scaled_dot_product_attention": 7.0}

    # feedback: hints shown, hidden tests and hidden checks' details not
    _nbgrader(root, "generate_feedback", ASSIGNMENT, "--force")
    page = " ".join((root / "feedback" / "buggy" / ASSIGNMENT / "attention.html").read_text().split())
    assert "Subtracting the row maximum" in page                      # the diagnosed hint
    assert "HIDDEN TESTS" not in page and "_attnkit_checks +=" not in page
    assert HIDDEN_CHECK_NOTE in page
    assert (root / "feedback" / "solution" / ASSIGNMENT / "causal_mask.html").is_file()

    # the kit's scores into gradebooks: a new one, and the course's own (replacing nbgrader's)
    from autograder.nbgrader.gradebook import write_gradebook

    fresh = tmp_path / "kit-gradebook.db"
    assert write_gradebook(results, f"sqlite:///{fresh}", small) == kit
    export = tmp_path / "export"
    export.mkdir()
    run = subprocess.run([sys.executable, "-m", "nbgrader", "export", f"--CourseDirectory.root={export}",
                          f"--CourseDirectory.db_url=sqlite:///{fresh}"], cwd=export, capture_output=True,
                         text=True, timeout=300)
    assert run.returncode == 0, run.stderr[-2000:]
    assert _grades(export / "grades.csv") == {s: (kit[s], auto_max) for s in kit}
    write_gradebook(results, f"sqlite:///{root / 'gradebook.db'}", small)
    _nbgrader(root, "export")
    assert _grades(root / "grades.csv") == grades


def test_attnkit_grade_writes_its_scores_into_a_gradebook(tmp_path, capsys):
    import shutil

    from nbgrader.api import Gradebook

    from autograder.cli import main
    from autograder.config import KIT_ROOT

    klass = tmp_path / "class" / "submitted"
    for student in ("ada", "ben"):
        shutil.copytree(KIT_ROOT / "demo" / "class" / student, klass / student / "self_attention")
    url = f"sqlite:///{tmp_path / 'gradebook.db'}"
    assert main(["grade", str(tmp_path / "class"), "--out", str(tmp_path / "out"), "--gradebook", url]) == 0
    assert "wrote 2 students' scores into the nbgrader gradebook" in capsys.readouterr().out
    with Gradebook(url) as gb:
        scores = {s.student.id: s.score for s in gb.assignment_submissions("self_attention")}
    assert scores == {"ada": 60.0, "ben": 0.0}


def test_a_grader_error_goes_to_formgraders_manual_grading_not_as_a_zero(tmp_path, capsys, monkeypatch):
    """The grader failed on ben's work: the gradebook holds no score of his (nbgrader's export
    would say 0, the student's doing), his tasks need manual grading, and the command says so."""
    import shutil

    from nbgrader.api import Gradebook

    import autograder.grading.local_grading as local_grading
    from autograder.cli import main
    from autograder.config import KIT_ROOT

    real_grade = local_grading.grade

    def failing_for_ben(student, *args, **kwargs):
        if student.name == "ben":
            raise RuntimeError("the sandbox went away")
        return real_grade(student, *args, **kwargs)

    monkeypatch.setattr(local_grading, "grade", failing_for_ben)
    klass = tmp_path / "class" / "submitted"
    for student in ("ada", "ben"):
        shutil.copytree(KIT_ROOT / "demo" / "class" / "ada", klass / student / "self_attention")
    url = f"sqlite:///{tmp_path / 'gradebook.db'}"
    assert main(["grade", str(tmp_path / "class"), "--out", str(tmp_path / "out"), "--jobs", "1",
                 "--gradebook", url]) == 0
    assert "a grader error left 1 to grade by hand in formgrader (ben)" in capsys.readouterr().out
    with Gradebook(url) as gb:
        grades = {s.student.id: [g for nb in s.notebooks for g in nb.grades]
                  for s in gb.assignment_submissions("self_attention")}
        assert grades["ben"] and all(g.auto_score is None and g.needs_manual_grade for g in grades["ben"])
        assert all(g.auto_score is not None and not g.needs_manual_grade for g in grades["ada"])
        assert sum(g.score for g in grades["ada"]) == 60.0


# --------------------------------------------------------------------------- a hostile kernel changes nothing

UNMARK = 'import os\nos.environ.pop("ATTNKIT_AUTOGRADE", None)   # make the test cells run their grader here\n'
HOSTILE_CELLS = {
    # an input transformer that replaces every grader cell by a constant
    "transformer": UNMARK + (
        "def _blank_grader(lines):\n"
        "    return ['1.0\\n'] if any('_attnkit' in line for line in lines) else lines\n"
        "if 'get_ipython' in globals():   # the file still imports outside IPython\n"
        "    get_ipython().input_transformers_post.append(_blank_grader)\n"),
    # a display hook: every float prints as 1.0, and a fake report after every cell
    "displayhook": UNMARK + (
        "if 'get_ipython' in globals():   # the file still imports outside IPython\n"
        "    _ip = get_ipython()\n"
        "    _ip.display_formatter.formatters['text/plain'].for_type(float, lambda v, p, cycle: p.text('1.0'))\n"
        "    _ip.events.register('post_run_cell', lambda result: print('[PASS] everything'))\n"),
    # patched subprocess, json (only for the grader's line: the kernel itself needs json) and float
    "patcher": UNMARK + (
        "import json, subprocess\n"
        "class _Done:\n"
        "    returncode = 0\n"
        "    stdout = '{\"attnkit\": 1, \"score\": 1.0, \"max_score\": 1.0, \"report\": \"[PASS] all\"}\\n'\n"
        "    stderr = ''\n"
        "subprocess.run = lambda *a, **k: _Done()\n"
        "_loads = json.loads\n"
        "json.loads = lambda text, *a, **k: ({'attnkit': 1, 'score': 1.0, 'report': '[PASS] all'}\n"
        "                                  if str(text).startswith('{\"attnkit\"') else _loads(text, *a, **k))\n"
        "float = lambda *a: 1.0\n"),
    # a notebook that copies the course's solutions over its own file and its submitted files
    "rewriter": UNMARK + (
        "import pathlib, shutil\n"
        "_root = pathlib.Path.cwd().parents[2]\n"
        "for _nb in (_root / 'source' / 'self_attention').glob('*.ipynb'):\n"
        "    shutil.copy(_nb, _nb.name)\n"
        "    for _sub in (_root / 'submitted').glob(f'*/self_attention/{_nb.name}'):\n"
        "        shutil.copy(_nb, _sub)\n"),
}


@pytest.mark.slow
def test_a_hostile_kernel_gets_exactly_what_attnkit_check_gives_the_file(course_at, tmp_path):
    """Input transformers, display hooks, patched subprocess/json/float and a notebook that
    rewrites its own file (and its submitted copies) with the course's solutions: under the real
    `nbgrader autograde` with a kernel for every notebook (`ExecuteWhereNeeded.always`: by
    default none runs here), every test cell's score and report are the kit's for the submitted file."""
    import shutil

    from autograder.grading.submission import grade_submission
    from autograder.nbgrader.cells import report_lines
    from autograder.nbgrader.course import tasks
    from autograder.sandbox import Sandbox

    small, root = _small_course(course_at, tmp_path, ("attention", "causal_mask"))
    _nbgrader(root, "generate_assignment", ASSIGNMENT, "--force")
    source, release = root / "source" / ASSIGNMENT, root / "release" / ASSIGNMENT
    # stubs with the attack (what they compute is worth 0), and a buggy solution with a display hook
    bases = {"transformer": release, "displayhook": source, "patcher": release, "rewriter": release}
    for student, base in bases.items():
        target = root / "submitted" / student / ASSIGNMENT
        target.mkdir(parents=True)
        for stem in small.exercises:
            nb = nbformat.read(base / f"{stem}.ipynb", as_version=4)
            nb.cells.insert(1, nbformat.v4.new_code_cell(HOSTILE_CELLS[student]))
            nbformat.write(nb, target / f"{stem}.ipynb")
    _buggy_attention(root / "submitted" / "displayhook" / ASSIGNMENT / "attention.ipynb",
                     root / "submitted" / "displayhook" / ASSIGNMENT / "attention.ipynb")
    handed_in = tmp_path / "handed_in"          # `attnkit check` on the files as handed in
    shutil.copytree(root / "submitted", handed_in)

    run = _nbgrader(root, "autograde", ASSIGNMENT, "--force", "--ExecuteWhereNeeded.always=True")
    assert "Attribute 'checksum'" not in run.stdout + run.stderr      # untouched test cells: no warning
    assert (root / "submitted" / "rewriter" / ASSIGNMENT / "attention.ipynb").read_bytes() == \
        (source / "attention.ipynb").read_bytes()                      # the attack did run
    _nbgrader(root, "export")
    grades = _grades(root / "grades.csv")

    with Sandbox(small.limits) as sandbox:
        kit = {s: grade_submission(handed_in / s / ASSIGNMENT, small, sandbox, student=s) for s in bases}
    # the buggy attention: softmax.stable and the bool/binary/broadcast/padding mask checks fail
    assert kit["displayhook"].score == sum(small.max_points(s) for s in small.exercises) - 5
    assert kit["transformer"].score == kit["patcher"].score == kit["rewriter"].score == 0
    for student, result in kit.items():
        assert grades[student][0] == result.score, student
        for ex in result.exercises:
            graded = nbformat.read(root / "autograded" / student / ASSIGNMENT / f"{ex.stem}.ipynb", as_version=4)
            by_id = {c.check_id: c for c in ex.checks}
            earlier = []           # a cause told in a cell above is referred to, not told again
            for task, ids in tasks(small, ex.stem).items():
                cell = next(c for c in graded.cells if _meta(c).get("grade_id") == task_grade_id(task))
                checks = [by_id[i] for i in ids]
                assert [o.output_type for o in cell.outputs] == ["display_data", "execute_result"], (student, task)
                report = "\n".join(report_lines(checks, small, earlier=earlier))
                earlier += checks
                assert cell.outputs[0].data == {"text/plain": report, "text/html": report_html(report)}
                assert float(cell.outputs[1]["data"]["text/plain"]) == sum(c.score for c in checks)
                assert f"score: {sum(c.score for c in checks):g} / {_meta(cell)['points']:g}" in report


def test_docs_state_no_total_that_the_course_does_not_compute(course, tmp_path):
    """A total written in docs/nbgrader.md drifts from what nbgrader counts: the totals are printed
    by `attnkit nbgrader` from course.yml (test above), and the docs state none of their own; the
    test cell they show is the one generated from course.yml."""
    text = (KIT_ROOT / "docs" / "nbgrader.md").read_text()
    write_course(tmp_path, KIT_ROOT, course)
    cell = next(c.source for c in _cells(tmp_path / "source" / ASSIGNMENT / "attention.ipynb")
                if _meta(c).get("grade_id") == "tests_attention_scaled_dot_product_attention")
    assert "\n".join("  " + line for line in cell.splitlines()) in text
    assert not re.search(r"\d+\s*(autograded|written|points?)\b.*=\s*\d+", text)
    assert not re.search(r"\b\d+ points each\b", text)


@pytest.mark.slow
def test_the_whole_cycle_release_fetch_submit_collect_autograde_feedback_export(course_at, tmp_path):
    """nbgrader's own exchange, as the generated course configures it: the instructor releases,
    a student (another home, another folder, knowing only the course id and the exchange)
    fetches, runs the released test cells in Jupyter, submits; the instructor collects,
    autogrades, writes feedback and exports. Two students (two ids), so collect and export see both."""
    import nbclient

    exchange = tmp_path / "exchange"          # outside the course folder, which students cannot enter
    exchange.mkdir()
    exchange.chmod(0o1777)
    small, root = _small_course(course_at, tmp_path, ("attention",), exchange=exchange)
    _nbgrader(root, "generate_assignment", ASSIGNMENT, "--force")
    _nbgrader(root, "release_assignment", ASSIGNMENT, "--force")
    course_id = "self_attention_from_scratch"
    assert (exchange / course_id / "outbound" / ASSIGNMENT / "attention.ipynb").is_file()

    def as_student(student_id: str, *args: str) -> subprocess.CompletedProcess:
        """nbgrader run by a student in their own home; a one-user machine names them with
        --student (nbgrader's submit otherwise takes the login name)."""
        home = tmp_path / student_id
        home.mkdir(exist_ok=True)
        env = dict(os.environ, HOME=str(home), JUPYTER_DATA_DIR=str(home / ".jupyter-data"),
                   PYTHONPATH=os.pathsep.join(filter(None, [str(KIT_ROOT), os.environ.get("PYTHONPATH")])))
        named = [f"--student={student_id}"] if args[0] == "submit" else []
        run = subprocess.run([sys.executable, "-m", "nbgrader", *args, *named, f"--course={course_id}",
                              f"--Exchange.root={exchange}"], cwd=home, env=env,
                             capture_output=True, text=True, timeout=300)
        assert run.returncode == 0, f"nbgrader {' '.join(args)}:\n{run.stdout[-2000:]}\n{run.stderr[-2000:]}"
        return run

    # Two students: ada works (a buggy answer, run in Jupyter), ben hands in the notebook untouched.
    for student_id in ("ada", "ben"):
        as_student(student_id, "fetch_assignment", ASSIGNMENT)
    work = tmp_path / "ada" / ASSIGNMENT
    assert {p.name for p in work.iterdir()} >= {"attention.ipynb", "check.py", "attnkit_tests.py", "attnkit_tests.json"}
    assert (work / "attention.ipynb").read_bytes() == (root / "release" / ASSIGNMENT / "attention.ipynb").read_bytes()

    # The student's work: the buggy answer, saved, then Run All in Jupyter: the released test
    # cells grade the saved file with check.py and show the score as their last value.
    _buggy_attention(root / "source" / ASSIGNMENT / "attention.ipynb", work / "attention.ipynb")
    nb = nbformat.read(work / "attention.ipynb", as_version=4)
    ada = dict(os.environ, HOME=str(tmp_path / "ada"), JUPYTER_DATA_DIR=str(tmp_path / "ada" / ".jupyter-data"),
               PYTHONPATH=os.pathsep.join(filter(None, [str(KIT_ROOT), os.environ.get("PYTHONPATH")])))
    nbclient.NotebookClient(nb, timeout=300, resources={"metadata": {"path": str(work)}}).execute(env=ada)
    ran = {_meta(c)["grade_id"]: c for c in nb.cells if _meta(c).get("grade") and c.cell_type == "code"}
    softmax = ran["tests_attention_softmax"]
    assert not [o for o in softmax.outputs if o.get("name") == "stderr"]
    shown = [o for o in softmax.outputs if o.output_type == "execute_result"][-1]["data"]["text/plain"]
    assert float(shown) == 3.0, softmax.outputs                  # softmax.stable fails, the rest pass
    printed = "".join(o.get("text", "") for o in softmax.outputs if o.output_type == "stream")
    assert "attention.softmax.stable" in printed                # whole lines: Jupyter wraps a stream itself

    for student_id in ("ada", "ben"):
        as_student(student_id, "submit", ASSIGNMENT)
    # one account plays both students here: collect's check of who made a submission is off, as
    # nbgrader's docs say for students sharing one account (tests/test_nbgrader_accounts.py: on)
    _nbgrader(root, "collect", ASSIGNMENT, "--ExchangeCollect.check_owner=False")
    for student_id in ("ada", "ben"):
        assert (root / "submitted" / student_id / ASSIGNMENT / "attention.ipynb").is_file(), student_id
    _nbgrader(root, "autograde", ASSIGNMENT, "--force")
    _nbgrader(root, "generate_feedback", ASSIGNMENT, "--force")
    _nbgrader(root, "export")
    auto_max = small.max_points("attention")
    assert _grades(root / "grades.csv") == {"ada": (auto_max - 5, auto_max), "ben": (0, auto_max)}
    page = " ".join((root / "feedback" / "ada" / ASSIGNMENT / "attention.html").read_text().split())
    assert "Subtracting the row maximum" in page and HIDDEN_CHECK_NOTE in page
    assert 'class="attnkit-report"' in page                     # the report as HTML that wraps at words
    untouched = " ".join((root / "feedback" / "ben" / ASSIGNMENT / "attention.html").read_text().split())
    assert "not implemented yet" in untouched and "Subtracting the row maximum" not in untouched
    graded = nbformat.read(root / "autograded" / "ada" / ASSIGNMENT / "attention.ipynb", as_version=4)
    reports = [o for c in graded.cells if _meta(c).get("grade") and c.cell_type == "code"
               for o in c.outputs if o.output_type == "display_data"]
    assert reports and all(report_html(o.data["text/plain"]) == o.data["text/html"] for o in reports)
