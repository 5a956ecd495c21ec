"""Realistic LMS downloads and rosters, built in the tests: Canvas's gradebook export (its
"Points Possible" row, its read-only columns, its Test Student), Canvas's "Download Submissions"
file names (`lastfirst_[LATE_]userid_attachmentid_name`, a re-submission renamed `name-1.py`),
Moodle's grading worksheet and its "Download all submissions" folders
(`Full Name_participantid_assignsubmission_file_/`)."""

from __future__ import annotations

import csv
import io
import re
from dataclasses import dataclass
from pathlib import Path

from autograder.config import KIT_ROOT

HAND = "hand_computation"
LAB = "Self-Attention Lab (881245)"


@dataclass(frozen=True)
class Enrolled:
    first: str
    last: str
    canvas_id: str           # Canvas's user id ("ID"); Moodle's participant number
    sis_id: str
    login: str
    section: str = "Section 001"

    @property
    def email(self) -> str:
        return f"{self.login}@uni.edu"

    @property
    def canvas_key(self) -> str:
        return f"{self.last}{self.first}".lower().replace(" ", "")


def canvas_gradebook(people: list[Enrolled], *, test_student: bool = True, lab_points: str = "100.00") -> str:
    """Canvas's gradebook export as it downloads it: the assignments with their ids, the read-only
    totals, the "Points Possible" row, every student's Section, Canvas's Test Student."""
    header = ["Student", "ID", "SIS User ID", "SIS Login ID", "Section", "Quiz 1 (881240)", LAB,
              "Current Score", "Unposted Current Score", "Final Score", "Unposted Final Score"]
    rows = [header, ["    Points Possible", "", "", "", "", "10.00", lab_points, "(read only)", "(read only)",
                     "(read only)", "(read only)"]]
    for p in people:
        rows.append([f"{p.last}, {p.first}", p.canvas_id, p.sis_id, p.login, p.section, "8.00", "", "80.00", "80.00",
                     "40.00", "40.00"])
    if test_student:
        rows.append(["Student, Test", "999001", "", "", "Section 001", "", "", "", "", "", ""])
    return _csv(rows)


def moodle_worksheet(people: list[Enrolled], submitted: dict[str, str] | None = None,
                     online_text: dict[str, str] | None = None) -> str:
    """Moodle's "Download grading worksheet" for an assignment (mod/assign/gradingtable.php): its
    times as userdate() writes them, in the downloading teacher's zone and without saying which;
    "-" where there is none. `submitted`: login -> "Last modified (submission)" (default "Monday,
    2 March 2026, 9:12 AM"); `online_text`: login -> the online text submission plugin's column,
    the student's own words (the column is there when given)."""
    rows = [["Identifier", "Full name", "Email address", "Status", "Grade", "Maximum Grade", "Grade can be changed",
             "Last modified (submission)", *(["Online text"] if online_text is not None else []),
             "Last modified (grade)", "Feedback comments"]]
    for p in people:
        when = (submitted or {}).get(p.login, "Monday, 2 March 2026, 9:12 AM")
        text = [(online_text or {}).get(p.login, "")] if online_text is not None else []
        rows.append([f"Participant {p.canvas_id}", f"{p.first} {p.last}", p.email, "Submitted for grading", "",
                     "100.00", "Yes", when, *text, "-", ""])
    return _csv(rows)


def _csv(rows: list[list[str]]) -> str:
    buf = io.StringIO()
    csv.writer(buf, lineterminator="\n").writerows(rows)
    return buf.getvalue()


def canvas_file(cls: Path, p: Enrolled, attachment: int, name: str, data: bytes, late: bool = False) -> Path:
    path = cls / f"{p.canvas_key}_{'LATE_' if late else ''}{p.canvas_id}_{attachment}_{name}"
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_bytes(data)
    return path


def moodle_folder(cls: Path, p: Enrolled, files: dict[str, bytes]) -> Path:
    folder = cls / f"{p.first} {p.last}_{p.canvas_id}_assignsubmission_file_"
    folder.mkdir(parents=True, exist_ok=True)
    for name, data in files.items():
        (folder / name).write_bytes(data)
    return folder


def answered(handout: Path, key: dict) -> bytes:
    """The student's own handout file (their numbers) with `key`'s hand answers typed in, rounded
    to 4 decimals as a student would."""
    text = handout.read_text(encoding="utf-8")
    for name, value in key.items():
        text, n = re.subn(rf"^{name} = None.*$", f"{name} = {value.round(4).tolist()}", text, flags=re.M)
        assert n == 1, name
    return text.encode()


RIGHT = (KIT_ROOT / "solutions" / f"{HAND}.py").read_bytes()


def unzipped_handout(handouts: Path, student: str) -> Path:
    """`attnkit handout --roster`'s OUT/<student>.zip unpacked as the student unpacks it, into
    OUT/<student>/; the handout's folder in it."""
    import zipfile

    with zipfile.ZipFile(handouts / f"{student}.zip") as zf:
        zf.extractall(handouts / student)
        top = zf.namelist()[0].split("/", 1)[0]
    return handouts / student / top
