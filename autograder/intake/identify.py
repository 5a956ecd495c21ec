"""One identity per student, resolved once from the class folder's layout and the roster.

The identity is what everything keyed on a student uses: OUT/results/<id>.json and the feedback
pages, the variant whose numbers are graded (course.yml `variants:`), the integrity flags, the
code similarity, the report and the exports. It is the id `attnkit handout --roster` and
`attnkit variants --roster` give the same student (roster.Person.key: the login, else the
email, SIS id or LMS id), so a per-student handout is graded on the numbers it was made with:

- a submission matched to a roster row (by the LMS id its file names carry, Canvas's user id or
  Moodle's participant number, else by its folder's name against login, SIS id and email) is
  that row's id;
- a student folder matching no row, and any folder without a roster, is its folder's name
  (nbgrader's student id, a hub's login);
- an LMS download's submission matching no row is known by the LMS's key only (`lastfirst_12345`):
  graded under it, but with variants on nobody can tell whose numbers it should hold (`unknown`).
"""

from __future__ import annotations

import re
from collections import Counter
from dataclasses import dataclass, replace

from autograder.intake.roster import Enrolment, Person, enrol
from autograder.intake.students import Student

# An id names files in OUT (results/<id>.json, feedback/<id>.html): nothing that leads out of it.
SAFE_ID = re.compile(r"^[A-Za-z0-9_@+-][A-Za-z0-9._@+-]*$")


class UnknownStudents(ValueError):
    """Variants are on and some submissions cannot be told whose numbers they should hold."""


@dataclass(frozen=True)
class ClassList:
    students: list[Student]            # each named by their identity
    enrolment: Enrolment               # who each is, keyed by identity
    unknown: tuple[Student, ...] = ()  # LMS submissions that match no roster row
    shared: tuple[str, ...] = ()       # roster rows that several submissions match (said, not guessed)

    def shown(self, student: str) -> str:
        return self.enrolment.shown(student)


def identify(students: list[Student], roster: list[Person] | None) -> ClassList:
    """Each of `students` named by their identity, with who they are."""
    found = enrol(students, roster)
    rows = Counter(found.people[s.name].line for s in students if found.people[s.name].line)
    shared = tuple(f"roster line {line} ({_person_at(found, students, line).listed}) matches "
                   f"{', '.join(s.name for s in students if found.people[s.name].line == line)}"
                   for line, n in sorted(rows.items()) if n > 1)
    named, people, unmatched, used = [], {}, [], set()
    for s in students:
        person = found.people[s.name]
        matched = bool(person.line) and rows[person.line] == 1
        ident = person.key if matched and SAFE_ID.match(person.key) and person.key not in used else s.name
        used.add(ident)
        if not matched and roster is not None:
            unmatched.append(ident)
            person = Person(name=s.name, login="" if s.lms_id else s.name, lms_id=s.lms_id)
        people[ident] = person
        named.append(replace(s, name=ident, given_as=s.name) if ident != s.name else s)
    matched_lines = {p.line for p in people.values() if p.line}
    absent = tuple(p for p in roster or () if p.line not in matched_lines)
    enrolment = Enrolment(people, absent, tuple(unmatched), roster=roster is not None)
    unknown = tuple(s for s in named if s.lms_id and not people[s.name].line)
    return ClassList(sorted(named, key=lambda s: s.name), enrolment, unknown, shared)


def _person_at(found: Enrolment, students: list[Student], line: int) -> Person:
    return next(found.people[s.name] for s in students if found.people[s.name].line == line)


def refuse_unknown(class_list: ClassList, variants_on: bool, roster_given: bool) -> None:
    """With variants on, a submission whose identity is only an LMS's key would be graded on the
    numbers of nobody's handout (and its right answers flagged as someone else's): refused
    before anything is graded or written."""
    if not variants_on or not class_list.unknown:
        return
    names = [s.name for s in class_list.unknown]
    shown = "\n  ".join(names[:20]) + (f"\n  ... and {len(names) - 20} more" if len(names) > 20 else "")
    fix = ("they match no row of the roster: add them, or grade them apart" if roster_given else
           "an LMS's download names students by the LMS's number only: give --roster ROSTER.csv, the roster "
           "the handouts were made from")
    raise UnknownStudents(f"variants are on (course.yml variants:) and nobody can tell whose numbers "
                          f"{len(names)} submission{'s' if len(names) != 1 else ''} should hold; {fix} "
                          f"(docs/variants.md). Nothing was graded.\n  {shown}")
