"""The reference's answers that are slow to make, kept on disk across runs (never pickle).

The answers of a stem whose reference imports torch (multihead) are kept as .npz (arrays only,
read without pickle), keyed by the check, the seed, and a hash of the reference, the checks and
the versions of numpy and torch: the grader then never imports torch (seconds per process) to
grade a submission whose answers are right. Files live under the user's cache folder
(`cache_folder`), written atomically (`temporary_beside`); an exercise's own caches use the same
(the scaling experiment's large reference run: autograder/checks/scaling/precise.py).
"""

from __future__ import annotations

import hashlib
import json
import os
import tempfile
import threading
from contextlib import contextmanager
from functools import lru_cache
from pathlib import Path
from typing import Any, Callable

import numpy as np

from autograder.config import cache_dir
from autograder.judge.syntax import imported_modules

_LOCKS_GUARD = threading.Lock()
_LOCKS: dict[tuple, threading.Lock] = {}


def lock_for(key: tuple) -> threading.Lock:
    """One lock per answer being made: the grader's threads (a class's lanes) make each
    reference answer once, and wait for one another rather than make it twice."""
    with _LOCKS_GUARD:
        return _LOCKS.setdefault(key, threading.Lock())


@lru_cache(maxsize=None)
def needs_torch(stem: str) -> bool:
    """Whether the reference of `stem` imports torch (its answers are then worth keeping on disk).
    Asked twice for every check of every submission: the kit's reference files, read once a process
    (reading them each time slowed a cold check)."""
    import reference

    if stem not in reference.STEMS:
        return False
    text = (reference.HERE / f"{stem}.py").read_text(encoding="utf-8")
    # Only a file that names torch can import it: the others are not parsed (a cold `attnkit check` waits here)
    return "torch" in text and "torch" in imported_modules(text)


def stored_answer(check_id: str, seed: int, make: Callable[[], Any]) -> Any:
    """`make()` (the reference's answer: an array or a tuple of arrays), kept on disk across runs.
    Anything else is returned as made and not kept."""
    path = cache_folder() / f"answer-{_answer_digest(check_id, seed)}.npz"
    found = _read_answer(path)
    if found is not None:
        return found
    answer = make()
    _write_answer(path, answer)
    return answer


def stored_json(kind: str, key: list, make: Callable[[], Any]) -> Any:
    """`make()` (plain JSON data), kept on disk across runs under the code's digest and `key` (JSON
    too): what is slow to make only the first time on a machine (what a torch-written mutant
    raises, autograder/diagnosis/explain.py). Damaged or missing: made again."""
    name = hashlib.sha256(json.dumps([_code_digest(), kind, key]).encode()).hexdigest()[:32]
    path = cache_folder() / f"{kind}-{name}.json"
    try:
        return json.loads(path.read_text(encoding="utf-8"))["value"]
    except (OSError, ValueError, KeyError, TypeError):
        pass
    value = make()
    try:
        with temporary_beside(path) as tmp:
            tmp.write_text(json.dumps({"value": value}), encoding="utf-8")
            os.replace(tmp, path)
    except (OSError, TypeError, ValueError):
        pass       # only a speed-up: a folder that cannot be written costs time, nothing else
    return value


@lru_cache(maxsize=None)
def _code_digest() -> str:
    """The code an answer depends on: the reference, the checks (inputs and runs), numpy and torch."""
    # imported here: at the top, it would slow a cold check that reads no stored answer
    from importlib import metadata

    import reference

    from autograder import checks

    h = hashlib.sha256()
    for folder in (Path(reference.__file__).parent, Path(checks.__file__).parent):
        for path in sorted(folder.rglob("*.py")):          # the checks of each exercise, in its package
            h.update(str(path.relative_to(folder)).encode())
            h.update(path.read_bytes())
    for dist in ("numpy", "torch"):
        try:
            h.update(f"{dist} {metadata.version(dist)}".encode())
        except metadata.PackageNotFoundError:
            h.update(f"{dist} -".encode())
    return h.hexdigest()


def _answer_digest(check_id: str, seed: int) -> str:
    return hashlib.sha256(json.dumps([_code_digest(), check_id, int(seed)]).encode()).hexdigest()[:32]


def _read_answer(path: Path) -> Any:
    try:
        with np.load(path, allow_pickle=False) as data:
            kind = str(data["kind"])
            arrays = [np.array(data[f"a{i}"]) for i in range(int(data["count"]))]
    except Exception:  # noqa: BLE001 - missing, damaged (a zip error), anything: made again
        return None
    if kind == "array" and len(arrays) == 1:
        return arrays[0]
    return tuple(arrays) if kind == "tuple" else None


def _write_answer(path: Path, answer: Any) -> None:
    if isinstance(answer, np.ndarray):
        kind, arrays = "array", [answer]
    elif type(answer) is tuple and all(isinstance(a, np.ndarray) for a in answer):
        kind, arrays = "tuple", list(answer)
    else:
        return
    if any(a.dtype.hasobject for a in arrays):
        return
    try:
        with temporary_beside(path) as tmp:
            with open(tmp, "wb") as f:
                np.savez(f, kind=np.array(kind), count=np.array(len(arrays)),
                         **{f"a{i}": a for i, a in enumerate(arrays)})
            os.replace(tmp, path)
    except OSError:
        pass


@contextmanager
def temporary_beside(path: Path):
    """A file of its own beside `path` (the grader's threads and processes write at once), removed
    unless it was moved into place."""
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, name = tempfile.mkstemp(prefix=f".{path.name}.", suffix=".tmp", dir=path.parent)
    os.close(fd)
    try:
        yield Path(name)
    finally:
        try:
            os.unlink(name)
        except OSError:
            pass


def cache_folder() -> Path:
    return cache_dir("reference")
