"""The instructor's round trip through an LMS, end to end through `attnkit grade` on
downloads built as Canvas and Moodle name them: one identity per student, resolved from the
layout and the roster and used by everything keyed on a student; people shown by name."""

from __future__ import annotations

import csv
import io
import json
import re
from pathlib import Path

import pytest
import yaml

from autograder.cli import main
from autograder.config import DEFAULT_COURSE
from tests.lms_downloads import (HAND, Enrolled, answered, canvas_file, canvas_gradebook, moodle_folder,
                                 moodle_worksheet, unzipped_handout)

ADA = Enrolled("Ada", "Lovelace", "106221", "S106221", "alovelace", "Section 001")
GRACE = Enrolled("Grace", "Hopper", "106222", "S106222", "ghopper", "Section 002")
ALAN = Enrolled("Alan", "Turing", "106223", "S106223", "aturing", "Section 001")
CHARLES = Enrolled("Charles", "Babbage", "106224", "S106224", "cbabbage", "Section 002")
CLASS = [ADA, GRACE, ALAN, CHARLES]


def _course(folder: Path, **changes) -> Path:
    """The kit's course with the hand computation only (fast to grade), `changes` on top."""
    data = yaml.safe_load(DEFAULT_COURSE.read_text(encoding="utf-8"))
    data["exercises"] = {HAND: data["exercises"][HAND]}
    data.update(changes)
    path = folder / "course.yml"
    path.write_text(yaml.safe_dump(data, sort_keys=False), encoding="utf-8")
    return path


def _keys(course_path: Path, ids: list[str]) -> dict[str, dict]:
    from autograder.checks import check_ids
    from autograder.config import load_course
    from autograder.variants import variant_for
    from tests.test_variants import _independent_key

    course = load_course(course_path, known_checks=check_ids())
    return {i: _independent_key(variant_for(course, i)) for i in ids}


def _grade(course: Path, cls: Path, out: Path, *more: str) -> int:
    return main(["--course", str(course), "grade", str(cls), "--out", str(out), "--jobs", "1", *more])


def _grades(out: Path) -> dict[str, dict]:
    return {r["student"]: r for r in csv.DictReader(io.StringIO((out / "grades.csv").read_text(encoding="utf-8")))}


@pytest.fixture(scope="module")
def canvas_variants(tmp_path_factory):
    """Variants on; handouts made from Canvas's gradebook export (named by SIS login); Canvas's
    download of three students: Ada and Grace answer their own numbers (Grace's file renamed by
    Canvas and late), Alan hands in Ada's answers; Charles hands in nothing."""
    root = tmp_path_factory.mktemp("canvas_variants")
    course = _course(root, variants={"enabled": True})
    roster = root / "roster.csv"
    roster.write_text(canvas_gradebook(CLASS), encoding="utf-8")
    handouts = root / "handouts"
    assert main(["--course", str(course), "handout", str(handouts), "--roster", str(roster)]) == 0
    keys = _keys(course, [p.login for p in CLASS])
    cls = root / "download"
    canvas_file(cls, ADA, 5550001, f"{HAND}.py", answered(unzipped_handout(handouts, ADA.login) / f"{HAND}.py",
                                                         keys[ADA.login]))
    canvas_file(cls, GRACE, 5550002, f"{HAND}-1.py", answered(unzipped_handout(handouts, GRACE.login) / f"{HAND}.py",
                                                             keys[GRACE.login]), late=True)
    canvas_file(cls, ALAN, 5550003, f"{HAND}.py", answered(unzipped_handout(handouts, ALAN.login) / f"{HAND}.py",
                                                          keys[ADA.login]))
    return root, course, roster, cls


@pytest.fixture(scope="module")
def canvas_graded(canvas_variants, tmp_path_factory):
    root, course, roster, cls = canvas_variants
    out = root / "out"
    import contextlib

    printed = io.StringIO()
    with contextlib.redirect_stdout(printed):
        code = _grade(course, cls, out, "--roster", str(roster), "--export", "canvas")
    return code, out, printed.getvalue()


def test_variants_on_a_canvas_download_grade_each_student_on_their_own_handout(canvas_graded):
    code, out, _ = canvas_graded
    assert code == 0
    grades = _grades(out)
    assert grades[ADA.login]["total"] == "7" and grades[GRACE.login]["total"] == "7"
    assert grades[ALAN.login]["total"] == "0"
    summary = json.loads((out / "summary.json").read_text(encoding="utf-8"))
    assert {(f["student"], f["matches_key_of"]) for f in summary["integrity"]} == {(ALAN.login, ADA.login)}
    assert "another variant" not in (out / "feedback" / f"{ADA.login}.md").read_text(encoding="utf-8")
    assert "another variant" in (out / "feedback" / f"{ALAN.login}.md").read_text(encoding="utf-8")
    assert sorted(p.name for p in (out / "results").iterdir()) == \
        sorted(f"{p.login}.json" for p in (ADA, GRACE, ALAN))


def test_variants_on_a_moodle_download_grade_each_student_on_their_own_handout(tmp_path):
    course = _course(tmp_path, variants={"enabled": True})
    roster = tmp_path / "worksheet.csv"
    roster.write_text(moodle_worksheet([ADA, GRACE]), encoding="utf-8")
    handouts = tmp_path / "handouts"
    assert main(["--course", str(course), "handout", str(handouts), "--roster", str(roster)]) == 0
    keys = _keys(course, [ADA.email, GRACE.email])
    cls = tmp_path / "download"
    for p in (ADA, GRACE):
        moodle_folder(cls, p, {f"{HAND}.py": answered(unzipped_handout(handouts, p.email) / f"{HAND}.py", keys[p.email])})
    out = tmp_path / "out"
    assert _grade(course, cls, out, "--roster", str(roster)) == 0
    grades = _grades(out)
    assert grades[ADA.email]["total"] == grades[GRACE.email]["total"] == "7"
    assert json.loads((out / "summary.json").read_text(encoding="utf-8"))["integrity"] == []


def test_variants_on_and_no_way_to_tell_whose_numbers_is_refused_before_grading(canvas_variants, tmp_path, capsys):
    _, course, _, cls = canvas_variants
    out = tmp_path / "out"
    assert _grade(course, cls, out) == 2
    said = capsys.readouterr().err
    assert "variants are on" in said and "--roster" in said and "lovelaceada_106221" in said
    assert not out.exists()
    stranger = tmp_path / "one_more"
    stranger.mkdir()
    for entry in cls.iterdir():
        (stranger / entry.name).write_bytes(entry.read_bytes())
    canvas_file(stranger, Enrolled("Eve", "Stranger", "777001", "S777", "estranger"), 5559999, f"{HAND}.py", b"x = 1\n")
    roster = tmp_path / "roster.csv"
    roster.write_text(canvas_gradebook(CLASS), encoding="utf-8")
    assert _grade(course, stranger, out, "--roster", str(roster)) == 2
    said = capsys.readouterr().err
    assert "match no row of the roster" in said and "strangereve_777001" in said and "lovelaceada" not in said
    assert not out.exists()


def test_with_a_roster_every_page_names_the_student_by_last_name_with_their_id(canvas_graded):
    _, out, printed = canvas_graded
    report = (out / "report.html").read_text(encoding="utf-8")
    students = report[report.index('id="students"'):]
    order = [students.index(f">{p.last}, {p.first}</a>") for p in (GRACE, ADA, ALAN)]
    assert order == sorted(order)                                   # Hopper, Lovelace, Turing
    assert f'<td class="id">{ADA.login}</td>' in students
    integrity = report[report.index('id="integrity"'):report.index('id="roster"')]
    assert "Turing, Alan</a> <span class=\"id\">(aturing)</span>" in integrity and "Lovelace, Ada" in integrity
    assert "lovelaceada_106221" not in report
    roster_part = report[report.index('id="roster"'):report.index('id="slowest"')]
    assert '<li>Babbage, Charles <span class="id">(cbabbage)</span></li>' in roster_part
    feedback = (out / "feedback" / f"{ADA.login}.html").read_text(encoding="utf-8")
    assert "Lovelace, Ada" in feedback and "<code>alovelace</code>" in feedback
    summary = json.loads((out / "summary.json").read_text(encoding="utf-8"))
    assert list(summary["names"].items()) == [(CHARLES.login, "Babbage, Charles"), (GRACE.login, "Hopper, Grace"),
                                              (ADA.login, "Lovelace, Ada"), (ALAN.login, "Turing, Alan")]
    assert summary["roster"]["not_submitted_ids"][0] == CHARLES.login
    # one name a line in the terminal: "Last, First" holds a comma of its own
    assert "\n  Babbage, Charles (cbabbage)\n" in printed
    assert _grades(out)[ADA.login]["name"] == "Lovelace, Ada"


@pytest.mark.parametrize("width", [1400, 800])
def test_the_named_pages_read_in_chromium(canvas_graded, tmp_path, width):
    from tests.test_report import _shots
    from tests.test_report_pages import _measure

    _, out, _ = canvas_graded
    shots = _shots(tmp_path)
    report = _measure(out / "report.html", tmp_path, width, shots / f"roster-report-{width}.png")
    assert report["clipped"] == [] and report["overflow"] <= 0, report   # the heat map's names drawn whole
    assert re.search(r"<text [^>]*>Lovelace, Ada</text>", (out / "report.html").read_text(encoding="utf-8"))
    feedback = _measure(out / "feedback" / f"{ALAN.login}.html", tmp_path, width, shots / f"roster-feedback-{width}.png")
    assert feedback["overflow"] <= 0, feedback


# ---------------------------------------------------------------- 3. the LMS's own column

WRONG = (Path(__file__).parent / "corpus" / HAND / "buggy" / "hand_imprecise.py").read_bytes()


@pytest.fixture(scope="module")
def canvas_class(tmp_path_factory):
    """Variants off: Ada right, Grace half right (renamed by Canvas, late), Charles nothing."""
    from tests.lms_downloads import RIGHT

    root = tmp_path_factory.mktemp("canvas_class")
    course = _course(root)
    roster = root / "roster.csv"
    roster.write_text(canvas_gradebook(CLASS), encoding="utf-8")
    cls = root / "download"
    canvas_file(cls, ADA, 5550001, f"{HAND}.py", RIGHT)
    canvas_file(cls, GRACE, 5550002, f"{HAND}-1.py", WRONG, late=True)
    canvas_file(cls, ALAN, 5550003, "answers.docx", b"PK not really")
    return root, course, roster, cls


def _canvas_export(out: Path) -> list[list[str]]:
    text = (out / "export-canvas.csv").read_text(encoding="utf-8")
    assert text.startswith("\ufeff")
    return list(csv.reader(io.StringIO(text[1:])))


def test_the_canvas_export_writes_the_rosters_column_scaled_to_its_points(canvas_class, capsys):
    root, course, roster, cls = canvas_class
    out = root / "out"
    assert _grade(course, cls, out, "--roster", str(roster), "--export", "canvas",
                  "--assignment", "self-attention lab") == 0
    printed = capsys.readouterr().out
    rows = _canvas_export(out)
    assert rows[0] == ["Student", "ID", "SIS User ID", "SIS Login ID", "Section", "Self-Attention Lab (881245)"]
    assert rows[1] == ["Points Possible", "", "", "", "", "100"]
    by_login = {r[3]: r for r in rows[2:]}
    assert set(by_login) == {ADA.login, GRACE.login, ALAN.login, CHARLES.login}     # no Test Student
    assert by_login[ADA.login] == ["Lovelace, Ada", ADA.canvas_id, ADA.sis_id, ADA.login, "Section 001", "100"]
    grace = _grades(out)[GRACE.login]
    assert 0 < float(grace["total"]) < 7
    assert by_login[GRACE.login][4] == "Section 002"
    assert float(by_login[GRACE.login][5]) == round(float(grace["total"]) * 100 / 7, 2)
    assert by_login[CHARLES.login][5] == "" and by_login[ALAN.login][5] == ""      # missing, not 0
    assert "'Self-Attention Lab (881245)', scores scaled from 7 to its 100 points" in printed
    assert "Student, Test" not in (out / "report.html").read_text(encoding="utf-8")
    assert _grade(course, cls, out, "--roster", str(roster), "--export", "canvas", "--assignment",
                  "Self-Attention Lab (881245)", "--missing-as-zero") == 0
    assert {r[3]: r[5] for r in _canvas_export(out)[2:]}[CHARLES.login] == "0"


@pytest.mark.parametrize("roster_text, more, said", [
    (canvas_gradebook(CLASS), ("--assignment", "Lab 9"), "roster.csv line 1: no column named 'Lab 9' (--assignment); "
                                                         "the assignments there are: Quiz 1 (881240); Self-Attention"),
    (canvas_gradebook(CLASS).replace("    Points Possible,,,,,10.00,100.00", "    Points Possible,,,,,10.00,lots"),
     ("--assignment", "Self-Attention Lab"), "roster.csv line 2: Points Possible of this column is 'lots'"),
    ("Name,Section\nAda Lovelace,1\n", (), "roster.csv line 1: no column names a student"),
])
def test_a_bad_roster_or_column_is_said_with_its_line_before_anything_is_written(canvas_class, tmp_path, capsys,
                                                                                  roster_text, more, said):
    _, course, _, cls = canvas_class
    roster = tmp_path / "roster.csv"
    roster.write_text(roster_text, encoding="utf-8")
    out = tmp_path / "out"
    assert _grade(course, cls, out, "--roster", str(roster), "--export", "canvas", *more) == 2
    assert said in capsys.readouterr().err
    assert not out.exists()


def test_moodles_grading_worksheet_comes_back_with_its_grade_filled(tmp_path):
    from tests.lms_downloads import RIGHT

    course = _course(tmp_path)
    roster = tmp_path / "worksheet.csv"
    roster.write_text(moodle_worksheet([ADA, GRACE, CHARLES]), encoding="utf-8")
    cls = tmp_path / "download"
    moodle_folder(cls, ADA, {f"{HAND}.py": RIGHT})
    moodle_folder(cls, GRACE, {f"{HAND}.py": WRONG})
    out = tmp_path / "out"
    assert _grade(course, cls, out, "--roster", str(roster), "--export", "moodle") == 0
    text = (out / "export-moodle.csv").read_text(encoding="utf-8-sig")
    rows = list(csv.DictReader(io.StringIO(text)))
    assert list(rows[0]) == next(csv.reader(io.StringIO(roster.read_text(encoding="utf-8"))))   # every column kept
    grades = {r["Identifier"]: r for r in rows}
    assert grades[f"Participant {ADA.canvas_id}"]["Grade"] == "100"
    assert grades[f"Participant {CHARLES.canvas_id}"]["Grade"] == ""
    assert grades[f"Participant {GRACE.canvas_id}"]["Last modified (submission)"] == "Monday, 2 March 2026, 9:12 AM"


# ---------------------------------------------------------------- 6. one status vocabulary

@pytest.fixture(scope="module")
def canvas_statuses(canvas_class):
    """The class of canvas_class graded with its roster; Alan's upload is five Word files with
    long names (nothing gradable, its message longer than a line)."""
    import contextlib

    root, course, roster, cls = canvas_class
    cls2 = root / "download_statuses"
    cls2.mkdir()
    for entry in cls.iterdir():
        if not entry.name.startswith(ALAN.canvas_key):
            (cls2 / entry.name).write_bytes(entry.read_bytes())
    for i in range(5):
        canvas_file(cls2, ALAN, 5550010 + i, f"my answers to the self attention lab part {i} final version.docx",
                    b"PK not really")
    out = root / "out_statuses"
    printed = io.StringIO()
    with contextlib.redirect_stdout(printed):
        assert _grade(course, cls2, out, "--roster", str(roster), "--export", "canvas") == 0
    return out, printed.getvalue()


def test_one_word_for_each_students_standing_everywhere(canvas_statuses):
    out, printed = canvas_statuses
    grades = _grades(out)
    assert {k: grades[k]["status"] for k in (ADA.login, GRACE.login, ALAN.login, CHARLES.login)} == {
        ADA.login: "graded", GRACE.login: "graded", ALAN.login: "nothing gradable", CHARLES.login: "not submitted"}
    summary = json.loads((out / "summary.json").read_text(encoding="utf-8"))
    assert {r["student"]: r["status"] for r in summary["rows"]}[ALAN.login] == "nothing gradable"
    assert summary["statuses"] == {"graded": 2, "nothing gradable": 1, "not submitted": 1}
    report = (out / "report.html").read_text(encoding="utf-8")
    assert "<span>2 graded</span><span>1 nothing gradable</span><span>1 not submitted</span>" in report
    assert "Turing, Alan</a></td><td class=\"id\">aturing</td><td class=n></td><td class=n><b></b></td>" \
           "<td>nothing gradable</td>" in report
    assert "2 graded · 1 nothing gradable · 1 not submitted" in printed
    feedback = (out / "feedback" / f"{ALAN.login}.md").read_text(encoding="utf-8")
    assert "**nothing gradable**, no score" in feedback and feedback.count("part 0 final version.docx") == 1
    assert "not submitted" not in feedback.lower()


def test_the_terminal_and_the_report_give_the_same_headline_numbers(canvas_statuses):
    out, printed = canvas_statuses
    summary = json.loads((out / "summary.json").read_text(encoding="utf-8"))
    assert summary["submitted"] == 2 and summary["students"] == 3
    total = next(line.split() for line in printed.splitlines() if line.split()[1:2] == ["total"])
    assert total[3:6] == ["2", "│", f"{summary['scores']['mean']:.2f}"]        # handed in, mean: the report's
    assert "4 students, 2 graded (means over the graded)" in printed


def test_no_message_is_cut_mid_word(canvas_statuses):
    out, printed = canvas_statuses
    summary = json.loads((out / "summary.json").read_text(encoding="utf-8"))
    shown = next(t["message"] for t in summary["trouble"] if t["student"] == ALAN.login)
    full = json.loads((out / "results" / f"{ALAN.login}.json").read_text(encoding="utf-8"))
    said = next(c["message"] for e in full["extra_data"]["result"]["exercises"] for c in e["checks"])
    assert len(said) > len(shown) and shown.endswith(" ...")
    kept = shown[:-len(" ...")]
    assert said.startswith(kept) and said[len(kept)] == " "       # cut between two words
    assert kept in printed


def test_canvas_renaming_a_resubmission_is_not_the_students_mistake(canvas_statuses):
    out, _ = canvas_statuses
    feedback = (out / "feedback" / f"{GRACE.login}.md").read_text(encoding="utf-8")
    assert "next time" not in feedback and "-1.py" not in feedback
    summary = json.loads((out / "summary.json").read_text(encoding="utf-8"))
    assert GRACE.login not in {i["student"] for i in summary["intake"]}


def test_a_canvas_download_reached_through_a_link_is_graded(canvas_class, tmp_path):
    root, course, roster, cls = canvas_class
    link = tmp_path / "linked"
    link.symlink_to(cls, target_is_directory=True)
    out = tmp_path / "out"
    assert _grade(course, link / ".", out, "--roster", str(roster)) == 0
    assert {k: v["status"] for k, v in _grades(out).items()}[ADA.login] == "graded"
    assert _grades(out)[ADA.login]["total"] == "7"


# ---------------------------------------------------------------- 7. overrides and one re-grade

OVERRIDES = ("student,check,points,reason,who\n"
             f"{GRACE.login},hand_computation.part_a.scaled_scores,1,right up to rounding,TA Kim\n"
             f"{ALAN.login},,excused,medical certificate,Prof. Diaz\n"
             f"{CHARLES.login},,EX,joined late,Prof. Diaz\n")


def test_overrides_are_merged_with_their_audit_trail(canvas_class, tmp_path):
    root, course, roster, cls = canvas_class
    out = tmp_path / "out"
    assert _grade(course, cls, out, "--roster", str(roster), "--export", "canvas") == 0
    before = _grades(out)
    (out / "overrides.csv").write_text(OVERRIDES, encoding="utf-8")      # OUT/overrides.csv is read by default
    assert _grade(course, cls, out, "--roster", str(roster), "--export", "canvas") == 0
    grades = _grades(out)
    assert float(grades[GRACE.login]["total"]) == float(before[GRACE.login]["total"]) + 1
    assert grades[GRACE.login]["override"] == "hand_computation.part_a.scaled_scores: 0 -> 1 (right up to " \
                                              "rounding, TA Kim)"
    assert (grades[ALAN.login]["status"], grades[ALAN.login]["total"]) == ("excused", "")
    assert grades[CHARLES.login]["status"] == "excused" and grades[ADA.login]["override"] == ""
    canvas = {r[3]: r[5] for r in _canvas_export(out)[2:]}
    assert canvas[ALAN.login] == canvas[CHARLES.login] == "EX"
    assert float(canvas[GRACE.login]) == float(grades[GRACE.login]["total"])
    summary = json.loads((out / "summary.json").read_text(encoding="utf-8"))
    trail = {(o["student"], o["check"]): o for o in summary["overrides"]}
    assert trail[(GRACE.login, "hand_computation.part_a.scaled_scores")] == {
        "student": GRACE.login, "check": "hand_computation.part_a.scaled_scores", "original": 0.0, "overridden": 1.0,
        "reason": "right up to rounding", "who": "TA Kim", "line": 2}
    assert trail[(CHARLES.login, "(all)")]["overridden"] == "excused"
    assert summary["statuses"] == {"graded": 2, "excused": 2}
    assert summary["scores"]["mean"] == (7 + float(grades[GRACE.login]["total"])) / 2
    report = (out / "report.html").read_text(encoding="utf-8")
    assert 'id="overrides"' in report and "right up to rounding" in report


@pytest.mark.parametrize("row, said", [
    ("nobody,hand_computation,3,,", "overrides.csv line 2: no student 'nobody'"),
    (f"{ADA.login},hand_computation.part_c.scores,1,,", "overrides.csv line 2: no check or exercise"),
    (f"{ADA.login},hand_computation.part_a.scores,2,,", "line 2: 2 points for hand_computation.part_a.scores, "
                                                        "which is worth 1"),
    (f"{ADA.login},hand_computation,seven,,", "line 2: points 'seven' is not a number"),
])
def test_a_bad_override_is_said_with_its_line_and_nothing_graded_is_lost(canvas_class, tmp_path, capsys, row, said):
    root, course, roster, cls = canvas_class
    out = tmp_path / "out"
    assert _grade(course, cls, out, "--roster", str(roster)) == 0
    written = {p.name: p.read_bytes() for p in out.rglob("*") if p.is_file()}
    overrides = tmp_path / "overrides.csv"
    overrides.write_text(f"student,check,points,reason,who\n{row}\n", encoding="utf-8")
    assert _grade(course, cls, out, "--roster", str(roster), "--overrides", str(overrides)) == 2
    assert said in capsys.readouterr().err
    assert {p.name: p.read_bytes() for p in out.rglob("*") if p.is_file()} == written


def test_one_student_is_graded_again_and_the_others_kept(canvas_class, tmp_path, capsys):
    from tests.lms_downloads import RIGHT

    root, course, roster, cls = canvas_class
    mine = tmp_path / "download"
    mine.mkdir()
    for entry in cls.iterdir():
        (mine / entry.name).write_bytes(entry.read_bytes())
    out = tmp_path / "out"
    assert _grade(course, mine, out, "--roster", str(roster)) == 0
    before = _grades(out)
    grace_file = next(mine.glob(f"{GRACE.canvas_key}_*"))
    grace_file.write_bytes(RIGHT)                                    # both fixed since; only Grace asked for
    next(mine.glob(f"{ADA.canvas_key}_*")).write_bytes(WRONG)
    graded_result = (out / "results" / f"{ADA.login}.json").read_bytes()
    assert _grade(course, mine, out, "--roster", str(roster), "--student", GRACE.login) == 0
    after = _grades(out)
    assert after[GRACE.login]["total"] == "7" and before[GRACE.login]["total"] != "7"
    assert after[ADA.login]["total"] == before[ADA.login]["total"] == "7"
    assert (out / "results" / f"{ADA.login}.json").read_bytes() == graded_result
    summary = json.loads((out / "summary.json").read_text(encoding="utf-8"))
    assert summary["regraded"]["student"] == GRACE.login
    assert 'id="regraded"' in (out / "report.html").read_text(encoding="utf-8")
    assert "graded Hopper, Grace (ghopper) again" in capsys.readouterr().out
    assert _grade(course, mine, out, "--roster", str(roster), "--student", "nobody") == 2
    assert "--student nobody: no such student" in capsys.readouterr().err


# ---------------------------------------------------------------- 5. feedback back to the LMS

def _canvas_reads(name: str) -> tuple[str, str]:
    """(user id, attachment id) as Canvas's re-upload reads a name: its first two all-digit parts."""
    digits = [part for part in name.split("_") if part.isdigit()]
    return digits[0], digits[1]


def test_canvas_feedback_zip_attaches_each_page_to_its_own_submission(canvas_class, tmp_path, capsys):
    import zipfile

    root, course, roster, cls = canvas_class
    out = tmp_path / "out"
    assert _grade(course, cls, out, "--roster", str(roster), "--export", "canvas-feedback") == 0
    assert "export-canvas-feedback.zip (3 feedback pages): upload it in Canvas" in capsys.readouterr().out
    downloaded = {_canvas_reads(p.name) for p in cls.iterdir()}
    with zipfile.ZipFile(out / "export-canvas-feedback.zip") as zf:
        names = zf.namelist()
        assert len(names) == 3 and {_canvas_reads(n) for n in names} <= downloaded
        for person in (ADA, GRACE, ALAN):
            entry = next(n for n in names if _canvas_reads(n)[0] == person.canvas_id)
            page = zf.read(entry).decode("utf-8")
            assert page == (out / "feedback" / f"{person.login}.html").read_text(encoding="utf-8")
            assert f"{person.last}, {person.first}" in page
            assert all(f"{o.last}, {o.first}" not in page for o in CLASS if o is not person)
            assert "<script" not in page and "http" not in page.replace("http://www.w3.org/2000/svg", "")


def test_moodle_feedback_zip_is_named_as_moodles_download(tmp_path):
    import zipfile

    from tests.lms_downloads import RIGHT

    course = _course(tmp_path)
    cls = tmp_path / "download"
    for p in (ADA, GRACE):
        moodle_folder(cls, p, {f"{HAND}.py": RIGHT})
    out = tmp_path / "out"
    assert _grade(course, cls, out, "--export", "moodle-feedback") == 0
    with zipfile.ZipFile(out / "export-moodle-feedback.zip") as zf:
        names = sorted(zf.namelist())
        assert names == [f"Ada Lovelace_{ADA.canvas_id}_assignsubmission_file_feedback.html",
                         f"Grace Hopper_{GRACE.canvas_id}_assignsubmission_file_feedback.html"]
        for name in names:     # as Moodle's importer splits it: name, participant, plugin type and name, file
            who, participant, kind, plugin, filename = name.split("_", 4)
            assert participant.isdigit() and (kind, plugin, filename) == ("assignsubmission", "file", "feedback.html")
            assert zf.read(name) == (out / "feedback" / f"{who}_{participant}.html").read_bytes()


# ---------------------------------------------------------------- 4. late work

LATE = {"due": "2026-03-02T23:59:00-05:00", "penalty": 10, "per": "day", "grace_minutes": 15, "max_penalty": 50,
        "extensions": "extensions.csv"}


def test_late_work_shows_raw_score_penalty_and_final(tmp_path):
    from tests.lms_downloads import RIGHT

    course = _course(tmp_path, late=LATE)
    (tmp_path / "extensions.csv").write_text(f"student,due\n{GRACE.login},2026-03-03T23:59:00-05:00\n",
                                              encoding="utf-8")
    roster = tmp_path / "roster.csv"
    roster.write_text(canvas_gradebook(CLASS), encoding="utf-8")
    cls = tmp_path / "download"
    canvas_file(cls, ADA, 5550001, f"{HAND}.py", RIGHT)
    canvas_file(cls, GRACE, 5550002, f"{HAND}.py", RIGHT, late=True)
    canvas_file(cls, ALAN, 5550003, f"{HAND}.py", RIGHT, late=True)
    times = tmp_path / "times.csv"
    times.write_text(f"student,submitted_at\n{ADA.login},2026-03-02T23:00:00-05:00\n"
                     f"{GRACE.login},2026-03-04T10:00:00-05:00\n", encoding="utf-8")
    out = tmp_path / "out"
    assert _grade(course, cls, out, "--roster", str(roster), "--export", "canvas", "--submitted-at", str(times)) == 0
    grades = _grades(out)
    grace, ada, alan = grades[GRACE.login], grades[ADA.login], grades[ALAN.login]
    assert (grace["raw_total"], grace["penalty"], grace["total"], grace["status"]) == ("7", "0.7", "6.3", "late")
    assert grace["submitted_at"] == "2026-03-04T10:00-05:00" and "10 h 1 min after the due date" in grace["lateness"]
    assert (ada["total"], ada["penalty"], ada["status"]) == ("7", "0", "graded") and ada["lateness"].startswith("on time")
    assert (alan["total"], alan["status"]) == ("7", "late") and "cannot be known" in alan["lateness"]
    assert {r[3]: r[5] for r in _canvas_export(out)[2:]}[GRACE.login] == "6.3"
    feedback = (out / "feedback" / f"{GRACE.login}.md").read_text(encoding="utf-8")
    assert "10% off" in feedback and "Score 7 - 0.7 late penalty = **6.3 / 7**" in feedback
    summary = json.loads((out / "summary.json").read_text(encoding="utf-8"))
    assert summary["statuses"] == {"graded": 1, "late": 2, "not submitted": 1}
    assert summary["scores"]["mean"] == round((7 + 6.3 + 7) / 3, 3)


def test_moodles_worksheet_gives_the_submission_time(tmp_path):
    from tests.lms_downloads import RIGHT

    course = _course(tmp_path, late={"due": "2026-03-02 09:00", "timezone": "America/Toronto", "penalty": 25})
    roster = tmp_path / "worksheet.csv"
    roster.write_text(moodle_worksheet([ADA]), encoding="utf-8")       # "Monday, 2 March 2026, 9:12 AM"
    cls = tmp_path / "download"
    moodle_folder(cls, ADA, {f"{HAND}.py": RIGHT})
    out = tmp_path / "out"
    assert _grade(course, cls, out, "--roster", str(roster), "--export", "moodle") == 0
    ada = _grades(out)[ADA.email]
    assert (ada["total"], ada["penalty"], ada["submitted_at"]) == ("5.25", "1.75", "2026-03-02T09:12-05:00")
    worksheet = list(csv.DictReader(io.StringIO((out / "export-moodle.csv").read_text(encoding="utf-8-sig"))))
    assert worksheet[0]["Grade"] == "75"         # 5.25 of 7, in the worksheet's 100


@pytest.mark.parametrize("late, extensions, said", [
    ({"due": "2026-02-30T23:59:00-05:00"}, None, "course.yml:"),
    (LATE, "student,due\nnobody,2026-03-03T23:59:00-05:00\n", "extensions.csv line 2: no student 'nobody'"),
    (LATE, "student,due\nlovelaceada_106221,March third\n", "extensions.csv line 2: 'March third' is not a date"),
])
def test_a_bad_due_date_or_extension_is_said_before_anything_is_written(tmp_path, capsys, late, extensions, said):
    from tests.lms_downloads import RIGHT

    course = _course(tmp_path, late=late)
    if extensions is not None:
        (tmp_path / "extensions.csv").write_text(extensions, encoding="utf-8")
    cls = tmp_path / "download"
    canvas_file(cls, ADA, 5550001, f"{HAND}.py", RIGHT)
    out = tmp_path / "out"
    assert _grade(course, cls, out) == 2
    assert said in capsys.readouterr().err
    assert not out.exists()


def test_a_timestamp_is_read_only_where_nbgrader_wrote_it(tmp_path):
    """nbgrader's exchange writes submitted/<student>/<assignment>/timestamp.txt; in any other
    folder a timestamp.txt is the student's own file, never their submission time."""
    from datetime import datetime, timezone

    from autograder.intake.students import Student
    from autograder.intake.submitted_at import layout_time

    stamp = "2026-03-01 09:00:00.000000 UTC"
    plain = tmp_path / "class" / "ada"
    nbgrader = tmp_path / "course" / "submitted" / "ada" / "self_attention"
    for folder in (plain, nbgrader):
        folder.mkdir(parents=True)
        (folder / "timestamp.txt").write_text(stamp, encoding="utf-8")
    assert layout_time(Student("ada", plain), {}, timezone.utc) is None
    assert layout_time(Student("ada", nbgrader), {}, timezone.utc) == datetime(2026, 3, 1, 9, tzinfo=timezone.utc)
