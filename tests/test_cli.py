"""The `attnkit` command line as a user types it: what --exercise accepts, where --course may go,
what `check` says about untouched stubs, and whole lines in a pipe."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from pathlib import Path

import pytest

from autograder import cli
from autograder.frontends import selection
from autograder.config import KIT_ROOT
from autograder.sandbox.inside.kernel import reaped

SOLUTIONS = KIT_ROOT / "solutions"


WHOLE, TASK, CHECK = "every check", "the task's checks", "that check"


@pytest.mark.parametrize("name,stem,selects", [
    ("attention", "attention", WHOLE), ("attention.py", "attention", WHOLE), ("attention.ipynb", "attention", WHOLE),
    ("exercises/attention.ipynb", "attention", WHOLE), ("attention.softmax", "attention", TASK),
    ("attention.softmax.rows", "attention", CHECK), ("multihead.MultiHeadAttention", "multihead", TASK)])
def test_an_exercise_is_named_by_its_stem_file_task_or_check(name, stem, selects, course):
    stems, only = selection.select([name], course)
    assert stems == (stem,)
    checks = set(course.exercises[stem].checks)
    if selects == WHOLE:
        assert only is None
    elif selects == TASK:
        assert only == {cid for cid in checks if cid.startswith(name + ".")} and 1 < len(only) < len(checks)
    else:
        assert only == {name}


def test_a_task_and_a_whole_exercise_together(course):
    stems, only = selection.select(["attention.softmax", "causal_mask.py"], course)
    assert stems == ("attention", "causal_mask")
    assert only == {cid for cid in course.exercises["attention"].checks if cid.startswith("attention.softmax.")} | \
        set(course.exercises["causal_mask"].checks)


@pytest.mark.parametrize("name,says", [("atention", "no such exercise"), ("attention.sofmax", "its tasks: "),
                                       ("attention.softmax.rowz", "no task or check called that")])
def test_an_unknown_name_says_what_would_work(name, says, course):
    with pytest.raises(selection.SelectionError) as err:
        selection.select([name], course)
    assert str(err.value).startswith(f"--exercise {name}: ") and says in str(err.value)


def test_check_of_one_task_runs_only_that_tasks_checks(tmp_path, capsys, course):
    out = tmp_path / "results.json"
    code = cli.main(["check", "--submission", str(SOLUTIONS), "--exercise", "attention.softmax", "--json", str(out)])
    assert code == 0, capsys.readouterr().out
    graded = {test["name"].split(": ")[0] for test in json.loads(out.read_text())["tests"]}
    assert graded == {cid for cid in course.exercises["attention"].checks if cid.startswith("attention.softmax.")}


def test_course_goes_before_or_after_the_subcommand():
    before = cli.parser().parse_args(["--course", "a.yml", "check"])
    after = cli.parser().parse_args(["check", "--course", "b.yml"])
    both = cli.parser().parse_args(["--course", "a.yml", "grade", "CLASS", "--out", "O", "--course", "b.yml"])
    assert (before.course, after.course, both.course) == (Path("a.yml"), Path("b.yml"), Path("b.yml"))
    assert cli.parser().parse_args(["build"]).course is None      # main() then takes the kit's course.yml


@pytest.mark.parametrize("argv", [
    ["check"], ["check", "--exercise", "attention", "--exercise", "scaling.py", "--watch"],
    ["--course", "a.yml", "check", "--submission", "x"], ["--course=a.yml", "check", "--json", "o.json"],
    ["--cour", "a.yml", "check", "--name", "N", "--student", "s1"], ["check", "--course", "b.yml"],
    ["check", "--sub", "x", "--ex", "attention"],       # argparse's prefixes of the check's own options
])
def test_a_check_is_read_by_its_own_parser_as_the_whole_parser_reads_it(argv):
    assert cli.command_named(argv) == "check"
    assert vars(cli.parse(argv)) == vars(cli.parser().parse_args(argv))


@pytest.mark.parametrize("argv, named", [
    (["grade", "C", "--out", "O"], "grade"), (["-h"], None), (["--help"], None), (["--", "check"], None),
    (["--course"], None), ([], None), (["--c", "check"], None),    # `check` is the course file there
])
def test_anything_but_a_check_is_read_by_the_whole_parser(argv, named):
    assert cli.command_named(argv) == named


def test_a_mistake_in_a_check_line_is_reported_as_the_whole_parser_reports_it(capsys):
    said = []
    for line in (["check", "--bogus"], ["check", "--json"], ["--course", "c.yml", "check", "extra"]):
        for parse in (cli.parse, cli.parser().parse_args):
            with pytest.raises(SystemExit) as exited:
                parse(line)
            assert exited.value.code == 2
            said.append(capsys.readouterr().err)
    assert said[0] == said[1] and said[2] == said[3] and said[4] == said[5]
    assert "unrecognized arguments: --bogus" in said[0] and "{check,grade," in said[0]    # every command listed
    assert "--json: expected one argument" in said[2]


def test_a_bad_course_after_the_subcommand_is_reported(tmp_path, capsys):
    bad = tmp_path / "course.yml"
    bad.write_text("points: [", encoding="utf-8")
    assert cli.main(["check", "--submission", str(SOLUTIONS), "--course", str(bad)]) == 2
    assert f"{bad}:" in capsys.readouterr().err


def test_check_names_the_untouched_stubs_once_in_one_line(capsys):
    code = cli.main(["check", "--submission", str(KIT_ROOT / "exercises"), "--exercise", "attention",
                     "--exercise", "causal_mask"])
    out = capsys.readouterr().out
    assert code == 1
    said = [line for line in out.splitlines() if "untouched stub" in line]
    assert len(said) == 1 and "attention, causal_mask" in said[0], out
    assert "not implemented yet:" not in out          # no block per stub


def test_a_pipe_gets_whole_lines(tmp_path):
    # rich wraps at 80 columns when it cannot ask a terminal: a hint was cut into fragments.
    from autograder.checks import all_misconceptions

    env = {k: v for k, v in os.environ.items() if k != "COLUMNS"}
    run = subprocess.run([sys.executable, "-m", "autograder.cli", "misconceptions"], capture_output=True,
                         text=True, env=env, cwd=tmp_path, timeout=120)
    assert run.returncode == 0, run.stderr
    lines = run.stdout.splitlines()
    for mis in all_misconceptions():
        assert any(mis.hint in line for line in lines), mis.id


def _children_of(pid: int) -> set[int]:
    found = set()
    for entry in Path("/proc").iterdir():
        try:
            if entry.name.isdigit() and int((entry / "stat").read_text().rsplit(")", 1)[1].split()[1]) == pid:
                found.add(int(entry.name))
        except (OSError, IndexError, ValueError):
            pass
    return found


def _cgroups_of(pid: int) -> list[Path]:
    """The sandbox cgroup folders a grader of this pid made (autograder/sandbox/cgroups.py's names)."""
    return [p for c in ("memory", "pids", "cpuacct") for p in Path("/sys/fs/cgroup", c).glob(f"attnkit-{pid}-*")]


def _winding_down(grader: int, before: set[int], within_s: float) -> tuple[set[int], list[Path]]:
    """The processes a check left (children of this process, its subreaper) and the cgroup folders of
    the grader's and their pids, once they are gone or `within_s` has passed; reaps what ends meanwhile."""
    deadline = time.monotonic() + within_s
    groups: list[Path] = []
    seen: set[int] = {grader}
    while True:
        list(reaped())       # what ended meanwhile, waited for
        left = _children_of(os.getpid()) - before
        seen |= left
        groups = [g for pid in seen for g in _cgroups_of(pid)]
        if (not left and not groups) or time.monotonic() > deadline:
            return left, groups
        time.sleep(0.05)


def test_the_check_program_exits_with_its_report_whole_and_nothing_behind(tmp_path):
    # `attnkit check` closes its sandbox before it exits: what it printed into a pipe is all there,
    # its exit code is the check's, and its zygotes and their children are gone, leaving no cgroup
    # folder (this process is made their subreaper, so one left behind stays its child).
    import ctypes

    libc = ctypes.CDLL(None, use_errno=True)
    PR_SET_CHILD_SUBREAPER = 36
    assert libc.prctl(PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0) == 0
    try:
        before = _children_of(os.getpid())
        for folder, code in ((SOLUTIONS, 0), (KIT_ROOT / "exercises", 1)):
            run = subprocess.Popen([sys.executable, "-m", "autograder.cli", "check", "--submission", str(folder),
                                    "--exercise", "attention", "--json", "r.json"],
                                   stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, cwd=tmp_path)
            stdout, stderr = run.communicate(timeout=120)
            assert run.returncode == code, stderr
            assert stdout.rstrip().endswith("wrote r.json") and "give the same inputs" in stdout, stdout[-500:]
            assert json.loads((tmp_path / "r.json").read_text())["tests"]
            left, groups = _winding_down(run.pid, before, within_s=10)
            assert not left, [Path(f"/proc/{pid}/cmdline").read_bytes() for pid in left]
            assert not groups, groups
    finally:
        libc.prctl(PR_SET_CHILD_SUBREAPER, 0, 0, 0, 0)


def test_the_grader_asks_numpy_for_one_blas_thread_unless_told_otherwise():
    """Set in a new process before numpy's import (as `attnkit` does): numpy starts no BLAS thread
    of its own (the process has one thread: on two cores it otherwise has two); a value the
    environment already gives is kept."""
    code = ("import os\nfrom autograder.judge.threads import one_thread\none_thread(unless_given=True)\nimport numpy\n"
            "print(os.environ['OPENBLAS_NUM_THREADS'], os.environ['OMP_NUM_THREADS'], len(os.listdir('/proc/self/task')))\n")
    env = {k: v for k, v in os.environ.items() if not k.endswith("_NUM_THREADS")}
    run = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env=env, cwd=KIT_ROOT)
    assert run.returncode == 0, run.stderr
    assert run.stdout.split() == ["1", "1", "1"]
    run = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                         env=env | {"OMP_NUM_THREADS": "3"}, cwd=KIT_ROOT)
    assert run.stdout.split()[:2] == ["1", "3"]


LEAVING = """
import atexit, sys, threading, time
from pathlib import Path
from autograder import cli

def late_writer(path=Path(sys.argv[1])):
    time.sleep(0.3)
    path.write_text("written before the end", encoding="utf-8")

threading.Thread(target=late_writer).start()          # not a daemon: the end waits for it
atexit.register(lambda: print("exit hook ran"))        # buffered: the end flushes it
sys.argv = ["attnkit", "check", "--submission", sys.argv[2], "--exercise", "nosuch"]
cli.run()
"""


def test_a_command_ends_as_the_interpreter_would_its_threads_and_exit_hooks_done(tmp_path):
    """attnkit ends without Python's teardown of its modules, but as the interpreter would end it
    otherwise: the command's exit code, a thread still working joined, the exit hooks run and
    their output flushed."""
    written = tmp_path / "late.txt"
    env = {k: v for k, v in os.environ.items() if k != "PYTHONUNBUFFERED"}     # its output is buffered
    run = subprocess.run([sys.executable, "-c", LEAVING, str(written), str(SOLUTIONS)], capture_output=True,
                         text=True, cwd=tmp_path, env=env, timeout=60)
    assert run.returncode == 2, run.stderr
    assert "no such exercise" in run.stdout
    assert run.stdout.splitlines()[-1:] == ["exit hook ran"]
    assert written.read_text(encoding="utf-8") == "written before the end"
