"""What learning platforms hand an instructor: archives inside a student's folder,
opened safely; Canvas's flat download and Moodle's folders grouped per student; a submission
with files but nothing gradable listed as trouble; several candidates for one exercise each
graded and the better kept.

Archives are built here, hostile ones included (paths out of the folder, links, devices, zip
bombs, thousands of members); classes are graded with the hand computation only (no torch).
"""

from __future__ import annotations

import csv
import io
import json
import os
import stat
import tarfile
import tempfile
import zipfile
from pathlib import Path

import pytest
from rich.console import Console

from autograder.intake.archives import MAX_MEMBERS, ArchiveRefused, Budget, extract
from autograder.grading.local_grading import grade_class
from autograder.config import KIT_ROOT
from autograder.intake.lms import Layout, detect, read_class
from autograder.reports.summary import print_summary
from tests.test_classroom import small_course

SOLUTIONS = KIT_ROOT / "solutions"
RIGHT = (SOLUTIONS / "hand_computation.py").read_bytes()
WRONG = (KIT_ROOT / "tests" / "corpus" / "hand_computation" / "buggy" / "hand_imprecise.py").read_bytes()


def _zip(path: Path, members: dict[str, bytes], *, links: dict[str, str] = {}) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    with zipfile.ZipFile(path, "w", zipfile.ZIP_DEFLATED) as zf:
        for name, data in members.items():
            zf.writestr(name, data)
        for name, target in links.items():
            info = zipfile.ZipInfo(name)
            info.external_attr = (stat.S_IFLNK | 0o777) << 16
            zf.writestr(info, target)
    return path


def _tar(path: Path, members: dict[str, bytes], *, links: dict[str, str] = {}, fifo: str = "") -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    with tarfile.open(path, "w:gz") as tf:
        for name, data in members.items():
            info = tarfile.TarInfo(name)
            info.size = len(data)
            tf.addfile(info, io.BytesIO(data))
        for name, target in links.items():
            info = tarfile.TarInfo(name)
            info.type, info.linkname = tarfile.SYMTYPE, target
            tf.addfile(info)
        if fifo:
            info = tarfile.TarInfo(fifo)
            info.type = tarfile.FIFOTYPE
            tf.addfile(info)
    return path


def _dest(tmp_path: Path) -> Path:
    dest = tmp_path / "dest"
    dest.mkdir()
    return dest


def _files(folder: Path) -> set[str]:
    return {p.relative_to(folder).as_posix() for p in folder.rglob("*") if not p.is_dir()}


# ====================================================================== archives

@pytest.mark.parametrize("maker", [_zip, _tar])
def test_an_archive_writes_nothing_outside_its_folder(tmp_path, maker):
    suffix = ".zip" if maker is _zip else ".tar.gz"
    archive = maker(tmp_path / f"up{suffix}", {"../escaped.py": b"x = 1\n", "/tmp/absolute.py": b"x = 1\n",
                                             "hw/../../up.py": b"x = 1\n", "hw/attention.py": b"x = 2\n"},
                    links={"hw/link.py": "/etc/passwd", "hw/up.py": "../../secret"})
    dest = _dest(tmp_path)
    budget = Budget()
    assert extract(str(archive), "up", str(dest), budget) == 1
    assert _files(dest) == {"hw/attention.py"}
    assert not (tmp_path / "escaped.py").exists() and not Path("/tmp/absolute.py").exists()
    said = " ".join(budget.notes)
    assert "../escaped.py was skipped" in said and ("hw/link.py was skipped" in said)


def test_a_zip_of_windows_paths_and_mac_litter_is_unpacked_as_meant(tmp_path):
    archive = _zip(tmp_path / "up.zip", {"hw1\\attention.py": b"x = 1\n", "__MACOSX/hw1/._attention.py": b"junk",
                                          "C:\\Users\\x\\causal_mask.py": b"x = 1\n"})
    dest = _dest(tmp_path)
    extract(str(archive), "up.zip", str(dest), Budget())
    assert _files(dest) == {"hw1/attention.py"}


def test_a_fifo_in_a_tar_is_skipped(tmp_path):
    archive = _tar(tmp_path / "up.tgz", {"attention.py": b"x = 1\n"}, fifo="pipe")
    dest = _dest(tmp_path)
    budget = Budget()
    extract(str(archive), "up.tgz", str(dest), budget)
    assert _files(dest) == {"attention.py"} and "pipe was skipped" in " ".join(budget.notes)


def test_a_zip_bomb_is_refused_by_its_compression_ratio(tmp_path):
    archive = _zip(tmp_path / "bomb.zip", {"attention.py": b"x = 1\n", "zeros.py": bytes(20 * 2**20)})
    assert archive.stat().st_size < 100_000
    dest = _dest(tmp_path)
    with pytest.raises(ArchiveRefused, match="zip bomb"):
        extract(str(archive), "bomb.zip", str(dest), Budget())
    assert _files(dest) == set()


def test_an_archive_larger_than_the_budget_is_refused_by_its_declared_size(tmp_path):
    archive = _zip(tmp_path / "big.zip", {"a.py": os.urandom(6000)})
    dest = _dest(tmp_path)
    with pytest.raises(ArchiveRefused, match="would unpack to"):
        extract(str(archive), "big.zip", str(dest), Budget(bytes_left=5000))
    assert _files(dest) == set()


def test_a_zip_that_declares_less_than_it_holds_is_stopped_while_extracting(tmp_path):
    data = os.urandom(50_000)
    archive = _zip(tmp_path / "liar.zip", {"attention.py": data})
    raw = bytearray(archive.read_bytes())
    size = len(data).to_bytes(4, "little")
    for at in [i for i in range(len(raw) - 4) if raw[i:i + 4] == size]:   # local header and central directory
        raw[at:at + 4] = (100).to_bytes(4, "little")
    archive.write_bytes(bytes(raw))
    dest = _dest(tmp_path)
    with pytest.raises(ArchiveRefused):
        extract(str(archive), "liar.zip", str(dest), Budget())
    assert _files(dest) == set()


@pytest.mark.parametrize("maker", [_zip, _tar])
def test_thousands_of_members_are_refused(tmp_path, maker):
    archive = maker(tmp_path / ("many.zip" if maker is _zip else "many.tgz"),
                    {f"f{i}.txt": b"" for i in range(MAX_MEMBERS + 500)})
    dest = _dest(tmp_path)
    with pytest.raises(ArchiveRefused, match="members"):
        extract(str(archive), "many", str(dest), Budget())
    assert _files(dest) == set()


def test_an_archive_inside_the_archive_is_opened_one_level(tmp_path):
    innermost = io.BytesIO()
    with zipfile.ZipFile(innermost, "w") as zf:
        zf.writestr("deep.py", b"x = 1\n")
    inner = io.BytesIO()
    with zipfile.ZipFile(inner, "w") as zf:
        zf.writestr("attention.py", b"x = 1\n")
        zf.writestr("deeper.zip", innermost.getvalue())
    archive = _zip(tmp_path / "outer.zip", {"inner.zip": inner.getvalue(), "causal_mask.py": b"x = 1\n"})
    dest = _dest(tmp_path)
    extract(str(archive), "outer.zip", str(dest), Budget())
    assert _files(dest) == {"causal_mask.py", "inner/attention.py", "inner/deeper.zip"}


# ====================================================================== layouts

def test_canvas_files_are_grouped_per_student_with_the_canvas_id(tmp_path):
    for name in ("lovelaceada_101_9001_hand_computation.py", "lovelaceada_101_9002_attention.ipynb",
                 "hoppergrace_LATE_102_9003_work.zip", "turingalan_103_9004_hand_computation-1.py", "readme.txt"):
        (tmp_path / name).write_bytes(b"x")
    assert detect(tmp_path) is Layout.CANVAS
    found = read_class(tmp_path, "self_attention")
    by_name = {s.name: s for s in found.students}
    assert set(by_name) == {"lovelaceada_101", "hoppergrace_102", "turingalan_103"}
    assert by_name["lovelaceada_101"].uploads == (("hand_computation.py", "lovelaceada_101_9001_hand_computation.py"),
                                                  ("attention.ipynb", "lovelaceada_101_9002_attention.ipynb"))
    assert by_name["hoppergrace_102"].lms_id == "102" and by_name["turingalan_103"].uploads[0] == \
        ("hand_computation.py", "turingalan_103_9004_hand_computation-1.py")     # Canvas's renaming undone
    assert found.strays == ("readme.txt",)


def test_moodle_folders_give_the_name_and_participant_number_not_the_folder_name(tmp_path):
    for name in ("Ada Lovelace_5001_assignsubmission_file_", "Grace Hopper_5002_assignsubmission_file_",
                 "Grace Hopper_5002_assignsubmission_onlinetext_"):
        (tmp_path / name).mkdir()
    assert detect(tmp_path) is Layout.MOODLE
    found = read_class(tmp_path, "self_attention")
    assert [(s.name, s.lms_id, s.folder.name) for s in found.students] == [
        ("Ada Lovelace_5001", "5001", "Ada Lovelace_5001_assignsubmission_file_"),
        ("Grace Hopper_5002", "5002", "Grace Hopper_5002_assignsubmission_file_")]
    assert found.strays == ()
    assert found.set_aside == (("Grace Hopper_5002_assignsubmission_onlinetext_",
                                "participant 5002's onlinetext submission, beside the files graded as theirs; "
                                "not graded"),)


def test_moodles_flat_download_is_grouped_per_student(tmp_path):
    for name in ("Ada Lovelace_5001_assignsubmission_file_attention.py",
                 "Ada Lovelace_5001_assignsubmission_file_Hand Computation.ipynb",
                 "Grace Hopper_5002_assignsubmission_file_hw.zip"):
        (tmp_path / name).write_bytes(b"x")
    found = read_class(tmp_path, "self_attention")
    assert found.layout is Layout.MOODLE
    assert [(s.name, s.uploads) for s in found.students] == [
        ("Ada Lovelace_5001", (("Hand Computation.ipynb", "Ada Lovelace_5001_assignsubmission_file_Hand Computation.ipynb"),
                               ("attention.py", "Ada Lovelace_5001_assignsubmission_file_attention.py"))),
        ("Grace Hopper_5002", (("hw.zip", "Grace Hopper_5002_assignsubmission_file_hw.zip"),))]


def test_plain_student_folders_stay_folders(tmp_path):
    (tmp_path / "ada").mkdir()
    (tmp_path / "bo_12_x").mkdir()
    assert detect(tmp_path) is Layout.FOLDERS
    assert [s.name for s in read_class(tmp_path, "self_attention").students] == ["ada", "bo_12_x"]


# ====================================================================== graded classes

@pytest.fixture(scope="module")
def folders_run(course_at, tmp_path_factory):
    root = tmp_path_factory.mktemp("lms")
    course = course_at(small_course(root))
    cls = root / "class"
    _zip(cls / "zipper" / "submission.zip", {"hw1/Hand-Computation.py": RIGHT, "hw1/notes.txt": b"hi"})
    _tar(cls / "tarball" / "work.tar.gz", {"hand_computation.py": RIGHT})
    _zip(cls / "bomber" / "bomb.zip", {"hand_computation.py": RIGHT, "pad.py": bytes(20 * 2**20)})
    (cls / "wordy").mkdir()
    (cls / "wordy" / "answers.docx").write_bytes(b"PK not really")
    (cls / "twice").mkdir()
    (cls / "twice" / "hand_computation (1).py").write_bytes(WRONG)
    (cls / "twice" / "Hand-Computation-v2.py").write_bytes(RIGHT)
    (cls / "nothing").mkdir()
    out = root / "out"
    before = _staging_folders()
    results = {r.student: r for r in grade_class(cls, out, course, jobs=1)}
    assert _staging_folders() == before          # every private unpacking folder is removed
    return results, out, course


def _staging_folders() -> set[str]:
    return {p.name for p in Path(tempfile.gettempdir()).glob("attnkit-upload-*")}


def test_a_zip_or_tar_in_a_students_folder_is_graded_with_a_note(folders_run):
    results, out, _ = folders_run
    for student, upload in (("zipper", "submission.zip"), ("tarball", "work.tar.gz")):
        hc = results[student].exercise("hand_computation")
        assert hc.score == hc.max_score == 7, (student, hc.note)
        assert f"your upload {upload} was unpacked" in hc.note and "archive" in hc.flags
        assert f"{upload} was unpacked" in (out / "feedback" / f"{student}.md").read_text(encoding="utf-8")


def test_nothing_is_ever_unpacked_into_the_class_folder(folders_run):
    _, out, _ = folders_run
    cls = out.parent / "class"
    assert _files(cls / "zipper") == {"submission.zip"} and _files(cls / "bomber") == {"bomb.zip"}


def test_files_but_nothing_gradable_is_trouble_in_the_report_and_the_terminal(folders_run):
    results, out, course = folders_run
    summary = json.loads((out / "summary.json").read_text(encoding="utf-8"))
    rows = {t["student"]: t for t in summary["trouble"]}
    assert rows["wordy"]["kind"] == "nothing gradable" and "answers.docx" in rows["wordy"]["message"]
    assert rows["wordy"]["exercise"] == "(all)"
    assert rows["bomber"]["kind"] == "nothing gradable" and "bomb.zip" in rows["bomber"]["message"]
    assert "nothing" not in rows                     # an empty folder is simply not submitted
    assert "answers.docx" in (out / "report.html").read_text(encoding="utf-8")
    grades = {r["student"]: r for r in csv.DictReader(io.StringIO((out / "grades.csv").read_text()))}
    assert grades["wordy"]["total"] == ""            # not handed in, not a 0 earned
    console = Console(record=True, width=200)
    print_summary(list(results.values()), course, console, out)
    text = console.export_text()
    assert "wordy / (all): nothing gradable: the submission holds answers.docx" in text
    assert "bomber / (all): nothing gradable" in text


def test_two_candidates_for_one_exercise_are_both_graded_and_the_better_kept(folders_run):
    results, _, _ = folders_run
    hc = results["twice"].exercise("hand_computation")
    assert hc.score == 7 and hc.graded_file == "Hand-Computation-v2.py"
    assert "hand_computation (1).py" in hc.note and "Hand-Computation-v2.py 7/7" in hc.note
    assert "candidates" in hc.flags


def test_a_canvas_download_is_graded_per_student(course_at, tmp_path):
    course = course_at(small_course(tmp_path))
    cls = tmp_path / "canvas"
    cls.mkdir()
    (cls / "lovelaceada_101_9001_hand_computation.py").write_bytes(RIGHT)
    _zip(cls / "hoppergrace_LATE_102_9003_hw.zip", {"hand_computation.py": RIGHT})
    (cls / "turingalan_103_9004_hand_computation-1.py").write_bytes(WRONG)
    (cls / "babbagecharles_104_9005_notes.pdf").write_bytes(b"%PDF")
    (cls / "lovelaceada_101_9009_evil.py").symlink_to(cls / "turingalan_103_9004_hand_computation-1.py")
    out = tmp_path / "out"
    results = {r.student: r for r in grade_class(cls, out, course, jobs=1)}
    assert set(results) == {"lovelaceada_101", "hoppergrace_102", "turingalan_103", "babbagecharles_104"}
    assert results["lovelaceada_101"].score == 7 and results["hoppergrace_102"].score == 7
    assert 0 < results["turingalan_103"].score < 7
    # a link in the class folder could lead to anyone's file: never one of the student's uploads
    assert read_class(cls, course.assignment, exclude=(out,)).strays == ("lovelaceada_101_9009_evil.py",)
    summary = json.loads((out / "summary.json").read_text(encoding="utf-8"))
    assert {t["student"]: t["kind"] for t in summary["trouble"]} == {"babbagecharles_104": "nothing gradable"}


def test_the_gradescope_runner_grades_a_zip_inside_the_upload(tmp_path):
    """An upload holding a .zip is unpacked and graded, never told "no exercise files were found"."""
    from autograder.gradescope.run import run

    (tmp_path / "source").mkdir()
    small_course(tmp_path / "source")
    _zip(tmp_path / "submission" / "homework.zip", {"self_attention/hand_computation.py": RIGHT})
    (tmp_path / "results").mkdir()
    data = run(tmp_path)
    assert data["score"] == 7
    assert "no exercise files were found" not in data["output"]
    assert any("homework.zip was unpacked" in t.get("output", "") for t in data["tests"]) or \
        "homework.zip was unpacked" in data["output"]
