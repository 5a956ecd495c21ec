"""Gradescope's "Export Submissions" graded with `attnkit grade`: submission_metadata.yml (Ruby
symbol keys, Ruby object tags) and one `submission_<id>/` folder each. Each submission is its
first submitter (email, else SID; matched against a Gradescope roster), named in grades.csv and
the report, its `:created_at:` its submission time; a malformed file is refused with its line."""

from __future__ import annotations

import csv
import io
import json
from pathlib import Path

import pytest

from autograder.cli import main
from tests.lms_downloads import HAND, RIGHT
from tests.test_lms_roundtrip import _course

# As Gradescope's Ruby writes it: symbol keys, quoted SIDs, a BigDecimal score, a time with its offset.
METADATA = """\
submission_201:
  :submitters:
  - :name: Ada Lovelace
    :sid: '106221'
    :email: ada@uni.edu
  :created_at: 2026-03-02 21:14:03.123456000 -05:00
  :score: !ruby/object:BigDecimal 18:0.7e1
  :status: processed
  :results: !ruby/hash:ActiveSupport::HashWithIndifferentAccess
    score: 7.0
submission_202:
  :submitters:
  - :name: Grace Hopper
    :sid: '106222'
    :email: grace@uni.edu
  :created_at: 2026-03-04 10:00:00.000000000 -05:00
  :score: 7.0
submission_203:
  :submitters:
  - :name: Alan Turing
    :sid: '106223'
  :created_at: 2026-03-02 20:00:00.000000000 -05:00
"""
ROSTER = """\
First Name,Last Name,SID,Email,Role
Ada,Lovelace,106221,ada@uni.edu,Student
Grace,Hopper,106222,grace@uni.edu,Student
Alan,Turing,106223,,Student
Charles,Babbage,106224,charles@uni.edu,Student
"""
LATE = {"due": "2026-03-02T23:59:00-05:00", "penalty": 10, "per": "day"}


def _export(root: Path, metadata: str = METADATA) -> Path:
    export = root / "assignment_881245_export"        # the zip's own top folder, unzipped
    for n in (201, 202, 203):
        (export / f"submission_{n}").mkdir(parents=True)
        (export / f"submission_{n}" / f"{HAND}.py").write_bytes(RIGHT)
    (export / "submission_metadata.yml").write_text(metadata, encoding="utf-8")
    return root


def _grades(out: Path) -> dict[str, dict]:
    return {r["student"]: r for r in csv.DictReader(io.StringIO((out / "grades.csv").read_text(encoding="utf-8")))}


def test_an_export_is_graded_by_student_with_their_names_and_submission_times(tmp_path, capsys):
    course = _course(tmp_path, late=LATE)
    roster = tmp_path / "gradescope_roster.csv"
    roster.write_text(ROSTER, encoding="utf-8")
    cls, out = _export(tmp_path / "download"), tmp_path / "out"
    # An upload's own timestamp.txt (nbgrader's name) is the student's to write: Gradescope's time wins.
    (cls / "assignment_881245_export" / "submission_202" / "timestamp.txt").write_text(
        "2026-03-01 10:00:00.000000 UTC", encoding="utf-8")
    assert main(["--course", str(course), "grade", str(cls), "--out", str(out), "--roster", str(roster),
                 "--jobs", "1"]) == 0
    assert "gradescope's download, 3 students" in capsys.readouterr().out
    grades = _grades(out)
    assert set(grades) == {"ada@uni.edu", "grace@uni.edu", "106223", "charles@uni.edu"}
    ada, grace, alan = grades["ada@uni.edu"], grades["grace@uni.edu"], grades["106223"]
    assert (ada["name"], ada["total"], ada["status"], ada["submitted_at"]) == (
        "Lovelace, Ada", "7", "graded", "2026-03-02T21:14-05:00")
    assert (grace["name"], grace["raw_total"], grace["penalty"], grace["total"], grace["status"]) == (
        "Hopper, Grace", "7", "1.4", "5.6", "late")
    assert (alan["name"], alan["sis_id"], alan["total"]) == ("Turing, Alan", "106223", "7")
    assert grades["charles@uni.edu"]["status"] == "not submitted"
    report = (out / "report.html").read_text(encoding="utf-8")
    assert "Lovelace, Ada" in report and "submission_201" not in report
    summary = json.loads((out / "summary.json").read_text(encoding="utf-8"))
    assert summary["names"]["grace@uni.edu"] == "Hopper, Grace"
    assert "Hopper, Grace" in (out / "feedback" / "grace@uni.edu.md").read_text(encoding="utf-8")


def test_without_a_roster_the_export_names_its_own_students(tmp_path):
    course = _course(tmp_path)
    cls, out = _export(tmp_path / "download"), tmp_path / "out"
    assert main(["--course", str(course), "grade", str(cls), "--out", str(out), "--jobs", "1"]) == 0
    grades = _grades(out)
    assert {k: (v["name"], v["total"]) for k, v in grades.items()} == {
        "ada@uni.edu": ("Ada Lovelace", "7"), "grace@uni.edu": ("Grace Hopper", "7"), "106223": ("Alan Turing", "7")}


@pytest.mark.parametrize("metadata, said", [
    (METADATA.replace("  :submitters:\n  - :name: Grace", "  :submitters: [\n  - :name: Grace", 1),
     "submission_metadata.yml line "),
    ("- submission_201\n", "submission_metadata.yml line 1: expected submission_<id>: entries"),
    (METADATA.replace("submission_202:\n  :submitters:\n", "submission_202:\n  :people:\n", 1),
     "submission_metadata.yml line 11: submission_202 has no :submitters: list"),
    (METADATA.replace("submission_203:", "../../etc:", 1),
     "submission_metadata.yml line 18: '../../etc' is not a submission_<id> entry"),
])
def test_a_malformed_metadata_file_is_refused_with_its_line_before_anything_is_written(tmp_path, capsys,
                                                                                      metadata, said):
    course = _course(tmp_path)
    cls, out = _export(tmp_path / "download", metadata), tmp_path / "out"
    assert main(["--course", str(course), "grade", str(cls), "--out", str(out), "--layout", "gradescope"]) == 2
    assert said in capsys.readouterr().err
    assert not out.exists()


def test_a_ruby_object_tag_is_read_as_its_plain_value_and_nothing_is_constructed(tmp_path):
    from autograder.intake.gradescope_export import read_export

    path = tmp_path / "submission_metadata.yml"
    path.write_text(METADATA + "submission_204:\n  :submitters: !ruby/array:Array\n  - :email: eve@uni.edu\n"
                    "  :created_at: !!python/object/apply:os.system ['echo owned']\n", encoding="utf-8")
    with pytest.raises(ValueError, match="line 26"):     # python tags stay refused by the safe loader
        read_export(path)
    path.write_text(METADATA + "submission_204:\n  :submitters: !ruby/array:Array\n  - :email: eve@uni.edu\n",
                    encoding="utf-8")
    entries = read_export(path)
    assert [(e.folder, e.submitters[0].key, e.created_at) for e in entries] == [
        ("submission_201", "ada@uni.edu", "2026-03-02T21:14:03.123456-05:00"),
        ("submission_202", "grace@uni.edu", "2026-03-04T10:00:00-05:00"),
        ("submission_203", "106223", "2026-03-02T20:00:00-05:00"),
        ("submission_204", "eve@uni.edu", "")]
