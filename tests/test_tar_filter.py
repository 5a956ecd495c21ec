"""Every Python pyproject allows unpacks an honest .tar.gz: where tarfile has no "data" filter (before
3.10.12 and 3.11.4; Debian 12's own 3.11.2), the kit applies the same rules in the same words.

The rules are checked against tarfile's own filter member by member; then a class (a .tar.gz, a
.zip, and a hostile .tar.gz of every member the filter refuses) is graded by `attnkit grade`
on this interpreter with its tarfile made as old as that (the data filter removed, in the grader
and in its bounded parser alike), and, where the machine has one, on a real Python of this minor
version that predates the filter.
"""

from __future__ import annotations

import csv
import io
import json
import os
import subprocess
import sys
import tarfile
from pathlib import Path

import pytest

from autograder.config import KIT_ROOT
from autograder.intake import tar_filter

SOLUTIONS = KIT_ROOT / "solutions"
FULL_MARKS = 60

# What a tarfile of 3.11.3 and before lacks (PEP 706's filters): removed by a `tarfile` module put first on
# the path, which loads the standard library's own and takes them out.
OLD_TARFILE = '''"""The standard library's tarfile without PEP 706's filters, as 3.10.11 and 3.11.3 have it."""
import importlib.util, os, sys, sysconfig

_spec = importlib.util.spec_from_file_location("tarfile", os.path.join(sysconfig.get_paths()["stdlib"], "tarfile.py"))
_real = importlib.util.module_from_spec(_spec)
sys.modules["tarfile"] = _real
_spec.loader.exec_module(_real)
for _name in ("data_filter", "tar_filter", "fully_trusted_filter", "FilterError", "AbsolutePathError",
              "OutsideDestinationError", "SpecialFileError", "AbsoluteLinkError", "LinkOutsideDestinationError"):
    if hasattr(_real, _name):
        delattr(_real, _name)
'''


def _member(name: str, kind: bytes = tarfile.REGTYPE, linkname: str = "") -> tarfile.TarInfo:
    info = tarfile.TarInfo(name)
    info.type, info.linkname, info.mode = kind, linkname, 0o644
    return info


MEMBERS = [
    _member("attention.py"), _member("sub/attention.py"), _member("sub", tarfile.DIRTYPE),
    _member("./attention.py"), _member("/etc/passwd"), _member("//abs.py"), _member("../escape.py"),
    _member("sub/../../escape.py"), _member("sub/../attention.py"),
    _member("pipe", tarfile.FIFOTYPE), _member("tty", tarfile.CHRTYPE), _member("disk", tarfile.BLKTYPE),
    _member("link", tarfile.SYMTYPE, "attention.py"), _member("sub/up", tarfile.SYMTYPE, "../attention.py"),
    _member("abs", tarfile.SYMTYPE, "/etc/passwd"), _member("out", tarfile.SYMTYPE, "../../secret"),
    _member("sub/out", tarfile.SYMTYPE, "../../secret"), _member("hard", tarfile.LNKTYPE, "attention.py"),
    _member("hardout", tarfile.LNKTYPE, "../secret"), _member("hardabs", tarfile.LNKTYPE, "/etc/shadow"),
]


@pytest.mark.skipif(not tar_filter.NATIVE, reason="this Python's tarfile has no data filter to compare with")
@pytest.mark.parametrize("member", MEMBERS, ids=[m.name for m in MEMBERS])
def test_the_kits_rules_refuse_what_tarfiles_data_filter_refuses_in_its_words(tmp_path, member):
    try:
        tarfile.data_filter(member, str(tmp_path))
        native = ""
    except tarfile.FilterError as err:
        native = str(err)
    assert tar_filter.refused(member, str(tmp_path)) == native


# ---------------------------------------------------------------------- a class graded on an old tarfile


def _tar_gz(members: list[tuple[tarfile.TarInfo, bytes]]) -> bytes:
    buf = io.BytesIO()
    with tarfile.open(fileobj=buf, mode="w:gz") as tar:
        for info, data in members:
            info.size = len(data)
            tar.addfile(info, io.BytesIO(data) if data else None)
    return buf.getvalue()


def _zip(files: dict[str, bytes]) -> bytes:
    import zipfile

    buf = io.BytesIO()
    with zipfile.ZipFile(buf, "w", zipfile.ZIP_DEFLATED) as zf:
        for name, data in files.items():
            zf.writestr(name, data)
    return buf.getvalue()


def archive_class(root: Path) -> Path:
    """`tgz` and `zipper` hand in the solutions as one archive; `hostile` hands in the solutions'
    hand_computation.py and a .tar.gz of attention.py beside every member the filter refuses."""
    solutions = {p.name: p.read_bytes() for p in sorted(SOLUTIONS.glob("*.py"))}
    class_dir = root / "class"
    for name, upload, data in (("tgz", "work.tar.gz", _tar_gz([(_member(n), d) for n, d in solutions.items()])),
                               ("zipper", "work.zip", _zip(solutions))):
        (class_dir / name).mkdir(parents=True)
        (class_dir / name / upload).write_bytes(data)
    hostile = class_dir / "hostile"
    hostile.mkdir()
    (hostile / "hand_computation.py").write_bytes(solutions["hand_computation.py"])
    refused = [m for m in MEMBERS if m.type not in (tarfile.REGTYPE, tarfile.DIRTYPE) or m.name.startswith(("/", ".."))]
    (hostile / "attention.tar.gz").write_bytes(_tar_gz(
        [(_member("attention.py"), solutions["attention.py"])] + [(m, b"x = 1\n" if m.isreg() else b"")
                                                                   for m in refused]))
    return class_dir


def grade(python: str, class_dir: Path, out: Path, env: dict) -> subprocess.CompletedProcess:
    return subprocess.run([python, "-m", "autograder.cli", "grade", str(class_dir), "--out", str(out), "--jobs", "1"],
                          capture_output=True, text=True, timeout=900, cwd=str(class_dir.parent),
                          env=env | {"ATTNKIT_CACHE_DIR": str(class_dir.parent / "cache")})


def assert_archives_graded(run: subprocess.CompletedProcess, out: Path) -> None:
    """Honest archives at full marks; the hostile one's good member graded, the others said skipped
    in the filter's words."""
    assert run.returncode == 0, run.stdout[-2000:] + run.stderr[-3000:]
    rows = {r["student"]: r for r in csv.DictReader(io.StringIO((out / "grades.csv").read_text(encoding="utf-8")))}
    assert sorted(rows) == ["hostile", "tgz", "zipper"], rows
    assert float(rows["tgz"]["total"]) == float(rows["zipper"]["total"]) == FULL_MARKS, rows
    assert float(rows["hostile"]["hand_computation"]) == 7 and float(rows["hostile"]["attention"]) == 15, rows
    told = json.dumps(json.loads((out / "results" / "hostile.json").read_text(encoding="utf-8")))
    for said in ("/etc/passwd was skipped (its path leads out", "'../escape.py' would be extracted to",
                 "'pipe' is a special file", "'disk' is a special file", "'abs' is a link to an absolute path",
                 "'out' would link to", "'hardout' would link to", "'hardabs' is a link to an absolute path"):
        assert said in told, (said, told[:3000])


@pytest.mark.slow
def test_on_a_tarfile_without_the_data_filter_honest_archives_keep_full_marks(tmp_path):
    old = tmp_path / "old-tarfile"
    old.mkdir()
    (old / "tarfile.py").write_text(OLD_TARFILE, encoding="utf-8")
    env = dict(os.environ, PYTHONPATH=os.pathsep.join(filter(None, [str(old), str(KIT_ROOT),
                                                                    os.environ.get("PYTHONPATH")])))
    probe = subprocess.run([sys.executable, "-c", "import tarfile; print(hasattr(tarfile, 'data_filter'))"],
                           capture_output=True, text=True, env=env, cwd=str(tmp_path), check=True)
    assert probe.stdout.strip() == "False"       # the grader's tarfile is the old one; so is its parser's
    class_dir = archive_class(tmp_path)
    run = grade(sys.executable, class_dir, tmp_path / "out", env)
    assert_archives_graded(run, tmp_path / "out")


def _python_without_the_filter() -> str | None:
    """A Python of this minor version whose tarfile predates the data filter (Debian 12's own 3.11.2)."""
    minor = f"{sys.version_info.major}.{sys.version_info.minor}"
    for candidate in (f"/usr/bin/python{minor}", f"/usr/local/bin/python{minor}"):
        if os.path.realpath(candidate) == os.path.realpath(sys.executable) or not os.access(candidate, os.X_OK):
            continue
        probe = subprocess.run([candidate, "-I", "-c", "import tarfile; print(hasattr(tarfile, 'data_filter'))"],
                               capture_output=True, text=True)
        if probe.returncode == 0 and probe.stdout.strip() == "False":
            return candidate
    return None


@pytest.mark.slow
def test_on_a_real_python_that_predates_the_data_filter_honest_archives_keep_full_marks(tmp_path):
    from tests.venvs import standard_venv

    interpreter = _python_without_the_filter()
    if interpreter is None:
        pytest.skip(f"no Python {sys.version_info.major}.{sys.version_info.minor} without tarfile's data filter here")
    python = standard_venv(tmp_path / "venv", interpreter=interpreter)
    class_dir = archive_class(tmp_path)
    run = grade(str(python), class_dir, tmp_path / "out", dict(os.environ))
    assert_archives_graded(run, tmp_path / "out")
