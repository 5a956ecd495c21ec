"""The nbgrader course on a shared machine, with real accounts: an instructor makes the course with
the usual umask 022, and a student's account can read none of what it keeps (the solutions, the
course file with the hidden checks' ids, the gradebook, another student's submitted work); a
submission planted in the exchange under another student's name, or a link to another's work,
is refused by collect and named in its output, and the student's own work is collected.

Run as root: the test makes the accounts (useradd) and acts as each of them (a fresh interpreter
that drops to the instructor's ids, or `runuser`). Elsewhere it is skipped, saying why."""

from __future__ import annotations

import os
import pwd
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

import pytest

from autograder.config import KIT_ROOT

ASSIGNMENT = "self_attention"
TEACHER, ADA, BEN = "attnkit-teacher", "attnkit-ada", "attnkit-ben"

pytestmark = pytest.mark.skipif(
    sys.platform != "linux" or os.geteuid() != 0 or not shutil.which("useradd") or not shutil.which("runuser"),
    reason="needs root on Linux with useradd and runuser, to make the instructor's and students' accounts")


@pytest.fixture(scope="module")
def accounts() -> dict[str, pwd.struct_passwd]:
    for name in (TEACHER, ADA, BEN):
        try:
            pwd.getpwnam(name)
        except KeyError:
            subprocess.run(["useradd", "--no-create-home", "--user-group", name], check=True)
    return {name: pwd.getpwnam(name) for name in (TEACHER, ADA, BEN)}


@pytest.fixture
def shared():
    """A folder every account can enter (pytest's own tmp_path is root's alone)."""
    folder = Path(tempfile.mkdtemp(prefix="attnkit-shared-"))
    folder.chmod(0o755)
    if any(not parent.stat().st_mode & 0o001 for parent in folder.parents):
        shutil.rmtree(folder)
        pytest.skip(f"the temporary folder {folder.parent} is not open to other accounts")
    yield folder
    shutil.rmtree(folder, ignore_errors=True)


# `attnkit nbgrader COURSE` run by the instructor's account with umask 022 in a fresh interpreter
# (forking pytest, which has threads, could deadlock the child), then what nbgrader writes later
# in the course, with the same umask: generate_assignment's release/, the gradebook, and collect's
# copy of a submission (its files 644, as submit leaves them). The kit's interpreter may sit where
# other accounts cannot enter: what the run needs is imported before the ids are dropped.
AS_INSTRUCTOR = """
import os, shutil, sqlite3, sys
from autograder.cli import main

scratch, course, uid, gid, home, student = sys.argv[1:]
assert main(["nbgrader", scratch]) == 0
print("--- as the instructor", flush=True)
os.setgroups([])
os.setgid(int(gid))
os.setuid(int(uid))
os.umask(0o022)
os.environ.update(HOME=home, ATTNKIT_CACHE_DIR=os.path.join(home, "cache"))
if main(["nbgrader", course]) != 0:
    sys.exit(3)
release = os.path.join(course, "release", "self_attention")
os.makedirs(release)
shutil.copy(os.path.join(course, "source", "self_attention", "attention.ipynb"), release)
sqlite3.connect(os.path.join(course, "gradebook.db")).execute("CREATE TABLE grade (score REAL)").connection.close()
submitted = os.path.join(course, "submitted", student, "self_attention")
os.makedirs(submitted)
with open(os.path.join(submitted, "attention.ipynb"), "w") as fh:
    fh.write("the other student's own work")
os.chmod(os.path.join(submitted, "attention.ipynb"), 0o644)
with open(os.path.join(home, "note.txt"), "w") as fh:
    fh.write("anyone may read this")
"""


def _read_as(user: str, path: Path) -> subprocess.CompletedProcess:
    command = ["ls", str(path)] if path.is_dir() else ["cat", str(path)]
    return subprocess.run(["runuser", "-u", user, "--", *command], capture_output=True, text=True)


def test_a_course_made_with_umask_022_keeps_the_key_from_a_students_account(accounts, shared, tmp_path):
    teacher = accounts[TEACHER]
    home = shared / "teacher-home"           # 755, as a home folder often is
    home.mkdir()
    os.chown(home, teacher.pw_uid, teacher.pw_gid)
    course, open_note = home / "course", home / "note.txt"
    env = dict(os.environ, PYTHONPATH=os.pathsep.join(filter(None, [str(KIT_ROOT), os.environ.get("PYTHONPATH")])))
    run = subprocess.run([sys.executable, "-c", AS_INSTRUCTOR, str(tmp_path / "warm-up"), str(course),
                          str(teacher.pw_uid), str(teacher.pw_gid), str(home), BEN],
                         env=env, capture_output=True, text=True, timeout=300)
    assert run.returncode == 0, run.stdout[-2000:] + run.stderr[-3000:]
    said = run.stdout.split("--- as the instructor", 1)[1]
    assert (course / "nbgrader_config.py").stat().st_uid == teacher.pw_uid

    # the student's account works: it reads what the instructor left open beside the course
    assert _read_as(ADA, open_note).stdout == "anyone may read this"
    source = course / "source" / ASSIGNMENT
    secrets = [source, source / "attention.ipynb", course / "attnkit_course.yml", course / "release" / ASSIGNMENT,
               course / "gradebook.db", course / "submitted" / BEN / ASSIGNMENT / "attention.ipynb"]
    for path in secrets:
        run = _read_as(ADA, path)
        assert run.returncode != 0 and "Permission denied" in run.stderr, (path, run.stdout[:200])

    # the exchange is nbgrader's, outside the course; the command says how to set up the hub
    from autograder.nbgrader.shared_machine import NBGRADER_EXCHANGE

    assert not (course / "exchange").exists()
    assert not [line for line in (course / "nbgrader_config.py").read_text().splitlines()
                if line.startswith("c.Exchange.root")]
    assert f"exchange {NBGRADER_EXCHANGE}" in said and "on JupyterHub" in said and "load_subconfig(" in said
    assert "c.CourseDirectory.course_id = 'self_attention_from_scratch'" in said


def _submission(folder: Path, work: str, timestamp: str) -> Path:
    folder.mkdir()
    (folder / "attention.ipynb").write_text(work)
    (folder / "timestamp.txt").write_text(timestamp)
    return folder


def test_collect_refuses_a_submission_planted_under_another_students_name(accounts, shared, tmp_path, course_at):
    from autograder.nbgrader.course import write_course

    exchange = shared / "exchange"
    exchange.mkdir()
    exchange.chmod(0o1777)
    root = tmp_path / "course"
    write_course(root, KIT_ROOT, course_at(), exchange=exchange)
    inbound = exchange / "self_attention_from_scratch" / "inbound"
    inbound.mkdir(parents=True)
    inbound.chmod(0o2733)                 # as release_assignment makes it: anyone writes, no one else lists

    def owned_by(user: str, folder: Path) -> Path:
        for path in [folder, *folder.rglob("*")]:
            os.chown(path, accounts[user].pw_uid, accounts[user].pw_gid, follow_symlinks=False)
        return folder

    # ada's own submission, then a later one in her name that ben made
    earlier, later = "2030-01-01 10:00:00.000000 UTC", "2030-01-02 10:00:00.000000 UTC"
    owned_by(ADA, _submission(inbound / f"{ADA}+{ASSIGNMENT}+{earlier}+a1", "ada's own work", earlier))
    planted = owned_by(BEN, _submission(shared / "planted", "ben's version of ada", later))
    run = subprocess.run(["runuser", "-u", BEN, "--", "cp", "-r", str(planted),
                          str(inbound / f"{ADA}+{ASSIGNMENT}+{later}+b1")], capture_output=True, text=True)
    assert run.returncode == 0, run.stderr
    # ben hands in a link to ada's work (her folder in the exchange, or her home)
    run = subprocess.run(["runuser", "-u", BEN, "--", "ln", "-s", str(inbound / f"{ADA}+{ASSIGNMENT}+{earlier}+a1"),
                          str(inbound / f"{BEN}+{ASSIGNMENT}+{later}+b2")], capture_output=True, text=True)
    assert run.returncode == 0, run.stderr

    env = dict(os.environ, PYTHONPATH=os.pathsep.join(filter(None, [str(KIT_ROOT), os.environ.get("PYTHONPATH")])))
    run = subprocess.run([sys.executable, "-m", "nbgrader", "collect", ASSIGNMENT, f"--CourseDirectory.root={root}"],
                         cwd=root, env=env, capture_output=True, text=True, timeout=300)
    said = run.stdout + run.stderr
    assert run.returncode == 0, said[-3000:]
    assert (root / "submitted" / ADA / ASSIGNMENT / "attention.ipynb").read_text() == "ada's own work", said[-3000:]
    assert not (root / "submitted" / BEN).exists(), said[-3000:]
    assert f"{ADA}+{ASSIGNMENT}+{later}+b1: it is named as {ADA}'s submission, but the folder is owned by {BEN}" in said
    assert f"{BEN}+{ASSIGNMENT}+{later}+b2: it is named as {BEN}'s submission, but the folder is a symbolic link" in said
    assert "2 submission folder(s) refused" in said
