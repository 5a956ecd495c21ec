"""One student's graded code for one exercise, fingerprinted where it was read: in a bounded child
of the grader's, charged to the student (grading's reading child in a class run, or the similarity
pass's own: integrity/class_code.py), which answers it as data (`made_here`); the grader takes it
back as a `Made` (`made_from`) for the class's comparison (integrity/similarity.py).
"""

from __future__ import annotations

import hashlib
from dataclasses import dataclass
from functools import lru_cache

import numpy as np

from autograder.integrity.fingerprint import Fingerprint, boilerplate, fingerprint, given_statements, normalise


@dataclass(frozen=True)
class Made:
    """One student's graded code for one exercise, fingerprinted where it was read (a bounded child
    of the grader's: `made_here`): the digest of the exercise and the source (copies share it) and
    the fingerprint's hashes (None: nothing to compare)."""
    student: str
    exercise: str
    file: str
    digest: bytes
    hashes: np.ndarray | None


def made_here(student: str, exercise: str, file: str, source: str, stub: str, details: bool = False) -> dict:
    """What a child answers for one student's code (`Made` as data; with `details`, what an excerpt
    is made of too: the source, each token's line and the whole fingerprint)."""
    raw = source.encode("utf-8", "surrogatepass")
    given, excluded = stub_given(stub)
    tokens = normalise(source, given)
    fp = fingerprint(tokens, excluded) if tokens is not None else None
    made = {"student": student, "exercise": exercise, "file": file,
            "digest": hashlib.sha256(exercise.encode("utf-8", "surrogatepass") + b"\0" + raw).hexdigest(),
            "hashes": None if fp is None or fp.empty else fp.hashes}
    if details:
        tokens = tokens or normalise("")
        fp = fp or fingerprint(tokens, np.zeros(0, dtype=np.int64))
        made["details"] = {"source": source, "lines": tokens.lines, "hashes": fp.hashes, "found": fp.found,
                           "starts": fp.starts, "coverage": fp.coverage}
    return made


@lru_cache(maxsize=64)
def stub_given(stub: str):
    """What a stub gives every student (its statements, its k-gram hashes), made once per process:
    reading the stub was most of fingerprinting a student's file. A helper makes the kit's before
    its children fork (integrity/prints_helper.py), so no child makes them again."""
    excluded = boilerplate([stub])
    excluded.flags.writeable = False       # shared by every caller
    return given_statements(stub), excluded


def made_from(plain: dict) -> tuple[Made, tuple[str, np.ndarray, Fingerprint] | None]:
    """A child's `made_here` as (Made, its details or None); ValueError for data that is not one."""
    def array(value) -> np.ndarray:
        if not isinstance(value, np.ndarray) or value.ndim != 1 or value.dtype.kind not in "iu":
            raise ValueError("an array that is not one")
        return value.astype(np.int64)

    if not all(isinstance(plain.get(k), str) for k in ("student", "exercise", "file", "digest")):
        raise ValueError("a fingerprint that is not one")
    hashes = None if plain.get("hashes") is None else np.unique(array(plain["hashes"]))
    made = Made(plain["student"], plain["exercise"], plain["file"], bytes.fromhex(plain["digest"]), hashes)
    found = plain.get("details")
    if found is None:
        return made, None
    if not isinstance(found.get("source"), str) or type(found.get("coverage")) is not int:
        raise ValueError("details that are not")
    fp = Fingerprint(array(found["hashes"]), array(found["found"]), array(found["starts"]), found["coverage"])
    return made, (found["source"], array(found["lines"]).astype(np.int32), fp)
