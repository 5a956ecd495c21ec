"""Whose work a submission is comes from the fields the LMS writes, never from text a student
chose: Moodle's folder and flat names, Canvas's file names, read from their fixed fields; a
student who names themselves after another (the attack of a Moodle full name that ends in the
victim's `_<participant>_assignsubmission_file`, a Canvas name or file name holding the victim's
user id, look-alike digits) never takes the other's place. Two submissions of one student are
both kept and said; Canvas's Test Student and other non-students are set aside; a download that
does not read as one is said, with the names, before anyone is graded.

The reading is tested here on names alone; tests/test_lms_downloads.py grades each platform's
download end to end.
"""

from __future__ import annotations

import pytest

from autograder.intake.identify import AmbiguousIdentity, identify
from autograder.intake.lms import Layout, LayoutUnclear, canvas_readings, detect, read_class
from autograder.intake.roster import parse_roster
from tests.lms_downloads import (ONLINE_TEXT, Enrolled, canvas_file, canvas_gradebook, canvas_text_entry,
                                 moodle_flat, moodle_folder, moodle_worksheet)

pytestmark = pytest.mark.quick

VICTIM = Enrolled("Victim", "Name", "100001", "S100001", "vname")
# The attacker's Moodle full name is the victim's, then the victim's participant number and plugin.
MIMIC = Enrolled("Victim", "Name_100001_assignsubmission_file", "100002", "S100002", "mallory")
# Any other name followed by the victim's number.
OTHER = Enrolled("Some", "Body_100001_assignsubmission_file", "100002", "S100002", "mallory")
ADA = Enrolled("Ada", "Lovelace", "106221", "S106221", "alovelace")
GRACE = Enrolled("Grace", "Hopper", "106222", "S106222", "ghopper")


def _by_id(found) -> dict[str, list]:
    out: dict[str, list] = {}
    for s in found.students:
        out.setdefault(s.lms_id, []).append(s)
    return out


def _files(student) -> set[str]:
    return {real for _, real in student.uploads} if student.uploads else {student.folder.name}


# ---------------------------------------------------------------- Moodle: the name spoof of the issue

@pytest.mark.parametrize("version", ["3.x", "4.1+"])
@pytest.mark.parametrize("attacker", [MIMIC, OTHER], ids=["victims-name", "other-name"])
def test_a_moodle_folder_is_its_participants_however_the_name_ends(tmp_path, version, attacker):
    """The folder names as a writer that kept the `_` of a full name would write them (Moodle
    turns them into spaces): the participant is the last `_<number>_assignsubmission_file`."""
    trailing = "_" if version == "3.x" else ""
    moodle_folder(tmp_path, VICTIM, {"hand_computation.py": b"victim"}, version=version)
    (tmp_path / f"{attacker.full}_{attacker.canvas_id}_assignsubmission_file{trailing}").mkdir()
    found = read_class(tmp_path, "self_attention")
    assert found.layout is Layout.MOODLE and found.strays == () and found.set_aside == ()
    by_id = _by_id(found)
    assert [s.folder.name for s in by_id[VICTIM.canvas_id]] == [f"Victim Name_100001_assignsubmission_file{trailing}"]
    assert [s.name for s in by_id[attacker.canvas_id]] == [f"{attacker.full}_100002"]


def test_moodle_turns_the_underscores_of_a_full_name_into_spaces(tmp_path):
    """As Moodle itself writes the attacker's folder and flat files."""
    moodle_folder(tmp_path / "folders", MIMIC, {"hand_computation.py": b"x"}, version="4.1+")
    moodle_flat(tmp_path / "flat", MIMIC, {"hand_computation.py": b"x"})
    for cls in (tmp_path / "folders", tmp_path / "flat"):
        (student,) = read_class(cls, "self_attention").students
        assert (student.lms_id, student.name) == ("100002", "Victim Name 100001 assignsubmission file_100002")


def test_a_flat_moodle_name_that_names_two_participants_is_set_aside(tmp_path):
    """Flat names carry student text at both ends (the full name, the file's name); Moodle writes no
    `_` in a full name, so a second `_<number>_assignsubmission_file_` is the first participant's
    file named like another's, or a name Moodle did not write: graded for nobody, said."""
    moodle_flat(tmp_path, VICTIM, {"hand_computation.py": b"victim"})
    spoof = f"{MIMIC.full}_{MIMIC.canvas_id}_assignsubmission_file_hand_computation.py"
    (tmp_path / spoof).write_bytes(b"attacker")
    found = read_class(tmp_path, "self_attention")
    (victim,) = found.students
    assert victim.lms_id == VICTIM.canvas_id
    assert victim.uploads == (("hand_computation.py", "Victim Name_100001_assignsubmission_file_hand_computation.py"),)
    assert [name for name, _ in found.set_aside] == [spoof]
    assert "participants 100001 and 100002" in found.set_aside[0][1]


@pytest.mark.parametrize("digits", ["１００００１", "١٠٠٠٠١"], ids=["fullwidth", "arabic-indic"])
def test_look_alike_digits_and_case_are_never_a_participant_number(tmp_path, digits):
    """Python's \\d matches other scripts' digits; Moodle writes ASCII digits and lower case."""
    moodle_folder(tmp_path, VICTIM, {"hand_computation.py": b"victim"}, version="4.1+")
    fake = f"Victim Name_{digits}_assignsubmission_file"
    (tmp_path / fake).mkdir()
    (tmp_path / f"Victim Name_{digits}_assignsubmission_file_100002_assignsubmission_file").mkdir()
    (tmp_path / "Victim Name_100001_ASSIGNSUBMISSION_FILE").mkdir()
    (tmp_path / f"Victim Name_{digits}_assignsubmission_file_hand_computation.py").write_bytes(b"x")
    found = read_class(tmp_path, "self_attention", layout="moodle")
    assert sorted(s.lms_id for s in found.students) == ["100001", "100002"]
    assert set(found.strays) == {fake, "Victim Name_100001_ASSIGNSUBMISSION_FILE",
                                 f"Victim Name_{digits}_assignsubmission_file_hand_computation.py"}


# ---------------------------------------------------------------- Moodle: every download as it is today

def test_moodle_41_folders_without_the_trailing_underscore_are_moodles(tmp_path):
    for p in (ADA, GRACE):
        moodle_folder(tmp_path, p, {"hand_computation.py": b"x"}, version="4.1+")
    assert detect(tmp_path) is Layout.MOODLE
    found = read_class(tmp_path, "self_attention")
    assert [(s.name, s.lms_id) for s in found.students] == [("Ada Lovelace_106221", "106221"),
                                                            ("Grace Hopper_106222", "106222")]
    assert found.naming == "folders as Moodle 4.1 and later name them"


def test_an_online_text_is_the_submission_when_it_is_all_there_is(tmp_path):
    moodle_folder(tmp_path, ADA, {"hand_computation.py": b"x"}, version="4.1+")
    beside = moodle_folder(tmp_path, ADA, {ONLINE_TEXT: b"<p>hi</p>"}, version="4.1+", plugin="onlinetext")
    alone = moodle_folder(tmp_path, GRACE, {ONLINE_TEXT: b"<p>my code</p>"}, version="4.1+", plugin="onlinetext")
    found = read_class(tmp_path, "self_attention")
    assert [(s.lms_id, s.folder.name) for s in found.students] == [
        ("106221", "Ada Lovelace_106221_assignsubmission_file"), ("106222", alone.name)]
    assert [name for name, _ in found.set_aside] == [beside.name]
    flat = tmp_path / "flat"
    moodle_flat(flat, GRACE, {ONLINE_TEXT: b"<p>my code</p>"}, plugin="onlinetext")
    (student,) = read_class(flat, "self_attention").students
    assert student.uploads == ((ONLINE_TEXT, f"Grace Hopper_106222_assignsubmission_onlinetext_{ONLINE_TEXT}"),)


def test_two_folders_of_one_participant_are_both_kept(tmp_path):
    """One participant in a 3.x folder and a 4.1 folder (two downloads unzipped into one folder)
    and in flat files: three submissions under keys of their own, none replacing another."""
    moodle_folder(tmp_path, ADA, {"hand_computation.py": b"old"}, version="3.x")
    moodle_folder(tmp_path, ADA, {"hand_computation.py": b"new"}, version="4.1+")
    moodle_flat(tmp_path, ADA, {"attention.py": b"flat"})
    found = read_class(tmp_path, "self_attention")
    assert sorted((s.name, s.source) for s in found.students) == [
        ("Ada Lovelace_106221", "Ada Lovelace_106221_assignsubmission_file"),
        ("Ada Lovelace_106221 (2)", "Ada Lovelace_106221_assignsubmission_file_"),
        ("Ada Lovelace_106221 (3)", "Ada Lovelace_106221_assignsubmission_file_attention.py")]
    listed = identify(found.students, parse_roster(moodle_worksheet([ADA, GRACE])))
    (claim,) = listed.claims
    assert claim.student == ADA.email and len(claim.keys) == 3
    assert {s.claim_of for s in listed.students} == {ADA.email}       # all three on Ada's numbers
    assert [p.key for p in listed.enrolment.absent] == [GRACE.email]   # Ada is not "absent"
    assert all(not (listed.enrolment.person(k).cells or listed.enrolment.person(k).email) for k in claim.keys)


# ---------------------------------------------------------------- Canvas

def test_canvas_names_are_read_from_their_fixed_fields():
    assert [(r.who, r.lms_id, r.file_id, r.name, r.late) for r in canvas_readings(
        "obrienseán_LATE_106230_5550001_hand_computation-1.py")] == [
        ("obrienseán", "106230", "5550001", "hand_computation-1.py", True)]
    assert [(r.lms_id, r.name) for r in canvas_readings("lovelaceada_106221_text.html")] == [("106221", "text.html")]
    assert canvas_readings("LovelaceAda_106221_5550001_x.py") == []      # Canvas lower-cases lastfirst


def test_a_canvas_name_or_file_name_holding_anothers_user_id_is_set_aside(tmp_path):
    """An attacker's sortable name "Lovelace, Ada_ 106221" is written lovelaceada_106221 by Canvas;
    a file name can hold `_106221_<digits>_` too: either reads as two users' files."""
    canvas_file(tmp_path, ADA, 5550001, "hand_computation.py", b"ada")
    by_name = canvas_file(tmp_path, Enrolled("Ada_ 106221", "Lovelace", "106222", "", "mallory"), 5550009,
                          "hand_computation.py", b"attacker")
    by_file = canvas_file(tmp_path, GRACE, 5550010, "x_106221_5550011_hand_computation.py", b"attacker")
    assert by_name.name == "lovelaceada_106221_106222_5550009_hand_computation.py"
    found = read_class(tmp_path, "self_attention")
    (ada,) = found.students
    assert (ada.lms_id, _files(ada)) == ("106221", {"lovelaceada_106221_5550001_hand_computation.py"})
    assert sorted(name for name, _ in found.set_aside) == sorted([by_name.name, by_file.name])
    assert all("users 106221 or 106222" in why for _, why in found.set_aside)


@pytest.mark.parametrize("digits", ["１０６２２１", "١٠٦٢٢١"], ids=["fullwidth", "arabic-indic"])
def test_look_alike_digits_in_a_canvas_name_are_part_of_the_name(tmp_path, digits):
    canvas_file(tmp_path, ADA, 5550001, "hand_computation.py", b"ada")
    canvas_file(tmp_path, Enrolled(f"Ada_ {digits}", "Lovelace", "106222", "", "mallory"), 5550009,
                "hand_computation.py", b"attacker")
    found = read_class(tmp_path, "self_attention")
    assert sorted((s.name, s.lms_id) for s in found.students) == [
        ("lovelaceada_106221", "106221"), (f"lovelaceada_{digits}_106222", "106222")]


def test_canvas_late_resubmitted_text_entry_and_non_ascii_names(tmp_path):
    seán = Enrolled("Seán", "O'Brien", "106230", "", "sobrien")
    canvas_file(tmp_path, seán, 5550001, "hand_computation-1.py", b"x", late=True)
    canvas_text_entry(tmp_path, GRACE, "<p>see attached</p>")
    found = read_class(tmp_path, "self_attention")
    by_id = {s.lms_id: s for s in found.students}
    assert by_id["106230"].name == "obrienseán_106230" and by_id["106230"].lms_late
    assert by_id["106230"].uploads == (("hand_computation.py", "obrienseán_LATE_106230_5550001_hand_computation-1.py"),)
    assert by_id["106222"].uploads == (("text.html", "hoppergrace_106222_text.html"),)


def test_canvas_test_student_is_known_by_its_roster_row_else_by_canvas_own_name(tmp_path):
    test_student = Enrolled("Test", "Student", "999001", "", "")
    canvas_file(tmp_path, ADA, 5550001, "hand_computation.py", b"x")
    canvas_file(tmp_path, test_student, 5550002, "hand_computation.py", b"x")
    found = read_class(tmp_path, "self_attention")
    roster = parse_roster(canvas_gradebook([ADA]))                    # its Test Student row: ID 999001, no login
    assert [p.not_a_student for p in roster] == ["", "Canvas's Test Student (Student View)"]
    for given in (roster, None, roster[:1]):         # by the row; without a roster or a row, by Canvas's name
        listed = identify(found.students, given)
        assert [s.lms_id for s in listed.students] == ["106221"]
        (who, why), = listed.enrolment.not_students
        assert "studenttest" in who and "Test Student" in why
        assert "999001" not in {p.lms_id for p in listed.enrolment.absent}
    real = Enrolled("Test", "Student", "999001", "S999001", "tstudent")    # a real student of that name: a login
    listed = identify(found.students, parse_roster(canvas_gradebook([ADA, real], test_student=False)))
    assert [s.name for s in listed.students] == ["alovelace", "tstudent"]


# ---------------------------------------------------------------- a folder that does not read as a download

def test_a_folder_that_looks_like_moodles_download_but_mostly_does_not_fit_stops(tmp_path):
    moodle_folder(tmp_path, ADA, {"hand_computation.py": b"x"}, version="4.1+")
    for name in ("Grace Hopper_106222_assignsubmission", "Alan Turing - 106223", "charles"):
        (tmp_path / name).mkdir()
    with pytest.raises(LayoutUnclear) as err:
        read_class(tmp_path, "self_attention")
    said = str(err.value)
    assert "looks like Moodle's download" in said and "only 1 of its 4 names" in said
    assert "Alan Turing - 106223, Grace Hopper_106222_assignsubmission, charles" in said
    assert "--layout moodle" in said and "--layout folders" in said
    forced = read_class(tmp_path, "self_attention", layout="moodle")     # the instructor chose: the rest listed
    assert [s.lms_id for s in forced.students] == ["106221"] and len(forced.strays) == 3
    assert [s.name for s in read_class(tmp_path, "self_attention", layout="folders").students][-1] == "charles"


def test_a_layout_no_name_fits_stops(tmp_path):
    (tmp_path / "ada").mkdir()
    (tmp_path / "bo").mkdir()
    with pytest.raises(LayoutUnclear, match="--layout canvas, but no name there"):
        read_class(tmp_path, "self_attention", layout="canvas")


def test_plain_folders_with_a_file_that_fits_canvas_stay_folders(tmp_path):
    for name in ("ada", "bo", "cy"):
        (tmp_path / name).mkdir()
    (tmp_path / "notes_2024_01_class.txt").write_text("x")
    assert detect(tmp_path) is Layout.FOLDERS


# ---------------------------------------------------------------- folders and the roster

def test_a_folder_name_that_matches_two_roster_rows_is_refused_with_both_lines(tmp_path):
    (tmp_path / "106221").mkdir()     # an nbgrader id that is one row's SIS id and another row's Canvas ID
    roster = parse_roster("Student,ID,SIS User ID,SIS Login ID,Section\n"
                          '"Lovelace, Ada",106221,S1,alovelace,A\n"Hopper, Grace",777,106221,ghopper,A\n')
    with pytest.raises(AmbiguousIdentity) as err:
        identify(read_class(tmp_path, "self_attention").students, roster, roster_name="roster.csv")
    assert "roster.csv: line 3 (SIS id) and line 2 (LMS id) both match the submission 106221" in str(err.value)


def test_folders_are_matched_case_and_unicode_form_aside_and_two_claims_are_both_kept(tmp_path):
    for name in ("josé", "jose\u0301", "ADA"):          # composed and decomposed é; the login in capitals
        (tmp_path / name).mkdir()
    roster = parse_roster("id,first_name,last_name,email\njosé,José,Núñez,j@uni.edu\nada,Ada,Lovelace,a@uni.edu\n")
    listed = identify(read_class(tmp_path, "self_attention").students, roster)
    assert [s.name for s in listed.students if not s.claim_of] == ["ada"]
    (claim,) = listed.claims
    assert claim.student == "josé" and sorted(claim.keys) == sorted(["josé", "jose\u0301"])
    assert listed.enrolment.absent == ()


def test_an_lms_submission_is_matched_by_its_lms_id_only(tmp_path):
    """Canvas's lastfirst is the student's own text: never matched against a login."""
    canvas_file(tmp_path, Enrolled("x", "alovelace", "999", "", ""), 5550001, "hand_computation.py", b"x")
    (student,) = read_class(tmp_path, "self_attention").students
    assert student.name == "alovelacex_999"
    listed = identify([student], parse_roster("id,first_name,last_name,email\nalovelacex_999,A,L,a@x\n"))
    assert listed.enrolment.unmatched == ("alovelacex_999",)


# ---------------------------------------------------------------- Gradescope

def test_two_gradescope_submissions_of_one_student_are_both_kept(tmp_path):
    """Identity comes from submission_metadata.yml: a student first submitter of two submissions
    (two exports unzipped together) has both graded, each under Gradescope's folder name."""
    from tests.test_gradescope_export import METADATA, ROSTER, _export

    again = "submission_204:\n  :submitters:\n  - :name: Ada Lovelace\n    :sid: '106221'\n    :email: ada@uni.edu\n" \
            "  :created_at: 2026-03-03 09:00:00.000000000 -05:00\n"
    root = _export(tmp_path, METADATA + again)
    (root / "assignment_881245_export" / "submission_204").mkdir()
    found = read_class(root, "self_attention")
    assert sorted((s.name, s.claim_of) for s in found.students) == [
        ("106223", ""), ("grace@uni.edu", ""), ("submission_201", "ada@uni.edu"), ("submission_204", "ada@uni.edu")]
    for roster in (list(found.people), parse_roster(ROSTER)):
        listed = identify(found.students, roster)
        (claim,) = listed.claims
        assert (claim.student, claim.keys) == ("ada@uni.edu", ("submission_201", "submission_204"))
        assert "ada@uni.edu" not in {p.email for p in listed.enrolment.absent}
