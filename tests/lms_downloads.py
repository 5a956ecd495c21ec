"""Realistic LMS downloads and rosters, built in the tests as each platform's own code writes
them; each builder names the version it stands for and where its format was read.

Canvas (instructure/canvas-lms, current):
  gradebook export    lib/gradebook_exporter.rb: Student ("Last, First"), ID (the user id), SIS User
                      ID, SIS Login ID, Section, the assignments as `Title (id)`, the read-only totals,
                      a "Points Possible" row; the Test Student (a StudentViewEnrollment, no login)
                      after every student
  Download Submissions lib/content_zipper.rb: `lastfirst[_LATE]_<user id>_<attachment id>_<file>`,
                      `..._<user id>_text.html` for a text entry; lastfirst is the sortable name with
                      `_<digits>_` joined, lower case, every non-word character dropped; the file
                      name has `\\/:*?"<>|` turned into `_`. A re-submitted file is `name-1.py`.
Moodle (moodle/moodle):
  Download submissions 3.1 to 4.0, mod/assign/locallib.php download_submissions: a folder per
                      student and plugin, `Full Name_<participant>_assignsubmission_<plugin>_/`;
                      4.1 and later, mod/assign/classes/downloader.php: the same without the
                      trailing `_`; both, with "download as folders" off, flat files
                      `Full Name_<participant>_assignsubmission_<plugin>_<file>`. The full name has
                      each `_` turned into a space, then clean_filename's characters dropped.
                      Online text is the plugin `onlinetext`, its file `onlinetext.html`.
  grading worksheet   "Download grading worksheet": Identifier ("Participant 12345"), Full name, ...
"""

from __future__ import annotations

import csv
import io
import re
import unicodedata
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
    def sortable(self) -> str:
        return f"{self.last}, {self.first}"

    @property
    def full(self) -> str:
        return f"{self.first} {self.last}"

    @property
    def canvas_key(self) -> str:
        return canvas_lastfirst(self.sortable)


def canvas_lastfirst(sortable: str) -> str:
    """ContentZipper's sanitize_user_name, then sanitize_file_name's `[^[[:word:]]]` removal."""
    joined = re.sub(r"_([0-9]+)_", r"\1", sortable).lower()
    return "".join(c for c in joined if c == "_" or c.isalnum() or unicodedata.category(c)[0] == "M")


def moodle_full_name(full: str) -> str:
    """Moodle's prefix: `_` turned into spaces, then clean_filename (PARAM_FILE) drops these."""
    return re.sub(r"[\x00-\x1f\x7f&<>\"`|':\\/]", "", full.replace("_", " "))


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
    """One file of Canvas's Download Submissions (current Canvas, lib/content_zipper.rb)."""
    shown = re.sub(r'[\x00/\\:*?"<>|]+', "_", name)
    path = cls / f"{p.canvas_key}_{'LATE_' if late else ''}{p.canvas_id}_{attachment}_{shown}"
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_bytes(data)
    return path


def canvas_text_entry(cls: Path, p: Enrolled, html: str, late: bool = False) -> Path:
    """A text entry submission in Canvas's download: `lastfirst[_LATE]_<user id>_text.html`."""
    path = cls / f"{p.canvas_key}_{'LATE_' if late else ''}{p.canvas_id}_text.html"
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(html, encoding="utf-8")
    return path


def moodle_folder(cls: Path, p: Enrolled, files: dict[str, bytes], *, version: str = "3.x",
                  plugin: str = "file") -> Path:
    """A student's folder of Moodle's Download submissions: 3.1 to 4.0 (mod/assign/locallib.php)
    end it with `_`, 4.1 and later (mod/assign/classes/downloader.php) do not."""
    trailing = "_" if version == "3.x" else ""
    folder = cls / f"{moodle_full_name(p.full)}_{p.canvas_id}_assignsubmission_{plugin}{trailing}"
    folder.mkdir(parents=True, exist_ok=True)
    for name, data in files.items():
        (folder / name).write_bytes(data)
    return folder


def moodle_flat(cls: Path, p: Enrolled, files: dict[str, bytes], *, plugin: str = "file") -> list[Path]:
    """Moodle's Download submissions with "download as folders" off (every version since 3.1):
    `Full Name_<participant>_assignsubmission_<plugin>_<file>`."""
    cls.mkdir(parents=True, exist_ok=True)
    paths = []
    for name, data in files.items():
        path = cls / f"{moodle_full_name(p.full)}_{p.canvas_id}_assignsubmission_{plugin}_{name}"
        path.write_bytes(data)
        paths.append(path)
    return paths


ONLINE_TEXT = "onlinetext.html"      # assignsubmission_onlinetext's file in the download


def answered(handout: Path, key: dict) -> bytes:
    """The student's own handout file (their numbers) with `key`'s hand answers typed in, rounded
    to 4 decimals as a student would."""
    text = handout.read_text(encoding="utf-8")
    for name, value in key.items():
        text, n = re.subn(rf"^{name} = None.*$", f"{name} = {value.round(4).tolist()}", text, flags=re.M)
        assert n == 1, name
    return text.encode()


def own_answers(course: Path, roster: Path, handouts: Path, ids: list[str]) -> dict[str, bytes]:
    """With variants on: `attnkit handout --roster` into `handouts`, and each of `ids`' handout
    with its own numbers' hand answers typed in (computed in the tests, not by the kit)."""
    from autograder.checks import check_ids
    from autograder.cli import main
    from autograder.config import load_course
    from autograder.variants import variant_for
    from tests.test_variants import _independent_key

    assert main(["--course", str(course), "handout", str(handouts), "--roster", str(roster)]) == 0
    loaded = load_course(course, known_checks=check_ids())
    return {i: answered(unzipped_handout(handouts, i) / f"{HAND}.py", _independent_key(variant_for(loaded, i)))
            for i in ids}


RIGHT = (KIT_ROOT / "solutions" / f"{HAND}.py").read_bytes()


def unzipped_handout(handouts: Path, student: str) -> Path:
    """`attnkit handout --roster`'s OUT/<student>.zip unpacked as the student unpacks it, into
    OUT/<student>/; the handout's folder in it."""
    import zipfile

    with zipfile.ZipFile(handouts / f"{student}.zip") as zf:
        zf.extractall(handouts / student)
        top = zf.namelist()[0].split("/", 1)[0]
    return handouts / student / top
