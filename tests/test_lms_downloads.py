"""`attnkit grade` on each LMS's download as the platform writes it today (tests/lms_downloads.py
says which version each stands for and where its format was read), end to end: who each
submission is, the grades, the exports and what the terminal says before grading. A student
who names themselves after another never takes their grade; Canvas's Test Student never stops a
run nor counts; two submissions of one student are both graded and put before the instructor; a
folder that does not read as a download, a roster that cannot name it, and a name that matches
two roster rows stop the run with one message, before anything is written.
"""

from __future__ import annotations

import contextlib
import csv
import io
import json
import zipfile
from pathlib import Path

import pytest

from autograder.cli import main
from tests.lms_downloads import (HAND, ONLINE_TEXT, RIGHT, Enrolled, canvas_file, canvas_gradebook, canvas_text_entry,
                                 moodle_flat, moodle_folder, moodle_worksheet, own_answers)
from tests.test_lms_roundtrip import WRONG, _course, _grades

ADA = Enrolled("Ada", "Lovelace", "106221", "S106221", "alovelace")
GRACE = Enrolled("Grace", "Hopper", "106222", "S106222", "ghopper")
ALAN = Enrolled("Alan", "Turing", "106223", "S106223", "aturing")
TEST_STUDENT = Enrolled("Test", "Student", "999001", "", "")


def _run(course: Path, cls: Path, out: Path, *more: str) -> tuple[int, str, str]:
    said, err = io.StringIO(), io.StringIO()
    with contextlib.redirect_stdout(said), contextlib.redirect_stderr(err):
        code = main(["--course", str(course), "grade", str(cls), "--out", str(out), "--jobs", "1", *more])
    return code, said.getvalue(), err.getvalue()


def _worksheet(out: Path) -> dict[str, dict]:
    rows = csv.DictReader(io.StringIO((out / "export-moodle.csv").read_text(encoding="utf-8-sig")))
    return {r["Identifier"]: r for r in rows}


# ---------------------------------------------------------------- each download as the platform writes it

def _moodle_class(cls: Path, version: str) -> None:
    """Ada right, Grace wrong, Alan only an online text; as Moodle `version` downloads them."""
    if version == "flat":
        moodle_flat(cls, ADA, {f"{HAND}.py": RIGHT})
        moodle_flat(cls, GRACE, {f"{HAND}.py": WRONG})
        moodle_flat(cls, ALAN, {ONLINE_TEXT: b"<p>I pasted it here</p>"}, plugin="onlinetext")
        return
    moodle_folder(cls, ADA, {f"{HAND}.py": RIGHT}, version=version)
    moodle_folder(cls, GRACE, {f"{HAND}.py": WRONG}, version=version)
    moodle_folder(cls, ALAN, {ONLINE_TEXT: b"<p>I pasted it here</p>"}, version=version, plugin="onlinetext")


@pytest.mark.parametrize("version, naming", [
    ("3.x", "folders as Moodle 3.x names them (a trailing _)"),
    ("4.1+", "folders as Moodle 4.1 and later name them"),
    ("flat", "flat files (Moodle's download without folders)")])
def test_moodles_download_as_each_version_writes_it(tmp_path, version, naming):
    course = _course(tmp_path)
    roster = tmp_path / "worksheet.csv"
    roster.write_text(moodle_worksheet([ADA, GRACE, ALAN]), encoding="utf-8")
    cls = tmp_path / "download"
    _moodle_class(cls, version)
    out = tmp_path / "out"
    code, said, err = _run(course, cls, out, "--roster", str(roster), "--export", "moodle", "--export",
                           "moodle-feedback")
    assert (code, err) == (0, "")
    assert f"moodle's download, 3 students; {naming}" in said
    grades = _grades(out)
    assert grades[ADA.email]["total"] == "7" and 0 < float(grades[GRACE.email]["total"]) < 7
    assert grades[ALAN.email]["status"] == "nothing gradable"          # said, not absent: their online text
    assert ONLINE_TEXT in json.dumps(json.loads((out / "summary.json").read_text(encoding="utf-8"))["trouble"])
    sheet = _worksheet(out)
    assert sheet[f"Participant {ADA.canvas_id}"]["Grade"] == "100"
    with zipfile.ZipFile(out / "export-moodle-feedback.zip") as zf:
        assert sorted(zf.namelist()) == [f"{p.full}_{p.canvas_id}_assignsubmission_file_feedback.html"
                                         for p in (ADA, ALAN, GRACE)]


def test_canvas_download_as_canvas_writes_it(tmp_path):
    """Current Canvas: a late re-submission renamed `-1`, a text entry, the Test Student."""
    course = _course(tmp_path)
    roster = tmp_path / "gradebook.csv"
    roster.write_text(canvas_gradebook([ADA, GRACE, ALAN]), encoding="utf-8")
    cls = tmp_path / "download"
    canvas_file(cls, ADA, 5550001, f"{HAND}.py", RIGHT)
    canvas_file(cls, GRACE, 5550002, f"{HAND}-1.py", WRONG, late=True)
    canvas_text_entry(cls, ALAN, "<p>see my notebook</p>")
    canvas_file(cls, TEST_STUDENT, 5550003, f"{HAND}.py", RIGHT)
    out = tmp_path / "out"
    code, said, err = _run(course, cls, out, "--roster", str(roster), "--export", "canvas")
    assert (code, err) == (0, "")
    assert "set aside 1 non-student" in said and "Canvas's Test Student (Student View)" in said
    grades = _grades(out)
    assert set(grades) == {ADA.login, GRACE.login, ALAN.login}
    assert grades[ADA.login]["total"] == "7" and grades[ALAN.login]["status"] == "nothing gradable"
    export = (out / "export-canvas.csv").read_text(encoding="utf-8-sig")
    assert TEST_STUDENT.canvas_id not in export and "Student, Test" not in export
    assert not (out / "feedback" / "studenttest_999001.html").exists()
    assert json.loads((out / "summary.json").read_text(encoding="utf-8"))["students"] == 3


# ---------------------------------------------------------------- the issue: a student takes another's grade

VICTIM = Enrolled("Victim", "Name", "100001", "S100001", "vname")
MALLORY = Enrolled("Mallory", "Evans", "100002", "S100002", "mevans")


@pytest.fixture(scope="module")
def variants_class(tmp_path_factory):
    """Variants on; handouts made from Moodle's worksheet (named by email)."""
    root = tmp_path_factory.mktemp("spoof")
    course = _course(root, variants={"enabled": True})
    roster = root / "worksheet.csv"
    roster.write_text(moodle_worksheet([VICTIM, MALLORY, ADA]), encoding="utf-8")
    own = own_answers(course, roster, root / "handouts", [p.email for p in (VICTIM, MALLORY, ADA)])
    return root, course, roster, own


@pytest.mark.parametrize("full_name", ["Victim Name_100001_assignsubmission_file",
                                       "Anyone_100001_assignsubmission_file"], ids=["victims-name", "other-name"])
@pytest.mark.parametrize("trailing", ["_", ""], ids=["3.x", "4.1+"])
def test_a_full_name_ending_in_anothers_participant_number_takes_nothing(variants_class, tmp_path, full_name,
                                                                          trailing):
    """Mallory (participant 100002) sets her full name to end in the victim's number; her folder
    is named as a writer keeping that `_` would name it. Each is graded as themselves."""
    root, course, roster, own = variants_class
    cls = tmp_path / "download"
    moodle_folder(cls, VICTIM, {f"{HAND}.py": own[VICTIM.email]}, version="3.x" if trailing else "4.1+")
    mallory = cls / f"{full_name}_{MALLORY.canvas_id}_assignsubmission_file{trailing}"
    mallory.mkdir()
    (mallory / f"{HAND}.py").write_bytes(own[MALLORY.email].replace(b"SCORES = [", b"SCORES = [[0.0], "))
    out = tmp_path / "out"
    code, said, err = _run(course, cls, out, "--roster", str(roster), "--export", "moodle")
    assert (code, err) == (0, ""), err
    grades = _grades(out)
    assert grades[VICTIM.email]["total"] == "7"
    assert float(grades[MALLORY.email]["total"]) < 7          # her own work, on her own numbers
    sheet = _worksheet(out)
    assert sheet["Participant 100001"]["Grade"] == "100" and sheet["Participant 100002"]["Grade"] != "100"
    assert "Victim Name" in (out / "feedback" / f"{VICTIM.email}.html").read_text(encoding="utf-8")
    summary = json.loads((out / "summary.json").read_text(encoding="utf-8"))
    assert summary["integrity"] == [] and "claimed" not in said


def test_a_flat_file_named_for_two_participants_is_set_aside_before_grading(variants_class, tmp_path):
    root, course, roster, own = variants_class
    cls = tmp_path / "download"
    moodle_flat(cls, VICTIM, {f"{HAND}.py": own[VICTIM.email]})
    spoof = cls / f"Victim Name_100001_assignsubmission_file_100002_assignsubmission_file_{HAND}.py"
    spoof.write_bytes(RIGHT)
    out = tmp_path / "out"
    code, said, err = _run(course, cls, out, "--roster", str(roster))
    assert (code, err) == (0, "")
    assert "1 set aside, not graded:" in said and spoof.name in said
    assert said.index(spoof.name) < said.index("graded 1 of 1 submission")     # said before grading
    assert _grades(out)[VICTIM.email]["total"] == "7"
    report = (out / "report.html").read_text(encoding="utf-8")
    assert 'id="identity"' in report and spoof.name in report


# ---------------------------------------------------------------- Canvas's Test Student, variants on

def test_canvas_test_student_never_stops_a_run_with_variants_on(tmp_path):
    course = _course(tmp_path, variants={"enabled": True})
    roster = tmp_path / "gradebook.csv"
    roster.write_text(canvas_gradebook([ADA, GRACE]), encoding="utf-8")
    own = own_answers(course, roster, tmp_path / "handouts", [ADA.login])
    assert sorted(p.stem for p in (tmp_path / "handouts").glob("*.zip")) == [ADA.login, GRACE.login]
    cls = tmp_path / "download"
    canvas_file(cls, ADA, 5550001, f"{HAND}.py", own[ADA.login])
    canvas_file(cls, TEST_STUDENT, 5550002, f"{HAND}.py", RIGHT)         # the instructor tried Student View
    out = tmp_path / "out"
    code, said, err = _run(course, cls, out, "--roster", str(roster), "--export", "canvas")
    assert (code, err) == (0, "")
    assert "set aside 1 non-student (not graded, counted, exported or given feedback):" in said
    assert "Student, Test (studenttest_999001_5550002_hand_computation.py)" in said
    grades = _grades(out)
    assert set(grades) == {ADA.login, GRACE.login} and grades[ADA.login]["total"] == "7"
    assert "999001" not in (out / "export-canvas.csv").read_text(encoding="utf-8-sig")


def test_without_a_roster_canvas_test_student_is_known_by_canvas_own_name(tmp_path):
    course = _course(tmp_path)
    cls = tmp_path / "download"
    canvas_file(cls, ADA, 5550001, f"{HAND}.py", RIGHT)
    canvas_file(cls, TEST_STUDENT, 5550002, f"{HAND}.py", RIGHT)
    out = tmp_path / "out"
    code, said, _ = _run(course, cls, out)
    assert code == 0 and "set aside 1 non-student" in said
    assert set(_grades(out)) == {"lovelaceada_106221"}
    assert "self_attention: 1 student, 1 graded" in said


# ---------------------------------------------------------------- two submissions of one student

def test_two_submissions_of_one_student_are_both_graded_and_put_before_the_instructor(tmp_path):
    course = _course(tmp_path)
    roster = tmp_path / "worksheet.csv"
    roster.write_text(moodle_worksheet([ADA, GRACE]), encoding="utf-8")
    cls = tmp_path / "download"
    moodle_folder(cls, ADA, {f"{HAND}.py": WRONG}, version="3.x")       # two downloads unzipped into one folder
    moodle_folder(cls, ADA, {f"{HAND}.py": RIGHT}, version="4.1+")
    moodle_folder(cls, GRACE, {f"{HAND}.py": RIGHT}, version="4.1+")
    (cls / "readme.txt").write_text("downloaded twice")
    out = tmp_path / "out"
    code, said, err = _run(course, cls, out, "--roster", str(roster), "--export", "moodle")
    assert (code, err) == (0, "")
    assert "1 student is claimed by several submissions" in said
    assert (f"Ada Lovelace ({ADA.email}): Ada Lovelace_106221 from Ada Lovelace_106221_assignsubmission_file; "
            "Ada Lovelace_106221 (2) from Ada Lovelace_106221_assignsubmission_file_") in said.replace("\n", " ")
    grades = _grades(out)
    assert grades["Ada Lovelace_106221"]["total"] == "7" and float(grades["Ada Lovelace_106221 (2)"]["total"]) < 7
    assert ADA.email not in grades and grades[GRACE.email]["total"] == "7"
    assert f"Participant {ADA.canvas_id}" not in _worksheet(out)        # neither written into her cell
    assert "1 on the roster with no submission" not in said
    summary = json.loads((out / "summary.json").read_text(encoding="utf-8"))
    assert summary["identity"]["claims"] == [{"student": ADA.email, "name": "Ada Lovelace", "submissions": [
        {"key": "Ada Lovelace_106221", "from": "Ada Lovelace_106221_assignsubmission_file"},
        {"key": "Ada Lovelace_106221 (2)", "from": "Ada Lovelace_106221_assignsubmission_file_"}]}]
    assert summary["identity"]["not_read"] == [{"name": "readme.txt", "why": "named like no moodle submission"}]
    report = (out / "report.html").read_text(encoding="utf-8")
    part = report[report.index('id="identity"'):]
    assert "Ada Lovelace_106221 (2)" in part and "readme.txt" in part


# ---------------------------------------------------------------- said once, before anything is written

def test_a_folder_that_looks_like_a_download_but_does_not_read_as_one_stops(tmp_path):
    course = _course(tmp_path)
    cls = tmp_path / "download"
    moodle_folder(cls, ADA, {f"{HAND}.py": RIGHT}, version="4.1+")
    for name in ("Grace Hopper_106222_assignsubmission", "Alan Turing 106223"):
        (cls / name).mkdir()
        (cls / name / f"{HAND}.py").write_bytes(RIGHT)
    out = tmp_path / "out"
    code, said, err = _run(course, cls, out)
    assert code == 2 and not out.exists()
    assert err.count("looks like Moodle's download") == 1
    assert "Alan Turing 106223, Grace Hopper_106222_assignsubmission" in err and "Nothing was graded" in err
    code, said, err = _run(course, cls, out, "--layout", "moodle")
    assert code == 0 and "not graded, named like no moodle submission: Alan Turing 106223, Grace" in said


@pytest.mark.parametrize("roster_text, said", [
    ("id,first_name,last_name,email\nada,Ada,Lovelace,ada@uni.edu\n",
     "roster.csv line 1: no column holds Moodle's participant number"),
    ("Identifier,Full name,Email address,Status,Grade\nParticipant 106221,Ada Lovelace,a@x,,\n"
     "Participant 106221,Ada Twice,b@x,,\n", "roster.csv line 3: lms_id 106221 is also on line 2"),
])
def test_a_roster_that_cannot_name_the_download_is_said_with_its_line(tmp_path, roster_text, said):
    course = _course(tmp_path)
    cls = tmp_path / "download"
    moodle_folder(cls, ADA, {f"{HAND}.py": RIGHT}, version="4.1+")
    roster = tmp_path / "roster.csv"
    roster.write_text(roster_text, encoding="utf-8")
    out = tmp_path / "out"
    code, _, err = _run(course, cls, out, "--roster", str(roster))
    assert code == 2 and not out.exists()
    assert err.count(said) == 1 and len(err.strip().splitlines()) == 1


def test_a_folder_name_matching_two_roster_rows_is_said_with_both_lines(tmp_path):
    course = _course(tmp_path)
    cls = tmp_path / "class"
    (cls / "106221").mkdir(parents=True)
    (cls / "106221" / f"{HAND}.py").write_bytes(RIGHT)
    roster = tmp_path / "roster.csv"
    roster.write_text("Student,ID,SIS User ID,SIS Login ID,Section\n"
                      '"Lovelace, Ada",106221,S1,alovelace,A\n"Hopper, Grace",777,106221,ghopper,A\n', encoding="utf-8")
    out = tmp_path / "out"
    code, _, err = _run(course, cls, out, "--roster", str(roster))
    assert code == 2 and not out.exists()
    assert err.count(f"{roster}: line 3 (SIS id) and line 2 (LMS id) both match the submission 106221") == 1
