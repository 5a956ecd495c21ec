"""Code similarity across a class: pairs of submissions whose code is unusually alike, for the
instructor to look at. A signal, never a grade: nothing here reads or changes a score.

Per exercise whose graded names are functions (the hand computation's answers are numbers, and
right answers are alike by design), each student's graded code is fingerprinted
(integrity/fingerprint.py: names, layout and library spellings normalised, code that never runs
and the stub's code removed) and two submissions are compared on what they share. A fingerprint
counts by how rare it is in the class (log((n + 1) / number of submissions holding it)): code
every solution of the exercise writes (`self.W_q = nn.Linear(d_model, d_model)`) says little,
code two students alone share says much. A side's similarity is the rarity-weighted part of its
own fingerprints found in the other's; a pair's score is the larger of the two, the share of the
smaller submission found in the larger, which code added to either cannot lower. A pair is listed
when it reaches SIMILAR and they share at least MIN_SHARED fingerprints.
benchmarks/bench_similarity.py measures both thresholds on independent solutions and on copies
disguised, padded and respelled.

Candidate pairs come from an index of fingerprints to submissions, skipping fingerprints that
more than `common_limit(n)` submissions hold (MOSS does the same), so the work grows mostly with what
pairs share, not with the square of the class. Files handed in by several (a posted solution, a
tutorial copied whole) are fingerprinted and compared once, as a group; a student's pairs are made
from the groups alike to theirs and only the most alike are kept: a large class with groups of
copies makes many pairs, and is compared in memory that grows with the groups rather than with
the pairs (benchmarks/bench_growth.py measures it).
"""

from __future__ import annotations

import ast
import hashlib
import sys
import zlib
from collections import defaultdict
from collections.abc import Callable, Iterable
from dataclasses import dataclass

import numpy as np

from autograder.judge.syntax import parse
from autograder.integrity.excerpt import ExcerptLine, excerpt_of, shared_lines
from autograder.integrity.fingerprint import Fingerprint, fingerprint, normalise, shared_slices
from autograder.integrity.made import Made, stub_given
from autograder.integrity.side_details import PAIRS_AT_ONCE, SideDetails

SIMILAR = 0.80          # the smaller submission's rarity-weighted share of its fingerprints found in the other
MIN_SHARED = 12         # fingerprints two submissions must share (about three lines of code)
COMMON_FLOOR, COMMON_FRACTION = 20, 0.10    # held by more submissions than this: not used to find pairs


@dataclass(frozen=True)
class Submitted:
    """One student's graded code for one exercise (a notebook's code cells, joined)."""
    student: str
    exercise: str
    file: str
    source: str




@dataclass(frozen=True)
class Side:
    student: str
    file: str
    similarity: float                      # rarity-weighted share of its own fingerprints in the other's
    fragments: tuple[tuple[int, int], ...]  # (first line, last line) of each shared fragment
    excerpt: tuple[ExcerptLine, ...]


@dataclass(frozen=True)
class ExerciseMatch:
    exercise: str
    score: float            # the larger side's similarity: the smaller submission's share found in the other
    shared: int             # fingerprints both hold
    sides: tuple[Side, Side]


@dataclass(frozen=True)
class SimilarPair:
    students: tuple[str, str]
    matches: tuple[ExerciseMatch, ...]       # the exercises where the two are alike, most alike first

    @property
    def score(self) -> float:
        return max(m.score for m in self.matches)

    def to_dict(self, lines: dict[ExcerptLine, dict] | None = None) -> dict:
        """As summary.json holds it. `lines`: the excerpt lines made before, for pairs listed
        together to share: the listed pairs of a class of copies show the same lines again and
        again (made for each pair, they were a large part of the grader's memory at a large class)."""
        lines = {} if lines is None else lines

        def line(e: ExcerptLine) -> dict:
            if e not in lines:
                lines[e] = {"line": e.number, "text": e.text, "shared": e.shared}
            return lines[e]

        return {"students": list(self.students), "score": round(self.score, 3), "exercises": [
            {"exercise": m.exercise, "score": round(m.score, 3), "shared_fingerprints": m.shared,
             "sides": [{"student": s.student, "file": s.file, "similarity": round(s.similarity, 3),
                        "fragments": [list(f) for f in s.fragments],
                        "excerpt": [line(e) for e in s.excerpt]}
                       for s in m.sides]}
            for m in self.matches]}


def compared_exercises(stubs: dict[str, str], graded_names: dict[str, Iterable[str]]) -> list[str]:
    """The exercises whose graded names the stub defines as functions or classes (code to write)."""
    compared = []
    for exercise, stub in stubs.items():
        try:
            tree = parse(stub)
        except SyntaxError:
            continue
        defined = {n.name for n in tree.body if isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef))}
        if defined & set(graded_names.get(exercise, ())):
            compared.append(exercise)
    return compared


def pair_score(sim_a: float, sim_b: float) -> float:
    """The share of the smaller submission's code found in the other: the larger of the two sides'
    shares (both count the same shared code, over less of its own on the smaller side). Code added
    to either side cannot lower it."""
    return max(sim_a, sim_b)


def common_limit(n: int) -> int:
    return max(COMMON_FLOOR, int(COMMON_FRACTION * n))


def similar_pairs(submitted: Iterable[Submitted], stubs: dict[str, str], limit: int | None = None,
                  made: ClassPrints | None = None) -> tuple[list[SimilarPair], int]:
    """The pairs of students whose code is unusually alike in some exercise of `stubs` (exercise ->
    the stub's code, excluded), most alike first: the first `limit` with their shared fragments,
    and how many pairs there are in all. `made`: fingerprints made before (of the same stubs),
    to which `submitted` is added."""
    made = ClassPrints(stubs) if made is None else made
    made.add(submitted)
    prints = made.by_exercise()
    students = sorted({p.student for items in prints.values() for p in items})
    number = {student: i for i, student in enumerate(students)}
    exercises = [_ExerciseLinks(items, [number[p.student] for p in items], len(students))
                 for items in prints.values()]
    # A student's pairs are made from the groups alike to theirs, one student at a time, and only
    # the first `limit` are kept: a class of copies makes many pairs from a few groups, and the
    # memory grows with the groups, not with the pairs.
    ranking = _Ranking(limit)
    for a in range(len(students)):
        ranking.add(a, *_alike_after(a, exercises))
    details = SideDetails(made)
    listed = ranking.first()
    pairs = []
    for start in range(0, len(listed), PAIRS_AT_ONCE):
        some = [(a, b, sorted((f for e in exercises for f in (e.found(a, b),) if f is not None), key=lambda f: -f.score))
                for a, b in listed[start:start + PAIRS_AT_ONCE]]
        details.prepare([side for _, _, found in some for f in found for side in (f.a, f.b)])
        pairs.extend(SimilarPair((students[a], students[b]), tuple(_match(f, details) for f in found))
                     for a, b, found in some)
    return pairs, ranking.counted


class ClassPrints:
    """A class's fingerprints, by student, made as the code comes (`add`). A class run adds each
    student as it records their grade, while the lanes' children run, rather than the whole class
    at the end on one core. Fingerprinted as read: the class's code is not held (only
    compressed, or, with `reread`, not at all: the listed pairs' files are read again for their
    excerpts); a file handed in by several is fingerprinted once and held once. One thread adds."""

    def __init__(self, stubs: dict[str, str], reread: Callable[[_Print], str | None] | None = None,
                 details: Callable[[list[_Print]], list[tuple[str, np.ndarray, Fingerprint] | None]] | None = None):
        self.given, self.excluded = {}, {}
        for exercise, stub in stubs.items():
            self.given[exercise], self.excluded[exercise] = stub_given(stub)
        self.reread = reread
        # Listed sides' sources, tokens' lines and fingerprints made again, in their order (None: in
        # this process, from each source; a class run's, in bounded children: integrity/class_code.py).
        self.details = details
        # Held all run, per file handed in: keyed by one digest of exercise and text, the
        # hashes (None: nothing to compare), the text only without `reread`, file names interned;
        # one array per distinct fingerprint (copies differing in a comment or a name share it).
        self._copies: dict[bytes, np.ndarray | None] = {}
        self._held: dict[bytes, bytes] = {}
        self._distinct: dict[bytes, np.ndarray] = {}
        self._by_student: dict[str, list[_Print]] = {}

    def add(self, submitted: Iterable[Submitted | Made]) -> None:
        for item in submitted:
            found = self._made(item) if isinstance(item, Made) else self._print(item)
            if found is not None:
                self._by_student.setdefault(item.student, []).append(found)

    def drop(self, student: str) -> None:
        """Forgets what was added for `student` (graded again)."""
        self._by_student.pop(student, None)

    def by_exercise(self) -> dict[str, list[_Print]]:
        """Each exercise's fingerprints, by student."""
        prints: dict[str, list[_Print]] = defaultdict(list)
        for items in self._by_student.values():
            for p in items:
                prints[p.exercise].append(p)
        return {exercise: sorted(items, key=lambda p: p.student) for exercise, items in prints.items()}

    def source(self, p: _Print) -> str:
        """The file's text: as held, or as read again now ("" when it cannot be)."""
        if p.compressed is not None:
            return zlib.decompress(p.compressed).decode("utf-8", "surrogatepass")
        return (self.reread(p) if self.reread is not None else None) or ""

    def _print(self, item: Submitted) -> _Print | None:
        if item.exercise not in self.given:
            return None
        raw = item.source.encode("utf-8", "surrogatepass")
        key = hashlib.sha256(item.exercise.encode("utf-8", "surrogatepass") + b"\0" + raw).digest()
        if key not in self._copies:
            tokens = normalise(item.source, self.given[item.exercise])
            fp = fingerprint(tokens, self.excluded[item.exercise]) if tokens is not None else None
            self._copies[key] = None if fp is None or fp.empty else self._shared(fp.hashes)
            if self._copies[key] is not None and self.reread is None:
                self._held[key] = zlib.compress(raw)
        hashes = self._copies[key]
        if hashes is None:
            return None
        return _Print(item.student, item.exercise, sys.intern(item.file), key, self._held.get(key), hashes)

    def _made(self, item: Made) -> _Print | None:
        if item.exercise not in self.given:
            return None
        if item.digest not in self._copies:
            self._copies[item.digest] = None if item.hashes is None or not len(item.hashes) else self._shared(item.hashes)
        hashes = self._copies[item.digest]
        if hashes is None:
            return None
        return _Print(item.student, item.exercise, sys.intern(item.file), item.digest, None, hashes)

    def _shared(self, hashes: np.ndarray) -> np.ndarray:
        return self._distinct.setdefault(hashlib.sha256(hashes.tobytes()).digest(), hashes)


@dataclass(slots=True)         # one per student and exercise: thousands
class _Print:
    student: str
    exercise: str
    file: str
    digest: bytes               # sha256 of the exercise and the source (copies share it)
    compressed: bytes | None    # the source, for the excerpts of the pairs listed (shared by copies); None: read again
    hashes: np.ndarray          # the fingerprint's hashes, sorted, unique: all that finding pairs needs


@dataclass
class _Found:
    a: _Print
    b: _Print
    sim_a: float
    sim_b: float

    @property
    def score(self) -> float:
        return pair_score(self.sim_a, self.sim_b)


class _ExerciseLinks:
    """One exercise's alike submissions as groups of copies (one fingerprint several hold) and the
    pairs of groups that are alike, with a student's group found by their number."""

    def __init__(self, prints: list[_Print], numbers: list[int], students: int):
        self.prints = prints
        members, self.links = _alike_groups(prints)
        numbers_of = np.array(numbers, dtype=np.int32)
        self.members = [numbers_of[m] for m in members]       # ascending: prints are sorted by student
        self.print_of = np.full(students, -1, dtype=np.int32)
        self.print_of[numbers_of] = np.arange(len(prints), dtype=np.int32)
        self.group_of = np.full(students, -1, dtype=np.int32)
        for g, m in enumerate(self.members):
            self.group_of[m] = g
        self.alike: dict[int, list[tuple[int, float]]] = defaultdict(list)    # group -> (group, score)
        for (x, y), (sim_x, sim_y) in self.links.items():
            self.alike[x].append((y, pair_score(sim_x, sim_y)))
            if y != x:
                self.alike[y].append((x, pair_score(sim_x, sim_y)))

    def found(self, a: int, b: int) -> _Found | None:
        """Students a and b's match here, if they are alike."""
        i, j = int(self.print_of[a]), int(self.print_of[b])
        if i < 0 or j < 0:
            return None
        x, y = int(self.group_of[a]), int(self.group_of[b])
        link = self.links.get((min(x, y), max(x, y)))
        if link is None:
            return None
        sim_a, sim_b = link if x <= y else link[::-1]
        return _Found(self.prints[i], self.prints[j], sim_a, sim_b)


def _alike_after(a: int, exercises: list[_ExerciseLinks]) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Student a's partners after a (by number): each partner, their best score over the exercises
    and in how many exercises the two are alike."""
    partners, scores = [], []
    for e in exercises:
        g = int(e.group_of[a])
        for h, score in (e.alike.get(g, ()) if g >= 0 else ()):
            m = e.members[h]
            m = m[np.searchsorted(m, a, side="right"):]
            if len(m):
                partners.append(m)
                scores.append(np.full(len(m), score))
    if len(partners) < 2:          # one group's members: one each, in order
        return (partners[0], scores[0], np.ones(len(partners[0]), dtype=np.int64)) if partners else _NO_PARTNERS
    partner, score = np.concatenate(partners), np.concatenate(scores)
    order = np.argsort(partner, kind="stable")
    partner, score = partner[order], score[order]
    new = np.empty(len(partner), dtype=bool)
    new[0], new[1:] = True, partner[1:] != partner[:-1]
    first = np.flatnonzero(new)
    return partner[first], np.maximum.reduceat(score, first), np.diff(np.append(first, len(partner)))


_NO_PARTNERS = (np.zeros(0, dtype=np.int32), np.zeros(0), np.zeros(0, dtype=np.int64))


class _Ranking:
    """Pairs of students (a < b by number: by name), most alike first, then alike in more
    exercises, then by name; only the first `limit` kept (all with None), and how many were
    counted."""

    def __init__(self, limit: int | None):
        self.limit, self.counted = limit, 0
        self._parts: list[tuple[np.ndarray, ...]] = []
        self._held = 0
        self._last: tuple[float, int] | None = None    # the last kept pair's (best, matched), `limit` kept

    def add(self, a: int, b: np.ndarray, best: np.ndarray, matched: np.ndarray) -> None:
        self.counted += len(b)
        if self._last is not None and len(b):       # a comes after every kept pair's: only ranking before it enters
            lowest, fewest = self._last
            keep = (best > lowest) | ((best == lowest) & (matched > fewest))
            b, best, matched = b[keep], best[keep], matched[keep]
        if len(b):
            self._parts.append((np.full(len(b), a, dtype=np.int32), b, best, matched))
            self._held += len(b)
        if self.limit is not None and self._held > max(4 * self.limit, 4096):
            self._cut()

    def first(self) -> list[tuple[int, int]]:
        self._cut()
        if not self._parts:
            return []
        a, b, _, _ = self._parts[0]
        return list(zip(a.tolist(), b.tolist()))

    def _cut(self) -> None:
        if not self._parts:
            return
        a, b, best, matched = (np.concatenate(column) for column in zip(*self._parts))
        order = np.lexsort((b, a, -matched, -best))[:self.limit]
        self._parts = [(a[order], b[order], best[order], matched[order])]
        self._held = len(order)
        if self.limit and len(order) == self.limit:
            self._last = float(best[order[-1]]), int(matched[order[-1]])


def _alike_groups(prints: list[_Print]) -> tuple[list[np.ndarray], dict[tuple[int, int], tuple[float, float]]]:
    """One exercise's submissions grouped by fingerprint (copies of one file: one group, indices
    into `prints`), and the pairs of groups that are alike (x <= y; x == y: the group's copies alike
    with each other) with each side's similarity, scored without their fragments.

    Copies are compared once, as one fingerprint several submissions hold: a class where many hand
    in one file makes many pairs, not many comparisons."""
    groups: dict[bytes, list[int]] = {}
    for i, p in enumerate(prints):
        groups.setdefault(p.hashes.tobytes(), []).append(i)
    members = [np.array(m, dtype=np.int32) for m in groups.values()]
    n = len(prints)
    if n < 2:
        return members, {}
    unique = [prints[int(m[0])].hashes for m in members]
    u = len(unique)
    holders = np.array([len(m) for m in members])
    hashes = np.concatenate(unique)
    owners = np.repeat(np.arange(u), [len(h) for h in unique])
    order = np.argsort(hashes, kind="stable")
    hashes, owners = hashes[order], owners[order]
    distinct, first, spread = np.unique(hashes, return_index=True, return_counts=True)
    held = np.add.reduceat(holders[owners], first)         # submissions holding each, copies counted
    weight = np.log((n + 1) / held)                       # the rarer, the more it says
    totals = np.bincount(owners, weights=np.repeat(weight, spread), minlength=u)
    usable = (held > 1) & (held <= common_limit(n))        # shared, and not by everyone
    starts, ends = first.tolist(), (first + spread).tolist()
    links: dict[tuple[int, int], tuple[float, float]] = {}
    for x, h in enumerate(unique):     # x's partners, counted over its usable fingerprints
        at = np.searchsorted(distinct, h)
        at = at[usable[at]]
        if len(at) < MIN_SHARED:
            continue
        if len(members[x]) > 1:        # copies of one file: alike in everything
            sim = min(1.0, float(weight[np.searchsorted(distinct, h)].sum()) / float(totals[x]))
            if sim >= SIMILAR:
                links[(x, x)] = (sim, sim)
        partners = np.concatenate([owners[starts[k]:ends[k]] for k in at.tolist()])
        counts = np.bincount(partners, minlength=u)
        for y in np.flatnonzero(counts[x + 1:] >= MIN_SHARED) + x + 1:
            y = int(y)
            shared = np.intersect1d(h, unique[y], assume_unique=True)
            common_weight = float(weight[np.searchsorted(distinct, shared)].sum())
            sim_x, sim_y = (min(1.0, common_weight / float(totals[z])) for z in (x, y))    # sums in two orders
            if pair_score(sim_x, sim_y) >= SIMILAR:
                links[(x, y)] = (sim_x, sim_y)
    return members, links


def _match(found: _Found, details: SideDetails) -> ExerciseMatch:
    """A match with its shared fragments: line ranges and an excerpt of each side."""
    (source_a, lines_a, fp_a), (source_b, lines_b, fp_b) = details(found.a), details(found.b)
    shared = np.intersect1d(fp_a.hashes, fp_b.hashes, assume_unique=True)
    slices = shared_slices(fp_a, fp_b, shared)
    sides = tuple(Side(p.student, p.file, sim, fragments, excerpt_of(source, fragments))
                  for p, sim, part, lines, source in zip((found.a, found.b), (found.sim_a, found.sim_b), slices,
                                                         (lines_a, lines_b), (source_a, source_b))
                  for fragments in (shared_lines(lines, part),))
    return ExerciseMatch(found.a.exercise, found.score, len(shared), sides)
