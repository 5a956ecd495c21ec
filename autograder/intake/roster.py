"""The course's roster (`attnkit grade ... --roster ROSTER.csv`): who each submission belongs to.

Any of the CSV files the platforms export is read, its columns found by their header names
(case, spaces and punctuation ignored):

nbgrader     id, first_name, last_name, email                  (id is the login)
Canvas       Student, ID, SIS User ID, SIS Login ID, ...       (ID is Canvas's user id; the
             "Points Possible" and "Muted" rows under the header are skipped)
Moodle       Identifier ("Participant 12345"), Full name, Email address (the grading
             worksheet), or First name, Last name, Username, ID number, Email address
Gradescope   First Name, Last Name, SID, Email

A submission (its folder's name, or the LMS id read from an LMS's file names) is matched
against the roster's LMS id, login, SIS id and email, in that order. `enrol` says who each
submission is, who on the roster handed in nothing, and which submissions match no row.
"""

from __future__ import annotations

import csv
import io
import re
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
}
_SKIPPED_ROWS = ("points possible", "muted")      # Canvas's rows under its header
# Canvas's "Student View" user, in every course's gradebook export: never a student.
TEST_STUDENT = ("student, test", "test student")


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
class Enrolment:
    people: dict[str, Person]                     # submission key -> who it is
    absent: tuple[Person, ...] = ()               # on the roster, no submission
    unmatched: tuple[str, ...] = ()               # submissions matching no roster row
    roster: bool = field(default=False)           # whether a roster was given

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
        if canvas and (cells["name"].strip().lower().startswith(_SKIPPED_ROWS)
                       or cells["name"].strip().lower() in TEST_STUDENT):
            continue
        name = cells["name"] or " ".join(filter(None, (cells["first"], cells["last"])))
        lms_id = re.sub(r"^participant\s*", "", cells["lms_id"], flags=re.I)
        person = Person(name, cells["login"], cells["sis_id"], lms_id, cells["email"], line,
                        first=cells["first"], last=cells["last"], cells=tuple(row))
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


def enrol(students, roster: list[Person] | None) -> Enrolment:
    """Who each of `students` (roster.Student) is. Without a roster, each is their key, and the
    LMS id read from an LMS's file names (Canvas's user id) is kept."""
    if roster is None:
        return Enrolment({s.name: _as_named(s) for s in students})
    index: dict[tuple[str, str], Person] = {}
    for person in roster:
        for what in ("lms_id", "login", "sis_id", "email"):
            if getattr(person, what):
                index.setdefault((what, getattr(person, what).lower()), person)
    people, unmatched = {}, []
    for s in students:
        keys = [("lms_id", s.lms_id.lower())] if s.lms_id else []
        keys += [(what, s.name.lower()) for what in ("login", "sis_id", "email", "lms_id")]
        person = next((index[k] for k in keys if k in index), None)
        if person is None:
            unmatched.append(s.name)
        people[s.name] = person or _as_named(s)
    matched = {p.line for p in people.values() if p.line}
    absent = tuple(p for p in roster if p.line not in matched)
    return Enrolment(people, absent, tuple(unmatched), roster=True)


def _as_named(student) -> Person:
    """Who a submission is without a roster row: its folder's name is the login, unless the name
    came from an LMS's download (then only the LMS id it carries is known)."""
    return Person(name=student.name, login="" if student.lms_id else student.name, lms_id=student.lms_id)
