"""`attnkit grade --roster ROSTER.csv`: the rosters nbgrader, Canvas, Moodle and
Gradescope export, read by their header names; each submission matched to a student; the
exports filled from the roster; roster students with no submission a 0, "not submitted";
submissions matching no row listed, never dropped; bad rows named by line."""

from __future__ import annotations

import csv
import io

import pytest

from autograder.intake.roster import Person, RosterError, enrol, parse_roster, read_roster
from autograder.cli import main
from autograder.config import KIT_ROOT
from autograder.reports.exports import ExportFormat, export
from autograder.reports.grades_csv import grades_csv
from autograder.intake.students import Student
from tests.test_classroom import small_course
from tests.test_report import COURSE, STEMS, small_class

NBGRADER = "id,first_name,last_name,email\nada,Ada,Lovelace,ada@uni.edu\nbo,Bo,Diddley,bo@uni.edu\n" \
           "cy,Cy,Young,cy@uni.edu\n"
CANVAS = ("Student,ID,SIS User ID,SIS Login ID,Section,Homework 1 (123)\n"
          "    Points Possible,,,,,53\n"
          '"Lovelace, Ada",101,S-1,alovelace,Sec 1,\n'
          '"Hopper, Grace",102,S-2,ghopper,Sec 1,\n')
MOODLE = ("Identifier,Full name,Email address,Status,Grade\n"
          "Participant 5001,Ada Lovelace,ada@uni.edu,Submitted,\n"
          "Participant 5002,Grace Hopper,grace@uni.edu,No submission,\n")
GRADESCOPE = "First Name,Last Name,SID,Email,Role,Sections\nAda,Lovelace,900001,ada@uni.edu,Student,\n"


def test_each_platforms_roster_is_read_by_its_header_names():
    assert parse_roster(NBGRADER)[0] == Person("Ada Lovelace", "ada", "", "", "ada@uni.edu", 2)
    canvas = parse_roster(CANVAS)
    assert [(p.name, p.lms_id, p.sis_id, p.login, p.line) for p in canvas] == [
        ("Lovelace, Ada", "101", "S-1", "alovelace", 3), ("Hopper, Grace", "102", "S-2", "ghopper", 4)]
    moodle = parse_roster(MOODLE)
    assert [(p.name, p.lms_id, p.email) for p in moodle] == [("Ada Lovelace", "5001", "ada@uni.edu"),
                                                             ("Grace Hopper", "5002", "grace@uni.edu")]
    assert parse_roster(GRADESCOPE)[0] == Person("Ada Lovelace", "", "900001", "", "ada@uni.edu", 2)


def test_a_bom_and_excels_encoding_are_handled(tmp_path):
    path = tmp_path / "roster.csv"
    path.write_bytes("\ufeffid,first_name,last_name,email\njosé,José,Ñúñez,j@uni.edu\n".encode("utf-8"))
    assert read_roster(path)[0].login == "josé"
    path.write_bytes("id,first_name\njos\xe9,Jos\xe9\n".encode("latin-1"))
    with pytest.raises(RosterError, match="not UTF-8"):
        read_roster(path)


@pytest.mark.parametrize("text, message", [
    ("id,first_name,last_name,email\nada,Ada\n", "line 2: 2 fields, the header has 4"),
    ("id,first_name,last_name,email\nada,Ada,L,a@x\n,Bo,D,\n", "line 3: no login, SIS id, LMS id or email for Bo D"),
    ("id,first_name,last_name,email\nada,Ada,L,a@x\nADA,Ada,L,b@x\n", "line 3: login ADA is also on line 2"),
    ("first_name,last_name\nAda,L\n", "line 1: no column names a student"),
    ("", "empty"),
])
def test_bad_rows_are_named_by_their_line(text, message):
    with pytest.raises(RosterError, match=message):
        parse_roster(text, "roster.csv")


def test_submissions_are_matched_by_lms_id_login_sis_id_or_email():
    roster = parse_roster(CANVAS) + [Person("Cy Young", "cy", "S-3", "", "cy@uni.edu", 9),
                                     Person("Di Ng", "", "", "", "di@uni.edu", 10)]
    students = [Student("lovelaceada_101", KIT_ROOT, lms_id="101"),      # Canvas's file names
                Student("S-3", KIT_ROOT), Student("DI@uni.edu", KIT_ROOT), Student("stranger", KIT_ROOT)]
    found = enrol(students, roster)
    assert found.people["lovelaceada_101"].login == "alovelace"
    assert found.people["S-3"].login == "cy" and found.people["DI@uni.edu"].name == "Di Ng"
    assert found.unmatched == ("stranger",)
    assert [p.login for p in found.absent] == ["ghopper"]


def test_exports_are_filled_from_the_roster():
    results = small_class()          # ada, bo, nobody (handed in nothing), and a formula-named folder
    roster = [Person("Lovelace, Ada", "ada", "S-1", "101", "ada@uni.edu", 2),
              Person("=cmd|' /C calc'!A0", "mallory", "S-9", "109", "m@uni.edu", 3)]
    found = enrol([Student(r.student, KIT_ROOT) for r in results], roster)
    canvas_text = export(ExportFormat.CANVAS, results, COURSE, found)
    assert canvas_text.startswith("\ufeff")
    canvas = {row[3]: row for row in csv.reader(io.StringIO(canvas_text[1:]))}
    assert canvas["ada"][:4] == ["Lovelace, Ada", "101", "S-1", "ada"]
    assert canvas["mallory"][0] == "'=cmd|' /C calc'!A0" and canvas["mallory"][-1] == ""
    assert "bo" in canvas                          # matching no row: kept, not dropped
    gradescope = {r["Email"]: r for r in csv.DictReader(io.StringIO(export(ExportFormat.GRADESCOPE_CSV, results,
                                                                             COURSE, found)))}
    assert gradescope["ada@uni.edu"]["SID"] == "S-1" and gradescope["m@uni.edu"]["Total Score"] == ""
    moodle = list(csv.DictReader(io.StringIO(export(ExportFormat.MOODLE, results, COURSE, found)[1:])))
    assert {r["username"]: r["email"] for r in moodle}["ada"] == "ada@uni.edu"
    grades = {r["student"]: r for r in csv.DictReader(io.StringIO(grades_csv(results, STEMS, found, 53)))}
    assert grades["mallory"]["total"] == "" and grades["mallory"]["status"] == "not submitted"
    assert grades["bo"]["on_roster"] == "no" and grades["ada"]["status"] == "graded"
    assert grades["ada"]["name"] == "Lovelace, Ada" and grades["mallory"]["name"].startswith("'=")


def test_without_a_roster_the_exports_and_grades_csv_are_as_before():
    results = small_class()
    found = enrol([Student(r.student, KIT_ROOT) for r in results], None)
    for fmt in ExportFormat:
        assert export(fmt, results, COURSE, found) == export(fmt, results, COURSE)
    assert grades_csv(results, STEMS, found, 53) == grades_csv(results, STEMS)
    assert grades_csv(results, STEMS).splitlines()[0].endswith(",total,max_total,status")   # no roster columns


def test_grade_with_a_roster_on_a_canvas_download(tmp_path, capsys):
    course = small_course(tmp_path)
    cls = tmp_path / "canvas"
    cls.mkdir()
    (cls / "lovelaceada_101_9001_hand_computation.py").write_bytes((KIT_ROOT / "solutions" / "hand_computation.py")
                                                                    .read_bytes())
    (cls / "strangerx_777_9002_hand_computation.py").write_text("x = 1\n")
    (tmp_path / "roster.csv").write_text(CANVAS, encoding="utf-8")
    out = tmp_path / "out"
    code = main(["--course", str(course), "grade", str(cls), "--out", str(out), "--roster", str(tmp_path / "roster.csv"),
                 "--export", "canvas", "--jobs", "1"])
    printed = capsys.readouterr().out
    assert code == 0
    assert "canvas's download, 2 students" in printed
    assert "1 on the roster with no submission" in printed and "Hopper, Grace" in printed
    assert "1 submissions matching no roster row" in printed and "strangerx_777" in printed
    rows = {r[3]: r for r in csv.reader(io.StringIO((out / "export-canvas.csv").read_text(encoding="utf-8-sig")))}
    assert rows["alovelace"][:4] == ["Lovelace, Ada", "101", "S-1", "alovelace"] and rows["alovelace"][-1] == "7"
    assert rows["ghopper"][-1] == ""                          # missing, not a 0 (--missing-as-zero)
    assert any(r[1] == "777" for r in rows.values())          # not on the roster: kept, with its Canvas id
    bad = tmp_path / "bad.csv"
    bad.write_text("id,first_name,last_name,email\nada,Ada\n", encoding="utf-8")
    assert main(["--course", str(course), "grade", str(cls), "--out", str(out), "--roster", str(bad)]) == 2
    assert "bad.csv line 2: 2 fields" in capsys.readouterr().err


def test_rows_without_a_student_role_are_kept_and_marked():
    """Gradescope's Role, Moodle's Roles: a row whose role names no student is no student."""
    people = parse_roster("First Name,Last Name,SID,Email,Role,Sections\nAda,Lovelace,1,ada@uni.edu,Student,\n"
                          "Tim,Kay,2,tim@uni.edu,Instructor,\nRo,Ng,3,ro@uni.edu,,\n")
    assert [(p.email, p.not_a_student) for p in people] == [("ada@uni.edu", ""), ("tim@uni.edu", "role Instructor"),
                                                           ("ro@uni.edu", "")]       # no role said: a student
    moodle = parse_roster("First name,Last name,Email address,Roles\nAda,L,a@x,\"Student, Teacher\"\nB,C,b@x,No roles\n")
    assert [p.not_a_student for p in moodle] == ["", "role No roles"]
    found = enrol([Student("tim@uni.edu", KIT_ROOT)], people)
    assert [p.email for p in found.absent] == ["ada@uni.edu", "ro@uni.edu"]      # a non-student is never absent


def test_canvas_rows_that_name_nobody_are_skipped():
    """Canvas writes a row of posting policies under its header when an assignment is hidden,
    and puts Points Possible in the first column whatever the header calls it."""
    text = ("LastName,FirstName,ID,SIS User ID,SIS Login ID,Section,Lab (1)\n"
            ",,,,,,Manual Posting\n    Points Possible,,,,,,10.00\nLovelace,Ada,101,S1,alovelace,A,\n"
            "Student,Test,999,,,A,\n")
    people = parse_roster(text)
    assert [(p.listed, p.lms_id, p.not_a_student) for p in people] == [
        ("Lovelace, Ada", "101", ""), ("Student, Test", "999", "Canvas's Test Student (Student View)")]
