"""Code similarity across a class: pairs of submissions whose code is unusually alike, for the
instructor to look at. A signal, never a grade: nothing here reads or changes a score.

Per exercise whose graded names are functions (the hand computation's answers are numbers, and
right answers are alike by design), each student's graded code is fingerprinted
(integrity/fingerprint.py: names and layout normalised, the stub's code removed) and two
submissions are compared on what they share. A fingerprint counts by how rare it is in the class
(log((n + 1) / number of submissions holding it)): code every solution of the exercise writes
(`self.W_q = nn.Linear(d_model, d_model)`) says little, code two students alone share says much.
A side's similarity is the rarity-weighted part of its own fingerprints found in the other's; a
pair is listed when both sides reach SIMILAR (so a short file wholly inside a long one is not
enough) and they share at least MIN_SHARED fingerprints. benchmarks/bench_similarity.py measures
both thresholds on independent solutions and on disguised copies.

Candidate pairs come from an index of fingerprints to submissions, skipping fingerprints that
more than `common_limit(n)` submissions hold (MOSS does the same), so the work grows mostly with what
pairs share, not with the square of the class.
"""

from __future__ import annotations

import ast
import zlib
from collections import defaultdict
from collections.abc import Iterable
from dataclasses import dataclass

import numpy as np

from autograder.integrity.fingerprint import (Fingerprint, boilerplate, fingerprint, given_statements, normalise,
                                              shared_slices)

SIMILAR = 0.55          # a side's rarity-weighted share of its own fingerprints found in the other
MIN_SHARED = 12         # fingerprints two submissions must share (about three lines of code)
COMMON_FLOOR, COMMON_FRACTION = 20, 0.10    # held by more submissions than this: not used to find pairs
CONTEXT_LINES = 1       # lines shown around a shared fragment
EXCERPT_LINES = 120     # lines shown of one side of one exercise, at most


@dataclass(frozen=True)
class Submitted:
    """One student's graded code for one exercise (a notebook's code cells, joined)."""
    student: str
    exercise: str
    file: str
    source: str


@dataclass(frozen=True)
class ExcerptLine:
    number: int | None      # None: lines left out here
    text: str = ""
    shared: bool = False


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
    score: float            # the smaller side's similarity
    shared: int             # fingerprints both hold
    sides: tuple[Side, Side]


@dataclass(frozen=True)
class SimilarPair:
    students: tuple[str, str]
    matches: tuple[ExerciseMatch, ...]       # the exercises where the two are alike, most alike first

    @property
    def score(self) -> float:
        return max(m.score for m in self.matches)

    def to_dict(self) -> dict:
        return {"students": list(self.students), "score": round(self.score, 3), "exercises": [
            {"exercise": m.exercise, "score": round(m.score, 3), "shared_fingerprints": m.shared,
             "sides": [{"student": s.student, "file": s.file, "similarity": round(s.similarity, 3),
                        "fragments": [list(f) for f in s.fragments],
                        "excerpt": [{"line": e.number, "text": e.text, "shared": e.shared} for e in s.excerpt]}
                       for s in m.sides]}
            for m in self.matches]}


def compared_exercises(stubs: dict[str, str], graded_names: dict[str, Iterable[str]]) -> list[str]:
    """The exercises whose graded names the stub defines as functions or classes (code to write)."""
    compared = []
    for exercise, stub in stubs.items():
        try:
            tree = ast.parse(stub)
        except SyntaxError:
            continue
        defined = {n.name for n in tree.body if isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef))}
        if defined & set(graded_names.get(exercise, ())):
            compared.append(exercise)
    return compared


def common_limit(n: int) -> int:
    return max(COMMON_FLOOR, int(COMMON_FRACTION * n))


def similar_pairs(submitted: Iterable[Submitted], stubs: dict[str, str],
                  limit: int | None = None) -> tuple[list[SimilarPair], int]:
    """The pairs of students whose code is unusually alike in some exercise of `stubs` (exercise ->
    the stub's code, excluded), most alike first: the first `limit` with their shared fragments,
    and how many pairs there are in all."""
    excluded = {exercise: boilerplate([stub]) for exercise, stub in stubs.items()}
    given = {exercise: given_statements(stub) for exercise, stub in stubs.items()}
    prints: dict[str, list[_Print]] = defaultdict(list)
    for item in submitted:       # fingerprinted as read: the class's code is not held, only compressed
        if item.exercise in stubs:
            tokens = normalise(item.source, given[item.exercise])
            fp = fingerprint(tokens, excluded[item.exercise]) if tokens is not None else None
            if fp is not None and not fp.empty:
                prints[item.exercise].append(_Print(item.student, item.exercise, item.file,
                                                    zlib.compress(item.source.encode("utf-8", "surrogatepass")),
                                                    tokens.lines, fp))
    found: dict[tuple[str, str], list[_Found]] = defaultdict(list)
    for exercise, items in prints.items():
        for match in _exercise_matches(sorted(items, key=lambda p: p.student)):
            found[(match.a.student, match.b.student)].append(match)
    ranked = sorted(found.items(), key=lambda kv: (-max(m.score for m in kv[1]), -len(kv[1]), kv[0]))
    listed = ranked if limit is None else ranked[:limit]
    pairs = [SimilarPair(students, tuple(_match(m) for m in sorted(matches, key=lambda m: -m.score)))
             for students, matches in listed]
    return pairs, len(ranked)


@dataclass
class _Print:
    student: str
    exercise: str
    file: str
    compressed: bytes       # the source, for the excerpts of the pairs listed
    lines: np.ndarray       # the line of each normalised token (the tokens themselves are not kept)
    fp: Fingerprint

    @property
    def source(self) -> str:
        return zlib.decompress(self.compressed).decode("utf-8", "surrogatepass")


@dataclass
class _Found:
    a: _Print
    b: _Print
    sim_a: float
    sim_b: float

    @property
    def score(self) -> float:
        return min(self.sim_a, self.sim_b)


def _exercise_matches(prints: list[_Print]) -> list[_Found]:
    """The pairs of one exercise's submissions that are alike (scored, without their fragments)."""
    n = len(prints)
    if n < 2:
        return []
    hashes = np.concatenate([p.fp.hashes for p in prints])
    owners = np.repeat(np.arange(n), [len(p.fp.hashes) for p in prints])
    order = np.argsort(hashes, kind="stable")
    hashes, owners = hashes[order], owners[order]
    distinct, first, held = np.unique(hashes, return_index=True, return_counts=True)
    weight = np.log((n + 1) / held)                       # the rarer, the more it says
    totals = np.bincount(owners, weights=np.repeat(weight, held), minlength=n)
    usable = (held > 1) & (held <= common_limit(n))        # shared, and not by everyone
    starts, ends = first.tolist(), (first + held).tolist()
    found = []
    for i, p in enumerate(prints):     # i's partners, counted over its usable fingerprints
        at = np.searchsorted(distinct, p.fp.hashes)
        at = at[usable[at]]
        if len(at) < MIN_SHARED:
            continue
        partners = np.concatenate([owners[starts[k]:ends[k]] for k in at.tolist()])
        counts = np.bincount(partners, minlength=n)
        for j in np.flatnonzero(counts[i + 1:] >= MIN_SHARED) + i + 1:
            j = int(j)
            shared = np.intersect1d(p.fp.hashes, prints[j].fp.hashes, assume_unique=True)
            common_weight = float(weight[np.searchsorted(distinct, shared)].sum())
            sim_i, sim_j = common_weight / float(totals[i]), common_weight / float(totals[j])
            if min(sim_i, sim_j) >= SIMILAR:
                found.append(_Found(p, prints[j], sim_i, sim_j))
    return found


def _match(found: _Found) -> ExerciseMatch:
    """A match with its shared fragments: line ranges and an excerpt of each side."""
    shared = np.intersect1d(found.a.fp.hashes, found.b.fp.hashes, assume_unique=True)
    slices = shared_slices(found.a.fp, found.b.fp, shared)
    sides = tuple(Side(p.student, p.file, sim, fragments, _excerpt(p.source, fragments))
                  for p, sim, part in zip((found.a, found.b), (found.sim_a, found.sim_b), slices)
                  for fragments in (_lines(p.lines, part),))
    return ExerciseMatch(found.a.exercise, found.score, len(shared), sides)


def _lines(token_lines: np.ndarray, slices: np.ndarray) -> tuple[tuple[int, int], ...]:
    """The line ranges of copied token slices (copydetect's 2 x n starts and ends), merged."""
    ranges: list[list[int]] = []
    for start, end in sorted(zip(slices[0].tolist(), slices[1].tolist())):
        span = token_lines[start:end]
        first, last = int(span.min()), int(span.max())
        if ranges and first <= ranges[-1][1] + 1:
            ranges[-1][1] = max(ranges[-1][1], last)
        else:
            ranges.append([first, last])
    return tuple((first, last) for first, last in ranges)


def _excerpt(source: str, fragments: tuple[tuple[int, int], ...]) -> tuple[ExcerptLine, ...]:
    """The shared lines with a little context; a gap where lines are left out."""
    lines = source.splitlines()
    shared = {n for first, last in fragments for n in range(first, last + 1)}
    shown = sorted({m for n in shared for m in range(n - CONTEXT_LINES, n + CONTEXT_LINES + 1)
                    if 1 <= m <= len(lines)})
    excerpt: list[ExcerptLine] = []
    previous = 0
    for n in shown[:EXCERPT_LINES]:
        if n > previous + 1:
            excerpt.append(ExcerptLine(None))
        excerpt.append(ExcerptLine(n, lines[n - 1], n in shared))
        previous = n
    if len(shown) > EXCERPT_LINES or (shown and shown[-1] < len(lines)):
        excerpt.append(ExcerptLine(None))
    return tuple(excerpt)
