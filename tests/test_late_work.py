"""Late work as an instructor meets it, end to end through `attnkit grade` on downloads laid out as
Canvas and Moodle write them: one clock (every time read in the zone its source writes, the
documented course.yml as written), one grade (raw, penalty and final said in that order, with the
same numbers, on every page and in every export), Moodle's worksheet back as Moodle wrote it.

The late-work examples of docs/report.md (its course.yml, extensions.csv, times.csv, command and
the sentences that give numbers) are read from the page itself: a change to the page that stops
working fails here.
"""

from __future__ import annotations

import contextlib
import csv
import io
import json
import re
from pathlib import Path

import pytest
import yaml

from autograder.cli import main
from autograder.config import DEFAULT_COURSE, KIT_ROOT, ConfigError, load_course
from tests.lms_downloads import (HAND, RIGHT, Enrolled, canvas_file, canvas_gradebook, moodle_folder,
                                 moodle_worksheet)

ADA = Enrolled("Ada", "Lovelace", "106221", "S106221", "alovelace", "Section 001")
GRACE = Enrolled("Grace", "Hopper", "106222", "S106222", "ghopper", "Section 002")
ALAN = Enrolled("Alan", "Turing", "106223", "S106223", "aturing", "Section 001")
CHARLES = Enrolled("Charles", "Babbage", "106224", "S106224", "cbabbage", "Section 002")
CLASS = [ADA, GRACE, ALAN, CHARLES]
WRONG = (KIT_ROOT / "tests" / "corpus" / HAND / "buggy" / "hand_imprecise.py").read_bytes()    # 4 of 7

REPORT_MD = (KIT_ROOT / "docs" / "report.md").read_text(encoding="utf-8")


def _section(text: str, title: str) -> str:
    start = text.index(f"## {title}\n")
    end = text.find("\n## ", start + 1)
    return text[start:end if end > 0 else None]


LATE_DOC = _section(REPORT_MD, "Late work")
BLOCKS = re.findall(r"```(\w+)\n(.*?)```", LATE_DOC, re.S)


def _block(kind: str, first_line: str) -> str:
    found = [text for lang, text in BLOCKS if lang == kind and text.splitlines()[0].startswith(first_line)]
    assert len(found) == 1, f"docs/report.md, Late work: one ```{kind} block starting {first_line!r}"
    return found[0]


def _course(folder: Path, late_yaml: str) -> Path:
    """The kit's course with the hand computation only (fast to grade) and `late_yaml` (a `late:`
    block as course.yml's text) appended as written."""
    data = yaml.safe_load(DEFAULT_COURSE.read_text(encoding="utf-8"))
    data["exercises"] = {HAND: data["exercises"][HAND]}
    path = folder / "course.yml"
    path.write_text(yaml.safe_dump(data, sort_keys=False) + late_yaml, encoding="utf-8")
    return path


def _run(argv: list[str]) -> tuple[int, str, str]:
    out, err = io.StringIO(), io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        code = main(argv)
    return code, out.getvalue(), err.getvalue()


def _csv(path: Path) -> list[dict]:
    return list(csv.DictReader(io.StringIO(path.read_text(encoding="utf-8-sig"))))


def _grades(out: Path) -> dict[str, dict]:
    return {r["student"]: r for r in _csv(out / "grades.csv")}


# ---------------------------------------------------------------- the documented example, as written

@pytest.fixture(scope="module")
def documented(tmp_path_factory):
    """docs/report.md's course.yml, extensions.csv and times.csv as the page writes them, and its
    command line, run on a Canvas download of the class (Alan's file says LATE_, no time)."""
    root = tmp_path_factory.mktemp("documented")
    course = _course(root, _block("yaml", "# course.yml"))
    (root / "extensions.csv").write_text(_block("text", "student,due"), encoding="utf-8")
    (root / "times.csv").write_text(_block("text", "student,submitted_at"), encoding="utf-8")
    (root / "roster.csv").write_text(canvas_gradebook(CLASS), encoding="utf-8")
    cls = root / "CLASS"
    canvas_file(cls, ADA, 5550001, f"{HAND}.py", RIGHT)
    canvas_file(cls, GRACE, 5550002, f"{HAND}.py", RIGHT, late=True)
    canvas_file(cls, ALAN, 5550003, f"{HAND}.py", RIGHT, late=True)
    canvas_file(cls, CHARLES, 5550004, f"{HAND}.py", WRONG, late=True)
    command = _block("bash", "attnkit grade").split("#")[0].split()
    assert command[:2] == ["attnkit", "grade"]
    argv = [a.replace("CLASS", str(cls)).replace("OUT", str(root / "OUT")) for a in command[1:]]
    argv = [str(root / a) if a.endswith(".csv") else a for a in argv]
    code, printed, said = _run(["--course", str(course), *argv, "--jobs", "1"])
    return code, root / "OUT", printed, said


def test_the_documented_late_policy_works_as_written(documented):
    code, out, printed, said = documented
    assert code == 0, said
    assert "Input should be a valid string" not in said
    grades = _grades(out)
    # alovelace on time; ghopper by her extension, 9 h late: 10%; cbabbage 02:30 in Toronto (no
    # offset written), 1 day 2 h 31 min late, past the grace: two started days, 20% of 4
    assert (grades[ADA.login]["total"], grades[ADA.login]["status"]) == ("7", "graded")
    assert [grades[GRACE.login][k] for k in ("raw_total", "penalty", "total", "status")] == ["7", "0.7", "6.3", "late"]
    assert grades[GRACE.login]["submitted_at"] == "2026-03-05T09:00-05:00"
    assert [grades[CHARLES.login][k] for k in ("raw_total", "penalty", "total")] == ["4", "0.8", "3.2"]
    assert grades[CHARLES.login]["submitted_at"] == "2026-03-04T02:30-05:00"
    assert "2 days" not in grades[CHARLES.login]["lateness"] and "20% off" in grades[CHARLES.login]["lateness"]
    assert (grades[ALAN.login]["total"], grades[ALAN.login]["status"]) == ("7", "late")
    assert "cannot be known" in grades[ALAN.login]["lateness"]
    assert "late work: 1 submission times written without a zone (as '2026-03-04 02:30') were read in " \
           "America/Toronto" in printed
    canvas = {r[3]: r[5] for r in csv.reader(io.StringIO((out / "export-canvas.csv").read_text("utf-8-sig")))}
    assert (canvas[GRACE.login], canvas[CHARLES.login], canvas[ADA.login]) == ("6.3", "3.2", "7")


def test_the_due_date_without_offset_in_its_zone_as_the_comment_writes_it(tmp_path):
    """The documented alternative: `due: 2026-03-02 23:59` in the block's `timezone:`."""
    block = _block("yaml", "# course.yml").splitlines()
    line = next(line for line in block if line.strip().startswith("due:"))
    alternative = re.search(r"`(due: [^`]+)`", line).group(1)
    zone = next(line for line in block if line.strip().startswith("timezone:")).split("#")[0].strip()
    late = f"late:\n  {alternative}\n  {zone}\n  penalty: 10\n  grace_minutes: 15\n"
    course = _course(tmp_path, late)
    cls = tmp_path / "download"
    canvas_file(cls, GRACE, 5550002, f"{HAND}.py", RIGHT)
    (tmp_path / "times.csv").write_text("student,submitted_at\nhoppergrace_106222,2026-03-03 05:11\n", encoding="utf-8")
    code, printed, said = _run(["--course", str(course), "grade", str(cls), "--out", str(tmp_path / "out"),
                                "--submitted-at", str(tmp_path / "times.csv"), "--jobs", "1"])
    assert code == 0, said
    grace = _grades(tmp_path / "out")["hoppergrace_106222"]
    assert (grace["submitted_at"], grace["penalty"], grace["total"]) == ("2026-03-03T05:11-05:00", "0.7", "6.3")
    assert "5 h 12 min after the due date (2026-03-02T23:59-05:00)" in grace["lateness"]


# ---------------------------------------------------------------- Moodle's worksheet, in the course's zone

def _doc_worksheet_time() -> tuple[str, str]:
    """docs/report.md's worksheet time and how late it says it is."""
    found = re.search(r"a worksheet's \"([^\"]+)\" is (\d+ h \d+ min) after", " ".join(LATE_DOC.split()))
    assert found, "docs/report.md, Late work: the worksheet's example time"
    return found.group(1), found.group(2)


@pytest.mark.parametrize("zone_line", ["", "  timezone: America/Toronto\n"])
def test_moodle_worksheet_times_are_read_in_the_courses_zone_not_utc(tmp_path, zone_line):
    """The due date carries its offset; the worksheet's times carry none (Moodle writes them in the
    teacher's zone): 5 h 12 min late is 10% off (not "12 min late, 0%"), two days and a bit 30%."""
    when, late_by = _doc_worksheet_time()
    late = "late:\n  due: 2026-03-02T23:59:00-05:00\n" + zone_line + "  penalty: 10\n  grace_minutes: 15\n"
    course = _course(tmp_path, late)
    worksheet = tmp_path / "worksheet.csv"
    worksheet.write_text(moodle_worksheet([GRACE, ALAN], submitted={
        GRACE.login: when, ALAN.login: "Thursday, 5 March 2026, 1:00 AM"}), encoding="utf-8")
    cls = tmp_path / "download"
    moodle_folder(cls, GRACE, {f"{HAND}.py": RIGHT})
    moodle_folder(cls, ALAN, {f"{HAND}.py": RIGHT})
    code, printed, said = _run(["--course", str(course), "grade", str(cls), "--out", str(tmp_path / "out"),
                                "--roster", str(worksheet), "--jobs", "1"])
    assert code == 0, said
    grades = _grades(tmp_path / "out")
    grace, alan = grades[GRACE.email], grades[ALAN.email]
    assert grace["submitted_at"] == "2026-03-03T05:11-05:00" and f"{late_by} after the due date" in grace["lateness"]
    assert (grace["penalty"], grace["total"]) == ("0.7", "6.3")
    assert "2 days 1 h after the due date" in alan["lateness"] and (alan["penalty"], alan["total"]) == ("2.1", "4.9")
    zone = "America/Toronto" if zone_line else "UTC-05:00, the due date's offset"
    said = next(line for line in printed.splitlines() if line.startswith("late work: 2 submission times written"))
    assert said.endswith(f") were read in {zone}" + (" (course.yml late.timezone)" if zone_line else
                                                     " (set late.timezone, e.g. America/Toronto, to follow daylight "
                                                     "saving)"))


# ---------------------------------------------------------------- bad input: once, with file and line

@pytest.mark.parametrize("change, key, said", [
    (("timezone: America/Toronto", "timezone: America/Toronot"), "late.timezone",
     "no time zone 'America/Toronot'"),
    (("due: 2026-03-02T23:59:00-05:00", "due: 2026-02-30T23:59:00-05:00"), "late.due", "is not a date and time"),
    (("due: 2026-03-02T23:59:00-05:00", "due: 2026-03-02"), "late.due", "a date without a time of day"),
    (("due: 2026-03-02T23:59:00-05:00", "due: 2026-03-02 23:59"), None, None),      # fine: timezone: given
    (("due: 2026-03-02T23:59:00-05:00", "due: '2026-03-02 23:59'"), None, None),
])
def test_a_bad_due_date_or_zone_is_said_once_with_its_line(tmp_path, change, key, said):
    text = _block("yaml", "# course.yml").replace(*change)
    text = text.replace("extensions: extensions.csv", "")
    course = _course(tmp_path, text)
    lines = course.read_text(encoding="utf-8").splitlines()
    cls = tmp_path / "download"
    canvas_file(cls, ADA, 5550001, f"{HAND}.py", RIGHT)
    for command in (["grade", str(cls), "--out", str(tmp_path / "out"), "--jobs", "1"],
                    ["check", "--submission", str(cls)], ["handout", str(tmp_path / "handout")]):
        code, printed, err = _run(["--course", str(course), *command])
        if key is None:
            assert "invalid course file" not in err
            continue
        assert code == 2 and not (tmp_path / "out").exists() and not (tmp_path / "handout").exists()
        line = next(i for i, text in enumerate(lines, 1) if text.strip().startswith(key.split(".")[1] + ":"))
        assert f"{course}:{line}: {key}: " in err and said in err, err
        assert (err + printed).count(said) == 1 and "Value error" not in err


# ---------------------------------------------------------------- one grade, one number

@pytest.fixture(scope="module")
def moodle_class(tmp_path_factory):
    """A Moodle class with its grading worksheet as the roster (an Online text column a student
    writes, Moodle's "-" for no date), two late; the worksheet, Moodle's grade CSV and
    Gradescope's CSV exported."""
    root = tmp_path_factory.mktemp("moodle_class")
    course = _course(root, "late:\n  due: 2026-03-02T23:59:00-05:00\n  timezone: America/Toronto\n"
                           "  penalty: 10\n  grace_minutes: 15\n")
    worksheet = root / "worksheet.csv"
    worksheet.write_text(moodle_worksheet(CLASS, submitted={
        ADA.login: "Monday, 2 March 2026, 11:40 PM", GRACE.login: "Tuesday, 3 March 2026, 5:11 AM",
        ALAN.login: "Thursday, 5 March 2026, 1:00 AM", CHARLES.login: "-"},
        online_text={ALAN.login: '=HYPERLINK("http://evil.example","click")', ADA.login: "-"}), encoding="utf-8")
    cls = root / "download"
    moodle_folder(cls, ADA, {f"{HAND}.py": RIGHT})
    moodle_folder(cls, GRACE, {f"{HAND}.py": RIGHT})
    moodle_folder(cls, ALAN, {f"{HAND}.py": WRONG})
    out = root / "out"
    code, printed, said = _run(["--course", str(course), "grade", str(cls), "--out", str(out), "--roster",
                                str(worksheet), "--export", "moodle", "--export", "gradescope-csv", "--jobs", "1"])
    assert code == 0, said
    return worksheet, out, printed


def test_the_worksheet_comes_back_as_moodle_wrote_it_with_grade_and_summary(moodle_class):
    worksheet, out, _ = moodle_class
    sent = list(csv.reader(io.StringIO(worksheet.read_text(encoding="utf-8"))))
    back = list(csv.reader(io.StringIO((out / "export-moodle.csv").read_text(encoding="utf-8-sig"))))
    assert back[0] == sent[0]
    header = sent[0]
    grade, comments, text = (header.index(c) for c in ("Grade", "Feedback comments", "Online text"))
    by_id = {row[0]: row for row in back[1:]}
    for row in sent[1:]:
        got = by_id[row[0]]
        for i, cell in enumerate(row):         # Moodle's own cells exactly, "-" included
            if i not in (grade, comments, text):
                assert got[i] == cell, (header[i], cell, got[i])
    assert by_id[f"Participant {ADA.canvas_id}"][text] == "-"
    assert by_id[f"Participant {ALAN.canvas_id}"][text].startswith("'=HYPERLINK")     # the student's words, guarded
    grace = by_id[f"Participant {GRACE.canvas_id}"]
    assert grace[grade] == "90"                                  # 6.3 of 7, in the worksheet's 100
    assert grace[comments] == ("attnkit: Score 7 - 0.7 late penalty = 6.3 / 7 (90 / 100 in the gradebook); 7 of 7 "
                               "checks passed; handed in 5 h 12 min after the due date (2026-03-02T23:59-05:00): "
                               "10% off.")
    alan = by_id[f"Participant {ALAN.canvas_id}"]
    assert alan[grade] == "40" and alan[comments].startswith("attnkit: Score 4 - 1.2 late penalty = 2.8 / 7 (40 / 100")
    assert "4 of 7 checks passed" in alan[comments] and alan[comments].endswith("says what failed and why.")
    assert "\n" not in grace[comments] and by_id[f"Participant {CHARLES.canvas_id}"][comments] == ""


def test_raw_penalty_and_final_in_that_order_on_every_page(moodle_class):
    _, out, printed = moodle_class
    grades_text = (out / "grades.csv").read_text(encoding="utf-8")
    header = grades_text.splitlines()[0].split(",")
    assert header.index("raw_total") < header.index("penalty") < header.index("total")
    grace = _grades(out)[GRACE.email]
    assert float(grace["raw_total"]) - float(grace["penalty"]) == pytest.approx(float(grace["total"]))

    page = (out / "feedback" / f"{GRACE.email}.md").read_text(encoding="utf-8")
    lead = next(line for line in page.splitlines() if line.startswith("Feedback for"))
    assert lead.endswith("Score 7 - 0.7 late penalty = **6.3 / 7** (90 / 100 in the gradebook).")
    table = [line for line in page.splitlines() if line.startswith("| ")]
    assert table[-3:] == ["| **total** | | 7/7 | **7/7** |", "| late penalty (10%) | | | -0.7 |",
                          "| **final** | | | **6.3/7** |"]
    html = (out / "feedback" / f"{GRACE.email}.html").read_text(encoding="utf-8")
    words = re.sub(r"<[^>]+>", "", html)
    assert words.index("Score 7 - 0.7 late penalty = 6.3 / 7") < words.index("late penalty (10%)") < \
        words.index("final")

    report = (out / "report.html").read_text(encoding="utf-8")
    students = report[report.index('id="students"'):]
    row = next(r for r in students.split("<tr>") if f">{GRACE.email}</td>" in r)
    cells = re.findall(r"<td[^>]*>(.*?)</td>", row)
    assert cells[2:8] == ["7", "7", "-0.7", "<b>6.3</b>", "late",
                          "handed in 5 h 12 min after the due date (2026-03-02T23:59-05:00): 10% off"]

    total = [line for line in printed.splitlines() if "│" in line]
    names = [line.split("│")[1].strip() for line in total]
    assert names.index("score before late penalties") < names.index("late penalty (2 penalised)") < \
        names.index("total")


def test_every_exports_columns_add_up_to_its_total(moodle_class):
    _, out, _ = moodle_class
    gradescope = _csv(out / "export-gradescope-csv.csv")
    assert list(gradescope[0]) == ["Name", "SID", "Email", HAND, "Late Penalty", "Total Score"]
    for row in gradescope:
        if row["Total Score"]:
            assert float(row[HAND]) + float(row["Late Penalty"]) == pytest.approx(float(row["Total Score"]))
    by_email = {r["Email"]: r for r in gradescope}
    assert (by_email[GRACE.email]["Late Penalty"], by_email[GRACE.email]["Total Score"]) == ("-0.7", "6.3")
    assert by_email[CHARLES.email]["Total Score"] == ""


def test_moodles_grade_import_csv_adds_up_too(tmp_path):
    course = _course(tmp_path, "late:\n  due: 2026-03-02T23:59:00-05:00\n  penalty: 20\n")
    cls = tmp_path / "download"
    moodle_folder(cls, ALAN, {f"{HAND}.py": WRONG})
    (tmp_path / "times.csv").write_text("student,submitted_at\nAlan Turing_106223,2026-03-03T09:00:00-05:00\n",
                                        encoding="utf-8")
    code, _, said = _run(["--course", str(course), "grade", str(cls), "--out", str(tmp_path / "out"), "--export",
                          "moodle", "--submitted-at", str(tmp_path / "times.csv"), "--jobs", "1"])
    assert code == 0, said
    rows = _csv(tmp_path / "out" / "export-moodle.csv")
    assert list(rows[0]) == ["username", f"self_attention: {HAND}", "self_attention: late penalty", "self_attention",
                             "email", "idnumber"]
    assert [rows[0][c] for c in list(rows[0])[1:4]] == ["4", "-0.8", "3.2"]


# ---------------------------------------------------------------- the documented numbers

def test_the_documented_sentences_give_the_kits_numbers():
    from autograder.gradescope.late import RunnerLate, late_lines
    from autograder.reports.final_grade import Grade
    from autograder.intake.late_policy import Lateness

    said = re.search(r'leads with "(Score [^"]+)"', " ".join(LATE_DOC.split())).group(1).replace("**", "")
    raw, penalty, final, top = map(float, re.match(r"Score ([\d.]+) - ([\d.]+) late penalty = ([\d.]+) / (\d+)",
                                                   said).groups())
    column = re.search(r'\(([\d.]+) / (\d+) in the gradebook\)', LATE_DOC)
    assert Grade(raw, top, penalty, float(column.group(2))).said() == \
        f"{said} ({column.group(1)} / {column.group(2)} in the gradebook)"
    gradescope = " ".join((KIT_ROOT / "docs" / "gradescope.md").read_text(encoding="utf-8").split())
    example = re.search(r'"(Score 7 - [\d.]+ late penalty = [\d.]+ / 7)"', gradescope).group(1)
    from datetime import datetime, timedelta, timezone

    due = datetime(2026, 3, 2, 23, 59, tzinfo=timezone.utc)
    lines = late_lines(RunnerLate(Lateness(due, due + timedelta(days=1), percent=20.0), "course.yml"), 7, 7)
    assert example in lines


def test_summary_json_rows_carry_raw_penalty_and_lateness(moodle_class):
    _, out, _ = moodle_class
    summary = json.loads((out / "summary.json").read_text(encoding="utf-8"))
    rows = {r["student"]: r for r in summary["rows"]}
    assert (rows[GRACE.email]["raw_score"], rows[GRACE.email]["penalty"], rows[GRACE.email]["score"]) == (7, 0.7, 6.3)
    assert "5 h 12 min" in rows[GRACE.email]["lateness"]
    assert summary["late"]["penalised"] == 2 and summary["late"]["raw_scores"]["mean"] == pytest.approx(6.0)


def test_the_report_counts_as_the_terminal_and_tells_same_name_students_apart(tmp_path):
    """Two students named Alex Kim and one who handed in nothing: the report's student count is
    the terminal's, and the heat map (where no id column stands) names each Alex Kim with their
    login; the students table shows each one's override."""
    kim1 = Enrolled("Alex", "Kim", "106231", "S106231", "akim1")
    kim2 = Enrolled("Alex", "Kim", "106232", "S106232", "akim2")
    course = _course(tmp_path, "")
    (tmp_path / "roster.csv").write_text(canvas_gradebook([ADA, kim1, kim2, CHARLES]), encoding="utf-8")
    cls = tmp_path / "download"
    canvas_file(cls, ADA, 5550001, f"{HAND}.py", RIGHT)
    canvas_file(cls, kim1, 5550002, f"{HAND}.py", WRONG)
    canvas_file(cls, kim2, 5550003, f"{HAND}.py", RIGHT)
    (tmp_path / "overrides.csv").write_text("student,check,points,reason,who\n"
                                            "akim1,hand_computation.part_a.scaled_scores,1,rounding,TA Kim\n",
                                            encoding="utf-8")
    out = tmp_path / "out"
    code, printed, said = _run(["--course", str(course), "grade", str(cls), "--out", str(out), "--roster",
                                str(tmp_path / "roster.csv"), "--overrides", str(tmp_path / "overrides.csv"),
                                "--jobs", "1"])
    assert code == 0, said
    counted = re.search(r"self_attention: (\d+) students, (\d+) graded", printed).groups()
    report = (out / "report.html").read_text(encoding="utf-8")
    tiles = dict((label, number) for number, label in re.findall(r'<div class="stat"><b>(\d+)</b>(\w+)</div>', report))
    assert (tiles["students"], tiles["graded"]) == counted == ("4", "3")
    labels = re.findall(r"<text [^>]*>([^<]*)</text>", report[report.index('id="check-by-student"'):])
    assert "Kim, Alex (akim1)" in labels and "Kim, Alex (akim2)" in labels and "Lovelace, Ada" in labels
    students = report[report.index('id="students"'):]
    row = next(r for r in students.split("<tr>") if ">akim1</td>" in r)
    assert "hand_computation.part_a.scaled_scores: 0 -&gt; 1 (rounding, TA Kim)" in row
    page = (out / "feedback" / "akim1.md").read_text(encoding="utf-8")     # the gradebook's grade, said
    assert "Score **5 / 7**" in page and "| your instructor's change | | | +1 |" in page
    assert "Your instructor changed your grade: hand_computation.part_a.scaled_scores: 0 -\\> 1" in page


def test_a_worksheet_time_that_cannot_be_read_is_said_with_its_line_before_anything_is_written(tmp_path):
    course = _course(tmp_path, "late:\n  due: 2026-03-02T23:59:00-05:00\n  penalty: 10\n")
    worksheet = tmp_path / "worksheet.csv"
    worksheet.write_text(moodle_worksheet([ADA, GRACE], submitted={GRACE.login: "the third of March"}),
                         encoding="utf-8")
    cls = tmp_path / "download"
    moodle_folder(cls, ADA, {f"{HAND}.py": RIGHT})
    moodle_folder(cls, GRACE, {f"{HAND}.py": RIGHT})
    code, printed, said = _run(["--course", str(course), "grade", str(cls), "--out", str(tmp_path / "out"),
                                "--roster", str(worksheet), "--jobs", "1"])
    assert code == 2 and not (tmp_path / "out").exists()
    message = f"{worksheet} line 3: 'Last modified (submission)' is 'the third of March', not a date and time"
    assert (printed + said).count(message) == 1, said


def test_the_documented_messages_are_the_kits(tmp_path):
    """docs/report.md's error example and the worksheet's comment, as the kit writes them."""
    from autograder.intake.gradebook_column import Target
    from autograder.reports.class_summary import StudentRow
    from autograder.reports.exports import _summary

    error = re.search(r"`(course\.yml:\d+: late\.timezone: [^`]+)`", LATE_DOC).group(1)
    wrong = re.search(r"no time zone '([^']+)'", error).group(1)
    course = _course(tmp_path, _block("yaml", "# course.yml").replace("timezone: America/Toronto", f"timezone: {wrong}"))
    with pytest.raises(ConfigError) as raised:
        load_course(course)
    said = str(raised.value).splitlines()[1].strip()
    assert said.split(": ", 1)[1].startswith(error.split(": ", 1)[1])       # after the file and line, the same

    exports = " ".join(_section(REPORT_MD, "Exports (`--export FORMAT`)").split())
    comment = re.search(r'one line: "(attnkit: [^"]+)"', exports).group(1)
    row = StudentRow("ada", 38.7, (), (), 0.0, "P" * 40 + "F" * 5, "late", 4.3, "handed in 1 day 2 h after ...")
    kit_course = load_course()        # 60 points, as the page's example
    assert _summary(row, kit_course, Target("Grade", 100.0)).startswith(comment.split("; handed in")[0])
