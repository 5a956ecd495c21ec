"""A whole class at once (`attnkit grade`): hostile and broken submissions cost only their own
points, with a reason that says which; honest ones keep their grades; nothing a submission
does reaches the grades; a run killed with SIGKILL resumes to the same grades.csv.

One class (honest students, every case of tests/hostile/, broken files, odd names) is graded
once per module with small limits (call_timeout 2 s, import_timeout 3 s) and the tests read
that run's results.
"""

from __future__ import annotations

import csv
import dataclasses
import io
import json
import os
import shutil
import signal
import subprocess
import sys
import time
from pathlib import Path

import nbformat
import pytest
import yaml

from autograder.grading.local_grading import grade_class
from autograder.grading.student import Student, fingerprint, load_previous, run_key
from autograder.intake.students import find_students
from autograder.config import KIT_ROOT
from autograder.diagnosis.advice import GENERIC_HINT
from autograder.reports.feedback import feedback_markdown
from autograder.reports.causes import causes
from autograder.results import HIDDEN_CHECK_NOTE

HOSTILE = KIT_ROOT / "tests" / "hostile"
SOLUTIONS = KIT_ROOT / "solutions"
DEMO = KIT_ROOT / "demo" / "class"
MARKER = "\n# attnkit-class-secret\n"
CALL_TIMEOUT, IMPORT_TIMEOUT = 2, 3

# case -> (reason of create_causal_mask's checks, words in their message); causal_attention is right.
FUNCTION_CASES = {
    "sleep_forever": ("timeout", "did not return within the time limit"),
    "ignores_signals": ("timeout", "did not return within the time limit"),
    "os_exit": ("crashed", "exited with code 3"),
    "sys_exit": ("raised", "SystemExit"),
    "keyboard_interrupt": ("raised", "KeyboardInterrupt"),
    "base_exception": ("raised", "Escape"),
    "segfault": ("crashed", "segmentation fault"),
    "recursion": ("raised", "RecursionError"),
    "memory_bomb": ("crashed", "memory limit"),
    "fork_loop": ("raised", "BlockingIOError"),
}
# case -> (reason of every causal_mask check, words in the message): the file cannot be imported.
IMPORT_CASES = {
    "loop_at_import": ("timeout", "did not finish within 3 s"),
    "exit_at_import": ("crashed", "crashed while importing"),
    "sys_exit_at_import": ("not_run", "SystemExit"),
}
# broken files of attention: name -> (file name, content, words in the message)
BROKEN = {
    "bad_json": ("attention.ipynb", b'{"cells": [', "invalid JSON"),
    "not_nbformat": ("attention.ipynb", b'{"cells": [{"what": 1}], "nbformat": 4}', "not a valid nbformat notebook"),
    "json_not_notebook": ("attention.ipynb", b'[1, 2, 3]', "not a Jupyter notebook"),
    "syntax_error": ("attention.py", b"def softmax(x:\n    return x\n", "syntax error at line 1"),
    "empty": ("attention.py", b"", "is empty"),
    "binary": ("attention.py", bytes(range(256)) * 4, "binary file"),
    "latin1": ("attention.py", "# café\ndef softmax(x, axis=-1):\n    return x\n".encode("latin-1"), "not UTF-8"),
    "huge": ("attention.py", b"# padding\n" * 300_000, "the limit is"),
}
ODD_NAMES = ("José Ñúñez", "two  words", "日本語", "it's-a (test)")
STEM_POINTS = {"hand_computation": 7, "attention": 12, "causal_mask": 7, "scaling": 8, "multihead": 12}


# ====================================================================== the class and its run

def small_course(folder: Path, **changes) -> Path:
    """The kit's course.yml with small limits (and `changes` on top), written into `folder`."""
    data = yaml.safe_load((KIT_ROOT / "course.yml").read_text(encoding="utf-8"))
    data["limits"].update(call_timeout=CALL_TIMEOUT, import_timeout=IMPORT_TIMEOUT, memory_mb=1024,
                          cpu_seconds=20, max_processes=32)
    data.update(changes)
    path = folder / "course.yml"
    path.write_text(yaml.safe_dump(data, sort_keys=False), encoding="utf-8")
    return path


def _student(class_dir: Path, name: str, files: dict[str, Path | bytes | str]) -> Path:
    folder = class_dir / name
    folder.mkdir(parents=True)
    for filename, content in files.items():
        if isinstance(content, Path):
            content = content.read_bytes()
            if filename.endswith(".py"):
                content += MARKER.encode()
        elif isinstance(content, str):
            content = content.encode("utf-8")
        (folder / filename).write_bytes(content)
    return folder


def _hostile(case: str, stem: str, paths: dict[str, str]) -> str:
    text = (HOSTILE / case / f"{stem}.py").read_text(encoding="utf-8")
    for token, value in paths.items():
        text = text.replace(token, value)
    return text + MARKER


def magics_notebook() -> bytes:
    """The kit's attention solution as a notebook, with magics, shell and help lines around it,
    and its definitions under `%%time`."""
    nb = nbformat.v4.new_notebook()
    nb.cells = [nbformat.v4.new_markdown_cell("# Attention"),
                nbformat.v4.new_code_cell("%matplotlib inline\n!pip install numpy\nimport numpy as np\nnp.exp?"),
                nbformat.v4.new_code_cell("%%timeit -n1 -r1\nfor i in range(10**5): pass"),
                nbformat.v4.new_code_cell("%%time\n" + (SOLUTIONS / "attention.py").read_text(encoding="utf-8")),
                nbformat.v4.new_code_cell("%time softmax(np.ones(3))")]
    return nbformat.writes(nb).encode("utf-8")


def build_class(root: Path) -> tuple[Path, Path]:
    class_dir, out = root / "class", root / "out"
    paths = {"@KIT@": str(KIT_ROOT), "@CLASS@": str(class_dir), "@OUT@": str(out)}
    witness = {"hand_computation.py": SOLUTIONS / "hand_computation.py"}
    _student(class_dir, "ada", {p.name: p for p in (DEMO / "ada").iterdir()})
    _student(class_dir, "cleo", {p.name: p for p in (DEMO / "cleo").iterdir()})
    _student(class_dir, "eve", {p.name: p for p in (DEMO / "eve").iterdir()} | witness)
    for case in (*FUNCTION_CASES, *IMPORT_CASES, "spinning_thread", "writer", "spy"):
        _student(class_dir, case, witness | {"causal_mask.py": _hostile(case, "causal_mask", paths)})
    _student(class_dir, "monkeypatch", witness | {"attention.py": HOSTILE / "monkeypatch" / "attention.py"})
    _student(class_dir, "lying_objects", witness | {"attention.py": HOSTILE / "lying_objects" / "attention.py"})
    _student(class_dir, "fake_figure", witness | {"scaling.py": HOSTILE / "fake_figure" / "scaling.py"})
    _student(class_dir, "bad_values", {"hand_computation.py": HOSTILE / "bad_values" / "hand_computation.py",
                                       "causal_mask.py": SOLUTIONS / "causal_mask.py"})
    _student(class_dir, "magics", witness | {"attention.ipynb": magics_notebook()})
    for name, (filename, content, _) in BROKEN.items():
        _student(class_dir, name, witness | {filename: content})
    for name in ODD_NAMES:
        _student(class_dir, name, {"hand_computation.py": SOLUTIONS / "hand_computation.py"})
    _student(class_dir, ".hidden", witness)              # not a student
    (class_dir / "notes.txt").write_text("not a student either")
    return class_dir, out


class Run:
    def __init__(self, root: Path, course_at):
        self.root = root
        self.course_path = small_course(root)
        self.course = course_at(self.course_path)
        self.class_dir, self.out = build_class(root)
        # what earlier tests in this process left (multiprocessing's resource tracker lives as long
        # as the process that started it): not this run's
        self.running_before = _descendants(os.getpid())
        self.results = {r.student: r for r in grade_class(self.class_dir, self.out, self.course, jobs=2)}

    def check(self, student: str, check_id: str):
        return next(c for c in self.results[student].checks if c.check_id == check_id)

    def grades(self) -> dict[str, dict[str, str]]:
        rows = csv.DictReader(io.StringIO((self.out / "grades.csv").read_text(encoding="utf-8")))
        return {row["student"]: row for row in rows}


@pytest.fixture(scope="module")
def run(tmp_path_factory, course_at) -> Run:
    return Run(tmp_path_factory.mktemp("classroom"), course_at)


def _proc_table() -> dict[int, tuple[int, str, str]]:
    """pid -> (ppid, start time, command line) of every process."""
    table = {}
    for name in os.listdir("/proc"):
        if not name.isdigit():
            continue
        try:
            stat = Path(f"/proc/{name}/stat").read_bytes()
            cmd = Path(f"/proc/{name}/cmdline").read_bytes().replace(b"\0", b" ").decode(errors="replace")
        except OSError:
            continue
        fields = stat[stat.rfind(b")") + 2:].split()
        if fields[0] in (b"Z", b"X"):
            continue
        table[int(name)] = (int(fields[1]), fields[19].decode(), cmd[:100])
    return table


def _descendants(root: int) -> dict[int, tuple[int, str, str]]:
    """The living processes under `root` (its children, theirs, ...)."""
    table = _proc_table()
    found, frontier = {}, {root}
    while frontier:
        frontier = {pid for pid, (ppid, _, _) in table.items() if ppid in frontier and pid not in found}
        found.update({pid: table[pid] for pid in frontier})
    return found


def _still_alive(processes: dict[int, tuple[int, str, str]]) -> list[str]:
    table = _proc_table()
    return [f"{pid} {cmd}" for pid, (_, start, cmd) in processes.items() if table.get(pid, (0, None))[1] == start]


# ====================================================================== input

def test_find_students_reads_plain_folders_and_nbgrader_layout(tmp_path):
    plain = tmp_path / "plain"
    for name in ("bo", "al", "José Ñúñez"):
        (plain / name).mkdir(parents=True)
    (plain / ".git").mkdir()
    (plain / "README.md").write_text("x")
    assert [s.name for s in find_students(plain, "self_attention")] == ["José Ñúñez", "al", "bo"]
    assert find_students(plain, "self_attention", exclude=(plain / "bo",))[-1].name == "al"

    nb = tmp_path / "course" / "submitted"
    (nb / "al" / "self_attention").mkdir(parents=True)
    (nb / "bo" / "self_attention").mkdir(parents=True)
    (nb / "bo" / "other_assignment").mkdir()
    students = find_students(tmp_path / "course", "self_attention")
    assert students == [Student("al", nb / "al" / "self_attention"), Student("bo", nb / "bo" / "self_attention")]
    with pytest.raises(FileNotFoundError):
        find_students(tmp_path / "nowhere", "self_attention")


def test_nbgrader_layout_is_graded(course_at, tmp_path):
    course = course_at(small_course(tmp_path))
    base = tmp_path / "course" / "submitted"
    _student(base / "al", "self_attention", {"hand_computation.py": SOLUTIONS / "hand_computation.py"})
    _student(base / "bo", "self_attention", {"hand_computation.ipynb": (KIT_ROOT / "exercises" /
                                                                         "hand_computation.ipynb")})
    results = grade_class(tmp_path / "course", tmp_path / "out", course, jobs=2)
    assert [(r.student, r.score) for r in results] == [("al", 7.0), ("bo", 0.0)]
    assert {p.name for p in (tmp_path / "out" / "results").iterdir()} == {"al.json", "bo.json"}


# ====================================================================== honest students keep their grades

def test_every_student_is_graded_and_written(run):
    names = sorted(p.name for p in run.class_dir.iterdir() if p.is_dir() and not p.name.startswith("."))
    assert sorted(run.results) == names
    grades = run.grades()
    assert sorted(grades) == names
    for name in names:
        data = json.loads((run.out / "results" / f"{name}.json").read_text(encoding="utf-8"))
        assert data["score"] == run.results[name].score == float(grades[name]["total"])
        assert (run.out / "feedback" / f"{name}.md").is_file()
    assert not (run.out / "results" / "zz-new.json").exists() or "zz-new" not in grades


def test_honest_students_are_not_affected_by_the_others(run, tmp_path):
    assert run.results["ada"].score == run.results["ada"].max_score == 60
    # The same submissions graded alone, in a class of their own: the same results, check by check.
    alone = tmp_path / "alone"
    for name in ("ada", "cleo", "magics", "spinning_thread"):
        shutil.copytree(run.class_dir / name, alone / name)
    by_itself = {r.student: r for r in grade_class(alone, tmp_path / "out", run.course, jobs=1)}
    for name, result in by_itself.items():
        assert [(c.check_id, c.status, c.score) for c in result.checks] == \
               [(c.check_id, c.status, c.score) for c in run.results[name].checks], name


def test_the_witness_exercise_is_graded_for_every_hostile_student(run):
    for name in (*FUNCTION_CASES, *IMPORT_CASES, "monkeypatch", "lying_objects", "fake_figure", *BROKEN, "eve"):
        assert run.results[name].exercise("hand_computation").score == 7, name


def test_notebook_magics_and_shell_lines_run_as_in_jupyter(run):
    ex = run.results["magics"].exercise("attention")
    assert ex.graded_file == "attention.ipynb"
    assert ex.score == ex.max_score == 15, [(c.check_id, c.message) for c in ex.checks if not c.passed]


def test_odd_folder_names_work(run):
    for name in ODD_NAMES:
        assert run.results[name].score == 7
        assert json.loads((run.out / "results" / f"{name}.json").read_text(encoding="utf-8"))["score"] == 7
        assert run.grades()[name]["total"] == "7"


# ====================================================================== isolation

@pytest.mark.parametrize("case", FUNCTION_CASES)
def test_a_misbehaving_function_scores_zero_with_its_reason_and_the_rest_is_graded(run, case):
    reason, words = FUNCTION_CASES[case]
    ex = run.results[case].exercise("causal_mask")
    for check in ex.checks:
        if check.check_id.startswith("causal_mask.create_causal_mask."):
            assert check.score == 0 and check.status == "error", (check.check_id, check.message)
            assert check.reason == reason, (check.check_id, check.reason, check.message)
        else:
            assert check.passed, (check.check_id, check.message)
    first = next(c for c in ex.checks if c.check_id == "causal_mask.create_causal_mask.values")
    assert words in first.message, first.message
    assert ex.score == 6        # causal_attention's visible checks, its arguments check among them


@pytest.mark.parametrize("case", IMPORT_CASES)
def test_a_file_that_cannot_be_imported_scores_zero_with_its_reason(run, case):
    reason, words = IMPORT_CASES[case]
    ex = run.results[case].exercise("causal_mask")
    assert ex.score == 0
    for check in ex.checks:
        assert check.status == "error" and check.reason == reason, (check.check_id, check.reason, check.message)
        assert words in check.message, check.message


def test_a_hang_costs_one_timeout_and_the_rest_is_graded(run):
    """A hang is stopped as a timeout that names its limit: a loop at import by the import's
    limit, for every check of the file; a function that hangs once, the checks after it not
    calling it again. The student's other exercises are graded as usual."""
    def checks(student, stem):
        return {c.check_id.split(".", 1)[1]: c for c in run.results[student].exercise(stem).checks}

    for student in ("loop_at_import", "sleep_forever", "ignores_signals", "eve"):
        assert run.results[student].exercise("hand_computation").score == STEM_POINTS["hand_computation"], student
    imported = checks("loop_at_import", "causal_mask")
    assert {(c.reason, c.message) for c in imported.values()} == {
        ("timeout", "causal_mask.py could not be run: importing causal_mask.py did not finish within 3 s "
                    "(is there an infinite loop or a long computation at the top level of the file?)")}
    # create_causal_mask hangs on its first call; its second check is not run again.
    for case in ("sleep_forever", "ignores_signals"):
        hung = checks(case, "causal_mask")
        first, second = hung["create_causal_mask.values"], hung["create_causal_mask.sizes"]
        assert first.reason == second.reason == "timeout", case
        assert first.message.startswith("create_causal_mask did not return within the time limit (stopped after")
        assert "(not run again: an earlier call of create_causal_mask stopped after" in second.message, case
    # eve: softmax hangs (one timeout), create_causal_mask exits.
    softmax = [c for name, c in checks("eve", "attention").items() if name.startswith("softmax.")]
    assert [c.reason for c in softmax] == ["timeout"] * len(softmax) and len(softmax) > 1
    assert all("not run again: an earlier call of softmax" in c.message for c in softmax[1:]), softmax


def test_nothing_is_left_running(run):
    left = {pid: cmd for pid, (_, start, cmd) in _descendants(os.getpid()).items()
            if run.running_before.get(pid, (0, None))[1] != start}
    assert list(left.values()) == []


def test_a_spinning_thread_costs_nothing(run):
    assert run.results["spinning_thread"].exercise("causal_mask").score == 8     # full marks


def test_monkeypatching_inside_the_submission_changes_nothing(run):
    ex = run.results["monkeypatch"].exercise("attention")
    assert ex.score == 0
    assert all(c.status == "failed" for c in ex.checks), [(c.check_id, c.status, c.message) for c in ex.checks]
    assert "sums to 0, not 1" in ex.checks[0].message


def test_lying_objects_are_rejected_or_converted(run):
    ex = run.results["lying_objects"].exercise("attention")
    assert ex.score == 0, [(c.check_id, c.message) for c in ex.checks if c.passed]
    rows = next(c for c in ex.checks if c.check_id == "attention.softmax.rows")
    assert "AlwaysEqual" in rows.message
    axis = next(c for c in ex.checks if c.check_id == "attention.softmax.axis")
    assert axis.status == "failed" and axis.message, axis.message
    single = next(c for c in ex.checks if c.check_id == "attention.scaled_dot_product_attention.single")
    assert single.status == "failed" and "differ" in single.message, single.message


def test_a_fake_figure_and_a_dict_of_strings_score_nothing(run):
    ex = run.results["fake_figure"].exercise("scaling")
    assert ex.score == 0
    figure = next(c for c in ex.checks if c.check_id == "scaling.plot_scaling.figure")
    assert "Figure" in figure.message, figure.message
    keys = next(c for c in ex.checks if c.check_id == "scaling.scaling_experiment.std")
    assert keys.status == "failed" and keys.message, keys.message


def test_nan_none_strings_dicts_and_wrong_shapes_fail_with_clear_messages(run):
    ex = run.results["bad_values"].exercise("hand_computation")
    assert ex.score == 0
    messages = {c.check_id.rsplit(".", 2)[-2] + "." + c.check_id.rsplit(".", 1)[-1]: c.message for c in ex.checks}
    assert "nan" in messages["part_a.scores"].lower()
    assert "None" in messages["part_a.scaled_scores"]
    assert "str" in messages["part_a.weights"]
    assert "dict" in messages["part_a.output"]
    assert "shape" in messages["part_b.scores"]
    assert "inf" in messages["part_b.output"].lower()
    for check in ex.checks:
        assert check.status in ("failed", "not_implemented") and len(check.message) > 20, check


@pytest.mark.parametrize("name", BROKEN)
def test_a_broken_file_scores_zero_with_a_message_that_says_what_is_wrong(run, name):
    ex = run.results[name].exercise("attention")
    assert ex.score == 0
    words = BROKEN[name][2]
    for check in ex.checks:
        assert check.status == "error" and check.reason == "load_error", (check.check_id, check.status)
        assert words in check.message, check.message


# ====================================================================== integrity of the grades

def test_nothing_printed_is_parsed(run):
    # eve and monkeypatch print fake score reports; their grades are what their code earned.
    assert run.results["eve"].exercise("attention").score == 0
    assert run.results["eve"].exercise("causal_mask").score == 0
    assert run.results["monkeypatch"].exercise("attention").score == 0


ROOT_ONLY = pytest.mark.skipif(os.geteuid() != 0, reason="the sandbox hides files by path (mount namespace) only as root")


@ROOT_ONLY
def test_a_submission_reads_nothing_of_the_kit_the_class_or_the_results(run):
    """By import, by path (told the real paths), through /proc: nothing of the kit, the class
    folder or OUT."""
    ex = run.results["spy"].exercise("causal_mask")
    for check in ex.checks:
        if check.check_id.startswith("causal_mask.create_causal_mask."):
            assert check.passed, check.message


@ROOT_ONLY
def test_a_submission_finds_no_other_students_files_anywhere(run):
    """Walking up from its own folder (the temp folder) and through everything under it, it finds
    no file of another student of this class (they carry a marker)."""
    ex = run.results["spy"].exercise("causal_mask")
    for check in ex.checks:
        if check.check_id.startswith("causal_mask.causal_attention."):
            assert check.passed, check.message


def test_what_a_submission_writes_never_becomes_a_grade(run):
    # The writer's own code is right: it earns exactly its 7 + 8 points, and nothing of what it
    # tried to write (its results.json, ada's, grades.csv, a new student) is there.
    assert run.results["writer"].score == 15
    assert run.grades()["writer"]["total"] == "15"
    assert run.grades()["ada"]["total"] == "60"
    assert "zz-new" not in run.grades()
    assert not (run.class_dir / "writer" / "results.json").exists()
    assert not (run.out / "results" / "zz-new.json").exists()
    data = json.loads((run.out / "results" / "ada.json").read_text(encoding="utf-8"))
    assert data["score"] == 60 and len(data["tests"]) == 53
    assert "60 / 60" in (run.out / "feedback" / "ada.md").read_text(encoding="utf-8")


def test_a_forged_result_file_is_not_believed_on_resume(run, tmp_path):
    out = tmp_path / "out"
    shutil.copytree(run.out, out)
    student = Student("eve", run.class_dir / "eve")
    fp = fingerprint(student, run.course)
    key = run_key(out)
    assert load_previous(out, student, fp, key) is not None
    path = out / "results" / "eve.json"
    data = json.loads(path.read_text(encoding="utf-8"))
    result = data["extra_data"]["result"]
    for ex in result["exercises"]:
        for c in ex["checks"]:
            c["score"], c["status"] = c["max_score"], "passed"
    path.write_text(json.dumps(data), encoding="utf-8")
    assert load_previous(out, student, fp, key) is None       # the signature no longer matches


def test_results_files_are_not_writable_by_submissions(run):
    for folder in (run.out, run.out / "results", run.out / "feedback"):
        assert not os.stat(folder).st_mode & 0o022
    assert not os.stat(run.out / ".attnkit-key").st_mode & 0o077


# ====================================================================== feedback

def test_feedback_shows_scores_messages_and_hints(run):
    page = (run.out / "feedback" / "cleo.md").read_text(encoding="utf-8")
    result = run.results["cleo"]
    assert f"**{result.score:g} / {result.max_score:g}**" in page
    assert "| `attention` | `attention.py` |" in page
    masked = run.check("cleo", "attention.scaled_dot_product_attention.bool_mask")
    assert masked.message.split(";")[0] in page and masked.hint.split(".")[0] in page
    hidden = run.check("cleo", "attention.scaled_dot_product_attention.binary_mask")
    assert hidden.hidden and not hidden.passed
    assert HIDDEN_CHECK_NOTE in page
    assert hidden.message.split(";")[0] not in page.split("binary_mask")[1].split("- `")[0]
    assert "no causal_mask.py or causal_mask.ipynb in the submission" in page
    # eve's page says which function timed out and which crashed.
    eve = (run.out / "feedback" / "eve.md").read_text(encoding="utf-8")
    assert "**timed out**" in eve and "**crashed**" in eve


def test_feedback_follows_the_hint_policy_and_show_hidden(run):
    """Grading decides the hint once, for the course's policy; the page shows what was decided."""
    from autograder.grading.submission import grade_submission
    from autograder.sandbox import Sandbox

    def graded(**policy):
        course = dataclasses.replace(run.course, **policy)
        with Sandbox(course.limits) as sandbox:
            result = grade_submission(DEMO / "cleo", course, sandbox, student="cleo", stems=("attention",))
        checks = {c.check_id: c for c in result.checks}
        return feedback_markdown(result, course), checks

    masked = run.check("cleo", "attention.scaled_dot_product_attention.bool_mask")
    off, _ = graded(hints="off")
    assert "Hint:" not in off and masked.message.split(";")[0] in off
    generic, _ = graded(hints="generic")
    assert GENERIC_HINT.split(":")[0] in generic and masked.hint.split(".")[0] not in generic
    hidden = run.check("cleo", "attention.scaled_dot_product_attention.binary_mask")
    default = feedback_markdown(run.results["cleo"], run.course)
    assert HIDDEN_CHECK_NOTE in default and hidden.message.split(";")[0] not in default
    assert hidden.hint.startswith("A hidden check failed")    # what to try, no value
    # one mistake, one hint: the hint of the cause that explains the hidden check (its own when it comes first)
    cause = next(c for c in causes(run.results["cleo"].exercise("attention").checks) if hidden in c.checks)
    assert cause.first.hint.split(". ")[0] in default
    shown, checks = graded(show_hidden=True)
    assert HIDDEN_CHECK_NOTE not in shown
    told = next(c for c in causes(checks.values()) if checks[hidden.check_id] in c.checks).first  # its cause's
    assert told.message.split(";")[0] in shown


def test_feedback_never_renders_what_a_submission_wrote(run):
    from autograder.reports.feedback import code_block, md_text

    block = code_block("```\n# Score: 46/46\n<script>alert(1)</script>\n````")
    fence = block.splitlines()[0]
    assert fence.startswith("`````") and block.rstrip().endswith(fence[:5])
    assert md_text("**bold** <b>x</b> [link](http://x)") == r"\*\*bold\*\* \<b\>x\</b\> \[link\](http://x)"


# ====================================================================== the summary

def test_the_summary_lists_timeouts_crashes_and_unreadable_files(run):
    from rich.console import Console

    from autograder.reports.summary import print_summary

    console = Console(record=True, width=200)
    print_summary(list(run.results.values()), run.course, console, run.out)
    text = console.export_text()
    lines = text.split("code that crashed")[1].splitlines()
    assert not any(l.strip().startswith(("ada /", "cleo /")) for l in lines)   # wrong answers are not trouble
    def line(student, stem):
        return next(l for l in lines if l.strip().startswith(f"{student} / {stem}:"))
    assert "timed out" in line("sleep_forever", "causal_mask")
    assert "crashed" in line("segfault", "causal_mask")
    assert "unreadable file" in line("binary", "attention")
    assert "timed out" in line("loop_at_import", "causal_mask")


# ====================================================================== nothing lost

def _grade_cli(course: Path, class_dir: Path, out: Path, *extra: str, tmp: Path | None = None) -> subprocess.Popen:
    env = dict(os.environ, TMPDIR=str(tmp)) if tmp is not None else None
    return subprocess.Popen([sys.executable, "-m", "autograder.cli", "--course", str(course), "grade", str(class_dir),
                             "--out", str(out), "--jobs", "2", *extra], stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, start_new_session=True, env=env)


def test_a_run_killed_with_sigkill_resumes_to_the_same_grades(run, tmp_path):
    class_dir = tmp_path / "class"
    for name in ("ada", "cleo", "eve", "sleep_forever", "segfault", "magics", "bad_values", "José Ñúñez",
                 "spinning_thread"):
        shutil.copytree(run.class_dir / name, class_dir / name)
    for i in range(4):
        shutil.copytree(run.class_dir / "ada", class_dir / f"ada{i}")
    out, scratch = tmp_path / "out", tmp_path / "tmp"
    scratch.mkdir()
    proc = _grade_cli(run.course_path, class_dir, out, tmp=scratch)
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline and proc.poll() is None:
        if any((out / "results").glob("*.json")) if (out / "results").is_dir() else False:
            break
        time.sleep(0.02)
    assert proc.poll() is None, proc.communicate()
    sandboxes = _descendants(proc.pid)       # zygotes and the children they forked
    assert any("zygote" in cmd for _, _, cmd in sandboxes.values())
    os.kill(proc.pid, signal.SIGKILL)
    proc.wait()
    kept = {p.name: p.stat().st_mtime_ns for p in (out / "results").glob("*.json")}
    assert 0 < len(kept) < 13 and not (out / "grades.csv").exists()
    # They go on their own, each at its next chance: a zygote still importing torch notices late
    # on a loaded machine. The wait is a bound on "never", not a speed.
    deadline = time.monotonic() + 60
    while _still_alive(sandboxes) and time.monotonic() < deadline:
        time.sleep(0.1)
    assert _still_alive(sandboxes) == [], "the killed run left sandbox processes behind"
    # What it was staging when killed stays (nothing runs on SIGKILL), named with its pid; the next
    # run removes such folders once they are old enough to be nobody's read in progress.
    left = [p for p in scratch.iterdir() if p.name.startswith("attnkit-upload-")]
    assert all(p.name.startswith(f"attnkit-upload-{proc.pid}-") for p in left), left
    (scratch / f"attnkit-upload-{proc.pid}-staged").mkdir()
    (scratch / f"attnkit-upload-{proc.pid}-staged" / "attention.py").write_text("x = 1\n")
    hour_ago = time.time() - 2 * 3600
    for p in scratch.iterdir():
        os.utime(p, (hour_ago, hour_ago))
    (scratch / f"attnkit-upload-{proc.pid}-recent").mkdir()      # as recent as a read in progress

    again = _grade_cli(run.course_path, class_dir, out, tmp=scratch)
    stdout, stderr = again.communicate(timeout=120)
    assert again.returncode == 0, stderr.decode()
    assert sorted(p.name for p in scratch.glob("attnkit-upload-*")) == [f"attnkit-upload-{proc.pid}-recent"]
    for name, mtime in kept.items():   # what was graded before the kill was reused, not graded again
        assert (out / "results" / name).stat().st_mtime_ns == mtime, name
    # The same grades as the uninterrupted in-process run of the same submissions.
    expected = {name: row for name, row in run.grades().items() if name in {p.name for p in class_dir.iterdir()}}
    for i in range(4):
        expected[f"ada{i}"] = dict(run.grades()["ada"], student=f"ada{i}")
    rows = {row["student"]: row for row in csv.DictReader(io.StringIO((out / "grades.csv").read_text()))}
    assert rows == expected

    regraded = _grade_cli(run.course_path, class_dir, out, "--regrade")
    regraded.communicate(timeout=120)
    assert regraded.returncode == 0
    assert all((out / "results" / name).stat().st_mtime_ns != mtime for name, mtime in kept.items())
    rows = {row["student"]: row for row in csv.DictReader(io.StringIO((out / "grades.csv").read_text()))}
    assert rows == expected


def test_a_grader_failure_on_one_student_does_not_stop_the_class(run, tmp_path, monkeypatch):
    import autograder.grading.grade as one_grade

    real = one_grade.grade_submission

    def flaky(folder, course, sandbox, *, student=None, stems=None, **more):
        if student == "cleo":
            raise RuntimeError("the grader broke")
        return real(folder, course, sandbox, student=student, stems=stems, **more)

    monkeypatch.setattr(one_grade, "grade_submission", flaky)
    class_dir = tmp_path / "class"
    for name in ("cleo", "José Ñúñez"):
        shutil.copytree(run.class_dir / name, class_dir / name)
    results = {r.student: r for r in grade_class(class_dir, tmp_path / "out", run.course, jobs=2)}
    assert results["José Ñúñez"].score == 7
    assert results["cleo"].score == 0 and results["cleo"].checks[0].reason == "grader_error"
    assert "the grader broke" in results["cleo"].checks[0].message
    # not reused by a rerun: it is graded again
    monkeypatch.setattr(one_grade, "grade_submission", real)
    again = {r.student: r for r in grade_class(class_dir, tmp_path / "out", run.course, jobs=2)}
    assert again["cleo"].score == run.results["cleo"].score


# ====================================================================== intake in a class, and a run that always ends

def _notebook_of(path: Path) -> bytes:
    nb = nbformat.v4.new_notebook()
    nb.cells = [nbformat.v4.new_code_cell(path.read_text(encoding="utf-8"))]
    return nbformat.writes(nb).encode("utf-8")


def test_intake_in_a_class_links_forms_and_names(course_at, tmp_path):
    """Links to the solutions or another student score 0 as refused; both forms with work: the
    better counts; near-miss names in a subfolder are graded and said; the report lists it all."""
    course = course_at(small_course(tmp_path))
    root = tmp_path / "course" / "submitted"
    secret = tmp_path / "solutions"
    shutil.copytree(SOLUTIONS, secret)
    _student(root / "ada", "self_attention", {"hand_computation.py": SOLUTIONS / "hand_computation.py"})
    (root / "copycat").symlink_to(root / "ada", target_is_directory=True)
    (root / "eve").mkdir()
    (root / "eve" / "self_attention").symlink_to(secret, target_is_directory=True)
    mallory = _student(root / "mallory", "self_attention", {})
    (mallory / "hand_computation.py").symlink_to(secret / "hand_computation.py")
    (mallory / "attention.py").symlink_to(Path("..") / ".." / "ada" / "self_attention" / "hand_computation.py")
    buggy = (KIT_ROOT / "tests" / "corpus" / "attention" / "buggy" / "no_scaling.py").read_bytes()
    _student(root / "both", "self_attention", {"attention.py": buggy,
                                                "attention.ipynb": _notebook_of(SOLUTIONS / "attention.py")})
    _student(root / "zed" / "self_attention", "Homework 1", {"Hand-Computation (1).py": SOLUTIONS / "hand_computation.py"})
    out = tmp_path / "out"
    results = {r.student: r for r in grade_class(tmp_path / "course", out, course, jobs=2, exports=("canvas",))}
    assert results["ada"].score == 7
    for name in ("copycat", "eve"):
        assert results[name].score == 0 and {c.reason for c in results[name].checks} == {"refused"}
        assert "symbolic link" in results[name].checks[0].message
    hc = results["mallory"].exercise("hand_computation")
    assert hc.score == 0 and hc.checks[0].reason == "refused" and "outside your folder" in hc.checks[0].message
    assert results["mallory"].exercise("attention").checks[0].reason == "refused"
    att = results["both"].exercise("attention")
    assert att.score == att.max_score and att.graded_file == "attention.ipynb" and "both were graded" in att.note
    assert "both_forms" in att.flags
    zed = results["zed"].exercise("hand_computation")
    assert zed.score == 7 and "Homework 1/" in zed.note and "graded as hand_computation.py" in zed.note
    assert "graded as hand_computation.py" in (out / "feedback" / "zed.md").read_text(encoding="utf-8")
    summary = json.loads((out / "summary.json").read_text(encoding="utf-8"))
    refused = {(t["student"], t["exercise"]) for t in summary["trouble"] if t["kind"] == "refused"}
    assert {("copycat", "attention"), ("eve", "attention"), ("mallory", "hand_computation")} <= refused
    assert any(i["student"] == "both" and "both_forms" in i["flags"] for i in summary["intake"])
    assert (out / "report.html").is_file() and (out / "export-canvas.csv").is_file()
    grades = {row["student"]: row for row in csv.DictReader(io.StringIO((out / "grades.csv").read_text()))}
    assert grades["ada"]["attention"] == "" and grades["ada"]["hand_computation"] == "7"
    assert grades["copycat"]["total"] == "0"


def test_a_damaged_result_file_is_graded_again_never_a_crash(course_at, tmp_path):
    course = course_at(small_course(tmp_path))
    class_dir, out = tmp_path / "class", tmp_path / "out"
    _student(class_dir, "ada", {"hand_computation.py": SOLUTIONS / "hand_computation.py"})
    _student(class_dir, "bo", {"hand_computation.py": SOLUTIONS / "hand_computation.py"})
    grade_class(class_dir, out, course, jobs=1)
    (out / "results" / "ada.json").write_text('{"extra_data": ' + "[" * 100_000 + "]" * 100_000 + "}")
    (out / "results" / "bo.json").write_text('{"extra_data": {"fingerprint": 1, "result": [null]}}')
    for _ in range(2):
        results = {r.student: r.score for r in grade_class(class_dir, out, course, jobs=1)}
        assert results == {"ada": 7, "bo": 7}


def test_a_deep_folder_tree_in_a_submission_costs_nothing(course_at, tmp_path):
    course = course_at(small_course(tmp_path))
    class_dir = tmp_path / "class"
    folder = _student(class_dir, "deep", {"hand_computation.py": SOLUTIONS / "hand_computation.py"})
    fd = os.open(folder, os.O_RDONLY)
    try:                                          # 3000 levels: deeper than any path Python could spell
        for _ in range(3000):
            os.mkdir("d", dir_fd=fd)
            nxt = os.open("d", os.O_RDONLY, dir_fd=fd)
            os.close(fd)
            fd = nxt
    finally:
        os.close(fd)
    try:
        results = grade_class(class_dir, tmp_path / "out", course, jobs=1)
        assert [(r.student, r.score) for r in results] == [("deep", 7)]
    finally:
        _remove_chain(folder, "d", 3000)    # pytest's own clean-up of old temp folders recurses


def _remove_chain(folder: Path, name: str, depth: int) -> None:
    """Remove folder/name/name/... (depth levels) without recursion, deepest first."""
    fds = [os.open(folder, os.O_RDONLY)]
    try:
        for _ in range(depth - 1):
            fds.append(os.open(name, os.O_RDONLY, dir_fd=fds[-1]))
        while fds:
            fd = fds.pop()
            os.rmdir(name, dir_fd=fd)
            os.close(fd)
    finally:
        for fd in fds:
            os.close(fd)


def test_grades_csv_is_written_when_writing_one_student_fails(course_at, tmp_path, monkeypatch):
    from autograder.grading import class_run    # the class loop writes each result

    course = course_at(small_course(tmp_path))
    class_dir, out = tmp_path / "class", tmp_path / "out"
    for name in ("ada", "bo"):
        _student(class_dir, name, {"hand_computation.py": SOLUTIONS / "hand_computation.py"})
    real = class_run.write_atomic

    def failing(path, text):
        if Path(path).name == "bo.json":
            raise OSError(28, "No space left on device")
        return real(path, text)

    monkeypatch.setattr(class_run, "write_atomic", failing)
    with pytest.raises(OSError):
        grade_class(class_dir, out, course, jobs=2)
    grades = {row["student"]: row["total"] for row in csv.DictReader(io.StringIO((out / "grades.csv").read_text()))}
    assert grades == {"ada": "7", "bo": "7"}
    assert (out / "report.html").is_file()


def test_grade_refuses_untrusted_code_where_the_jail_does_not_hold(tmp_path, monkeypatch, capsys):
    """No user namespaces (a locked-down kernel, macOS): `attnkit grade` says why and grades
    nothing, unless the instructor passes --no-isolation."""
    from autograder import cli  # the class loop makes the sandboxes
    from autograder.grading import grade as one_grade     # the one sandbox set-up
    from autograder.sandbox import SandboxError

    seen = []

    class NoJail:
        def __init__(self, limits, *, hide=(), require_isolation=False, **_):
            seen.append(require_isolation)
            if require_isolation:
                raise SandboxError("the sandbox cannot isolate submissions here: user namespaces are disabled. "
                                   "Pass --no-isolation to grade anyway (only for code you trust).")
            raise RuntimeError("graded without a jail")

    monkeypatch.setattr(one_grade, "Sandbox", NoJail)
    student = tmp_path / "class" / "ada"
    student.mkdir(parents=True)
    (student / "attention.py").write_text("x = 1\n")
    assert cli.main(["grade", str(tmp_path / "class"), "--out", str(tmp_path / "out")]) == 2
    assert "--no-isolation" in capsys.readouterr().err and seen == [True]
    assert not (tmp_path / "out" / "results" / "ada.json").exists()
    # With --no-isolation the run goes on (here every submission is a grader error: no sandbox at all).
    assert cli.main(["grade", str(tmp_path / "class"), "--out", str(tmp_path / "out"), "--no-isolation"]) == 0
    assert seen[1] is False and (tmp_path / "out" / "grades.csv").is_file()
