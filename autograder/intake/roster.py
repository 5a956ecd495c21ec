"""The course's roster (`attnkit grade ... --roster ROSTER.csv`): who each submission belongs to.

Any of the CSV files the platforms export is read, its columns found by their header names
(case, spaces and punctuation ignored):

nbgrader     id, first_name, last_name, email                  (id is the login)
Canvas       Student, ID, SIS User ID, SIS Login ID, ...       (ID is Canvas's user id; the
             "Points Possible" and "Muted" rows under the header are skipped)
Moodle       Identifier ("Participant 12345"), Full name, Email address (the grading
             worksheet), or First name, Last name, Username, ID number, Email address
Gradescope   First Name, Last Name, SID, Email

A submission from an LMS's download is matched by the LMS id its names carry (Canvas's user
id, Moodle's participant number) and nothing else: the rest of those names is the student's own
text. A folder's name (the instructor's or nbgrader's) is matched against the roster's login,
SIS id, email and LMS id, case and Unicode normal form aside; a name that matches two rows is an
error. `enrol` says who each submission is, who on the roster handed in nothing, and which
submissions match no row.

Rows that are no student are kept, marked (`Person.not_a_student`), so that their submissions are
recognised and set aside: Canvas's Test Student (the fake user of Student View, "Student, Test",
which has no login) and, where the roster has a role column (Gradescope's Role, Moodle's
Roles), a row whose role names no student.
"""

from __future__ import annotations

import csv
import io
import re
import unicodedata
from dataclasses import dataclass, field
from pathlib import Path

from autograder.intake.student_csv import csv_text

MAX_BYTES = 16 * 1024 * 1024

# normalised header name -> field, per field in order of preference
COLUMNS = {
    "name": ("name", "fullname", "student", "studentname"),
    "first": ("firstname", "givenname"),
    "last": ("lastname", "surname", "familyname"),
    "login": ("sisloginid", "username", "login", "loginid", "userlogin"),
    "sis_id": ("sisuserid", "sid", "idnumber", "studentid", "studentnumber", "sisid"),
    "lms_id": ("lmsuserid", "canvasid", "userid", "identifier"),
    "email": ("email", "emailaddress", "mail", "sisemail"),
    "role": ("role", "roles", "courserole", "enrollmentrole", "enrollmenttype"),
}
_SKIPPED_ROWS = ("points possible", "muted")      # Canvas's rows under its header
# Canvas's "Student View" user, in the gradebook export of every course where it was used: a
# fake user without a login, never a student.
TEST_STUDENT = ("student, test", "test student")
STUDENT_ROLES = {"student", "students", "studentenrollment", "learner", "learners"}


class RosterError(ValueError):
    """The roster cannot be used; the message names the file and the lines."""


@dataclass(frozen=True)
class Person:
    name: str = ""
    login: str = ""
    sis_id: str = ""
    lms_id: str = ""
    email: str = ""
    line: int = 0           # where in the roster (0: not from a roster)
    # The name's parts where the roster has them in columns (nbgrader, Gradescope, Moodle's
    # participants export); Canvas's "Student" column is already "Last, First".
    first: str = field(default="", compare=False)
    last: str = field(default="", compare=False)
    cells: tuple[str, ...] = field(default=(), compare=False, repr=False)   # the roster's row as read
    not_a_student: str = field(default="", compare=False)    # why the row is no student ("": it is one)

    @property
    def key(self) -> str:
        """The student's id: what `attnkit handout --roster` names their folder and numbers by,
        and what grades.csv calls a row of a person who handed in nothing."""
        return self.login or self.email or self.sis_id or self.lms_id or self.name

    @property
    def listed(self) -> str:
        """The name as a class list shows it, last name first where the roster tells which it is."""
        if self.first and self.last:
            return f"{self.last}, {self.first}"
        return self.name

    @property
    def sort_key(self) -> tuple[str, str, str]:
        """By last name, then first name, then id. A full name alone ("Ada Lovelace", Moodle's
        grading worksheet) is sorted by its last word."""
        if self.last:
            last, first = self.last, self.first
        elif "," in self.name:
            last, _, first = self.name.partition(",")
        else:
            first, _, last = self.name.strip().rpartition(" ")
        return last.strip().casefold(), first.strip().casefold(), self.key.casefold()


@dataclass(frozen=True)
class Claim:
    """Several submissions that claim one student, each graded under its own key."""
    student: str                     # whose: the roster's id, else the LMS's
    shown: str                       # their name
    keys: tuple[str, ...]            # each submission's key
    sources: tuple[str, ...]         # each one in the class folder

    def to_dict(self) -> dict:
        return {"student": self.student, "name": self.shown,
                "submissions": [{"key": k, "from": s} for k, s in zip(self.keys, self.sources)]}


@dataclass(frozen=True)
class Enrolment:
    people: dict[str, Person]                     # submission key -> who it is
    absent: tuple[Person, ...] = ()               # on the roster, no submission
    unmatched: tuple[str, ...] = ()               # submissions matching no roster row
    roster: bool = field(default=False)           # whether a roster was given
    claims: tuple[Claim, ...] = ()                # students several submissions claim
    # Submissions of no student (Canvas's Test Student, a row without a student role), and
    # what of the class folder was graded for nobody: (who or what, why), never graded.
    not_students: tuple[tuple[str, str], ...] = ()
    not_read: tuple[tuple[str, str], ...] = ()

    def person(self, key: str) -> Person:
        return self.people.get(key) or Person(name=key, login=key)

    def shown(self, key: str) -> str:
        """How a page names the student: their name from the roster ("Lovelace, Ada"), else their id."""
        person = self.people.get(key)
        return person.listed if person is not None and person.line and person.listed else key


def _norm(header: str) -> str:
    return re.sub(r"[^a-z0-9]", "", header.lower())


def read_roster(path: Path) -> list[Person]:
    path = Path(path)
    return parse_roster(csv_text(path, RosterError, "the roster", MAX_BYTES), str(path))


def is_canvas(normal: list[str]) -> bool:
    """Canvas's gradebook export, by its header (a TA's export may lack the SIS columns)."""
    return "sisloginid" in normal or "sisuserid" in normal or {"student", "id", "section"} <= set(normal)


def parse_roster(text: str, shown: str = "roster") -> list[Person]:
    reader = csv.reader(io.StringIO(text, newline=""))
    header = next(reader, None)
    if not header:
        raise RosterError(f"{shown}: empty; expected a header row such as id,first_name,last_name,email")
    normal = [_norm(h) for h in header]
    canvas = is_canvas(normal)
    where = {}
    for fld, names in COLUMNS.items():
        where[fld] = next((normal.index(n) for n in names if n in normal), None)
    plain_id = "lms_id" if canvas else "login"      # nbgrader's id is the login; Canvas's ID its user id
    if "id" in normal and where[plain_id] is None:
        where[plain_id] = normal.index("id")
    if all(where[f] is None for f in ("login", "sis_id", "lms_id", "email")):
        raise RosterError(f"{shown} line 1: no column names a student (found {', '.join(header[:8])}); expected "
                          f"one of login/username/SIS Login ID, id, SIS User ID/SID, Email")
    people, problems, seen = [], [], {}
    for row in reader:
        line = reader.line_num
        if not any(cell.strip() for cell in row):
            continue
        if len(row) != len(header):
            problems.append(f"{shown} line {line}: {len(row)} fields, the header has {len(header)}")
            continue
        cells = {f: (row[i].strip() if i is not None else "") for f, i in where.items()}
        if canvas and (row[0].strip().lower().startswith(_SKIPPED_ROWS) or not any(
                cells[f] for f in ("name", "first", "last", "login", "sis_id", "lms_id", "email"))):
            continue      # Canvas's rows under its header name nobody: Points Possible, a posting policy
        name = cells["name"] or " ".join(filter(None, (cells["first"], cells["last"])))
        lms_id = re.sub(r"^participant\s*", "", cells["lms_id"], flags=re.I)
        person = Person(name, cells["login"], cells["sis_id"], lms_id, cells["email"], line,
                        first=cells["first"], last=cells["last"], cells=tuple(row),
                        not_a_student=_not_a_student(canvas, name, cells))
        if not (person.login or person.sis_id or person.lms_id or person.email):
            problems.append(f"{shown} line {line}: no login, SIS id, LMS id or email for {name or 'this row'}")
            continue
        for what in ("login", "sis_id", "lms_id", "email"):
            value = getattr(person, what).lower()
            if value and (what, value) in seen:
                problems.append(f"{shown} line {line}: {what} {getattr(person, what)} is also on line "
                                f"{seen[(what, value)]}")
            elif value:
                seen[(what, value)] = line
        people.append(person)
    if problems:
        more = f" (and {len(problems) - 10} more)" if len(problems) > 10 else ""
        raise RosterError("; ".join(problems[:10]) + more)
    return people


def _not_a_student(canvas: bool, name: str, cells: dict[str, str]) -> str:
    """Why a roster row is no student, from the LMS's own fields ("" when it is one)."""
    if canvas and name.strip().lower() in TEST_STUDENT and not cells["login"]:
        return "Canvas's Test Student (Student View)"
    roles = [_norm(r) for r in re.split(r"[,;/]", cells["role"]) if r.strip()]
    if roles and not STUDENT_ROLES & set(roles):
        return f"role {cells['role']}"
    return ""


def same_id(value: str) -> str:
    """An id as rows and folder names are compared: Unicode's composed form, case folded."""
    return unicodedata.normalize("NFC", value).casefold()


MATCHED_BY = ("lms_id", "login", "sis_id", "email")
SAID = {"lms_id": "LMS id", "login": "login", "sis_id": "SIS id", "email": "email"}


def roster_index(roster: list[Person]) -> dict[tuple[str, str], Person]:
    """(field, id as compared) -> the roster's row."""
    index: dict[tuple[str, str], Person] = {}
    for person in roster:
        for what in MATCHED_BY:
            if getattr(person, what):
                index.setdefault((what, same_id(getattr(person, what))), person)
    return index


def rows_of(student, index: dict[tuple[str, str], Person]) -> list[tuple[str, Person]]:
    """The roster rows a submission names, (by which field, row), each row once: an LMS's
    submission by the LMS id its names carry only; a folder by its name as login, SIS id,
    email or LMS id; one of several claims by the id it claims (Gradescope's email or SID)."""
    if student.lms_id:
        keys = [("lms_id", same_id(student.lms_id))]
    else:
        said = same_id(student.claim_of or student.name)
        keys = [(what, said) for what in ("login", "sis_id", "email", "lms_id")]
    found: list[tuple[str, Person]] = []
    for key in keys:
        person = index.get(key)
        if person is not None and all(p.line != person.line for _, p in found):
            found.append((key[0], person))
    return found


def enrol(students, roster: list[Person] | None) -> Enrolment:
    """Who each of `students` (roster.Student) is. Without a roster, each is their key, and the
    LMS id read from an LMS's file names (Canvas's user id) is kept."""
    if roster is None:
        return Enrolment({s.name: as_named(s) for s in students})
    index = roster_index(roster)
    people, unmatched = {}, []
    for s in students:
        found = rows_of(s, index)
        if not found:
            unmatched.append(s.name)
        people[s.name] = found[0][1] if found else as_named(s)
    matched = {p.line for p in people.values() if p.line}
    absent = tuple(p for p in roster if p.line not in matched and not p.not_a_student)
    return Enrolment(people, absent, tuple(unmatched), roster=True)


def as_named(student) -> Person:
    """Who a submission is without a roster row: its folder's name is the login, unless the name
    came from an LMS's download (then only the LMS id it carries is known)."""
    return Person(name=student.name, login="" if student.lms_id else student.name, lms_id=student.lms_id)
