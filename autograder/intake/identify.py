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

Several submissions that claim one student (one roster row, or one LMS id) are all kept: each is
graded under the key the class folder gave it (its folder's name, `lastfirst_12345`,
`Full Name_12345 (2)`), on that student's numbers, and said (`claims`); none is exported as the
student's, so the LMS keeps its cell until the instructor decides. A submission of no student (its roster row is Canvas's Test Student or has no student
role; without a row, Canvas's download names it as its Test Student) is set aside, never graded.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, replace

from autograder.intake.roster import SAID, Claim, Enrolment, Person, as_named, roster_index, rows_of
from autograder.intake.students import Student
from autograder.judge.words import counted

# An id names files in OUT (results/<id>.json, feedback/<id>.html): nothing that leads out of it.
SAFE_ID = re.compile(r"^[A-Za-z0-9_@+-][A-Za-z0-9._@+-]*$")


class UnknownStudents(ValueError):
    """Variants are on and some submissions cannot be told whose numbers they should hold."""


class AmbiguousIdentity(ValueError):
    """A submission's name matches several roster rows; the message names the lines."""


@dataclass(frozen=True)
class ClassList:
    students: list[Student]            # each named by their identity
    enrolment: Enrolment               # who each is, keyed by identity
    unknown: tuple[Student, ...] = ()  # LMS submissions that match no roster row

    @property
    def claims(self) -> tuple[Claim, ...]:
        return self.enrolment.claims

    def shown(self, student: str) -> str:
        return self.enrolment.shown(student)


def identify(students: list[Student], roster: list[Person] | None, *,
             not_read: tuple[tuple[str, str], ...] = (), roster_name: str = "the roster") -> ClassList:
    """Each of `students` named by their identity, with who they are. `not_read`: what of the class
    folder is graded for nobody (lms.ClassFolder.not_read), carried to the report. Raises
    AmbiguousIdentity when a folder's name matches several roster rows."""
    row_of = _rows(students, roster, roster_name)
    not_students, kept = [], []
    for s in students:
        row = row_of[s.name]
        if row is not None and row.not_a_student:
            not_students.append((f"{row.listed or row.key} ({s.source or s.name})", row.not_a_student))
        elif row is None and s.named_test_student:
            not_students.append((s.source or s.name, "named as Canvas's download names its Test Student (Student "
                                                     "View), and no roster row says it is a student"))
        else:
            kept.append(s)
    groups: dict[tuple, list[Student]] = {}
    for s in kept:
        row = row_of[s.name]
        whose = ("row", row.line) if row is not None else ("lms", s.lms_id) if s.lms_id else ("id", s.claim_of or s.name)
        groups.setdefault(whose, []).append(s)
    named: list[Student] = []
    people: dict[str, Person] = {}
    unmatched: list[str] = []
    singles = sorted((g[0] for g in groups.values() if len(g) == 1), key=lambda s: s.name)
    used = {s.name for s in singles}     # a folder's own key is kept; a row's id never takes another's
    for s in singles:
        row = row_of[s.name]
        ident = row.key if row is not None and SAFE_ID.match(row.key) and row.key not in used else s.name
        used.add(ident)
        if row is None and roster is not None:
            unmatched.append(ident)
        people[ident] = row or as_named(s)
        named.append(replace(s, name=ident, given_as=s.name) if ident != s.name else s)
    claims = []
    for group in sorted((sorted(g, key=lambda s: s.name) for g in groups.values() if len(g) > 1),
                        key=lambda g: g[0].name):
        row = row_of[group[0].name]
        whose = row.key if row is not None else group[0].lms_id or group[0].claim_of or group[0].name
        keys = []
        for s in group:      # each under the key the class folder gave it
            ident = _own(s.name, used)
            keys.append(ident)
            if row is None and roster is not None:
                unmatched.append(ident)
            # No id of the student's: no export writes either claim into the student's LMS cell.
            people[ident] = Person(name=row.name, line=row.line, first=row.first, last=row.last) \
                if row is not None else Person(name=s.name)
            named.append(replace(s, name=ident, given_as=s.name if ident != s.name else s.given_as, claim_of=whose))
        claims.append(Claim(whose, (row.listed or whose) if row is not None else whose, tuple(keys),
                            tuple(s.source or s.name for s in group)))
    taken = {p.line for p in people.values() if p.line}
    absent = tuple(p for p in roster or () if p.line not in taken and not p.not_a_student)
    enrolment = Enrolment(people, absent, tuple(unmatched), roster=roster is not None, claims=tuple(claims),
                          not_students=tuple(not_students), not_read=tuple(not_read))
    unknown = tuple(s for s in named if s.lms_id and not people[s.name].line)
    return ClassList(sorted(named, key=lambda s: s.name), enrolment, unknown)


def _rows(students: list[Student], roster: list[Person] | None, roster_name: str) -> dict[str, Person | None]:
    """Each submission's roster row (None: none); a name that matches several rows is refused."""
    if roster is None:
        return {s.name: None for s in students}
    index = roster_index(roster)
    out, problems = {}, []
    for s in students:
        found = rows_of(s, index)
        if len(found) > 1:
            said = " and ".join(f"line {p.line} ({SAID[what]})" for what, p in found)
            problems.append(f"{roster_name}: {said} both match the submission {s.source or s.name}; whose it is "
                            f"cannot be told")
        out[s.name] = found[0][1] if found else None
    if problems:
        more = f" (and {len(problems) - 10} more)" if len(problems) > 10 else ""
        raise AmbiguousIdentity("; ".join(problems[:10]) + more + ". Make each student's ids their own on the roster. "
                                                                   "Nothing was graded.")
    return out


def _own(name: str, used: set[str]) -> str:
    """`name`, or `name (2)`, `(3)`... when a student's id already is `name`."""
    ident, n = name, 1
    while ident in used:
        n += 1
        ident = f"{name} ({n})"
    used.add(ident)
    return ident


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
                          f"{counted(len(names), 'submission')} should hold; {fix} "
                          f"(docs/variants.md). Nothing was graded.\n  {shown}")
