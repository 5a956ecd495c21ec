"""The large reference run of the scaling experiment, made once and kept on disk.

The entropy, max_weight and other_dims checks compare a student's statistics with what the
experiment lands near with many trials: the reference's `expected_statistics` (40 000 rows
drawn from the rows' own distribution; 0.1 s, where a 10 000-trial run of the experiment took
about a second per grader process), the same for every student, every run and every worker.
It is made once per (dims, seq_len) in a process, and kept as JSON (never pickle) under the
user's cache folder, keyed by a hash of the reference's source, numpy's version (its
generator's stream) and the arguments, so a changed reference or numpy makes it anew. A file
that is unreadable or not six finite floats per d is ignored and rewritten.

Diagnosis makes the same large run for each scaling mutant (reference/mutants.py, one option
switched): half a second each, per worker. A seeded mutant is as deterministic as the
reference and is cached the same way, keyed by its options; an unseeded mutant, or any other
override, is never cached.

The reference's answers of a stem whose reference imports torch (multihead) are kept too, as
.npz (arrays only, read without pickle), keyed by the check, the seed, and a hash of the
reference, the checks and the versions of numpy and torch: the grader then never imports
torch (about 3 s per process) to grade a submission whose answers are right.
"""

from __future__ import annotations

import hashlib
import json
import math
import os
import tempfile
import threading
from contextlib import contextmanager
from functools import lru_cache, partial
from importlib import metadata
from pathlib import Path
from typing import Any, Callable

import numpy as np

from autograder.syntax import imported_modules

PRECISE = {"n_trials": 10000, "seed": 12345}
STATS = ("std_unscaled", "std_scaled", "entropy_unscaled", "entropy_scaled",
         "max_weight_unscaled", "max_weight_scaled")
_MEMORY: dict[tuple, dict[int, dict[str, float]]] = {}
_LOCKS_GUARD = threading.Lock()
_LOCKS: dict[tuple, threading.Lock] = {}


def lock_for(key: tuple) -> threading.Lock:
    """One lock per answer being made: the grader's threads (grading.prefetch_expected) make
    each reference answer once, and wait for one another rather than make it twice."""
    with _LOCKS_GUARD:
        return _LOCKS.setdefault(key, threading.Lock())


def precise_run(impl: Any, dims: tuple[int, ...], seq_len: int) -> dict[int, dict[str, float]]:
    """The reference's expected statistics, or `impl.scaling_experiment` with PRECISE's trials and
    seed for anything else; cached for the reference and its seeded mutants only."""
    variant = _variant(impl)

    def make():
        if variant == "":      # the reference: its expectations drawn row by row (far cheaper, same values)
            from reference.scaling import expected_statistics

            return expected_statistics(dims, seq_len)
        return impl.scaling_experiment(dims=dims, seq_len=seq_len, **PRECISE)

    if variant is None:
        return make()
    key = (tuple(int(d) for d in dims), int(seq_len), variant)
    with lock_for(("precise", *key)):      # several checks share one run
        if key not in _MEMORY:
            path = cache_folder() / f"scaling-{_digest(key)}.json"
            found = _read(path, key[0])
            if found is None:
                found = make()
                _write(path, found)
            _MEMORY[key] = found
    return _MEMORY[key]


def _variant(impl: Any) -> str | None:
    """"" for the reference, the options of a seeded mutant of reference/mutants.py as text, None
    for anything else (a student, an unseeded mutant, an override that is not one of those)."""
    overrides = getattr(impl, "overrides", None)
    if overrides is None:
        return None
    if not overrides:
        return ""
    fn = overrides.get("scaling_experiment")
    from reference import mutants

    if set(overrides) != {"scaling_experiment"} or not isinstance(fn, partial) or fn.args \
            or fn.func is not mutants.scaling_experiment or fn.keywords.get("seeded", True) is not True:
        return None
    options = {}
    for name, value in sorted(fn.keywords.items()):
        if isinstance(value, np.ufunc):
            value = f"np.{value.__name__}"
        elif not isinstance(value, (str, int, float, bool, type(None))):
            return None
        options[name] = value
    return json.dumps(options, sort_keys=True)


# ---------------------------------------------------------------- reference answers (torch stems)

@lru_cache(maxsize=None)
def needs_torch(stem: str) -> bool:
    """Whether the reference of `stem` imports torch (its answers are then worth keeping on disk)."""
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


@lru_cache(maxsize=None)
def _code_digest() -> str:
    """The code an answer depends on: the reference, the checks (inputs and runs), numpy and torch."""
    import reference

    from autograder import checks

    h = hashlib.sha256()
    for folder in (Path(reference.__file__).parent, Path(checks.__file__).parent):
        for path in sorted(folder.glob("*.py")):
            h.update(path.name.encode())
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
        with _temporary(path) as tmp:
            with open(tmp, "wb") as f:
                np.savez(f, kind=np.array(kind), count=np.array(len(arrays)),
                         **{f"a{i}": a for i, a in enumerate(arrays)})
            os.replace(tmp, path)
    except OSError:
        pass


@contextmanager
def _temporary(path: Path):
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
    """ATTNKIT_CACHE_DIR, else $XDG_CACHE_HOME/attnkit, else ~/.cache/attnkit."""
    explicit = os.environ.get("ATTNKIT_CACHE_DIR")
    if explicit:
        return Path(explicit) / "reference"
    base = os.environ.get("XDG_CACHE_HOME") or str(Path.home() / ".cache")
    return Path(base) / "attnkit" / "reference"


def _digest(key: tuple) -> str:
    import reference.scaling

    h = hashlib.sha256()
    for name in ("scaling.py", "attention.py", "mutants.py"):   # the experiment, its softmax, the mutants
        h.update(Path(reference.scaling.__file__).with_name(name).read_bytes())
    h.update(np.__version__.encode())
    h.update(json.dumps([list(key[0]), key[1], key[2], PRECISE]).encode())
    return h.hexdigest()[:32]


def _read(path: Path, dims: tuple[int, ...]) -> dict[int, dict[str, float]] | None:
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
        out = {int(d): {s: float(data[str(d)][s]) for s in STATS} for d in dims}
    except (OSError, ValueError, KeyError, TypeError):
        return None
    if len(data) != len(dims) or not all(math.isfinite(v) for row in out.values() for v in row.values()):
        return None
    return out


def _write(path: Path, result: dict[int, dict[str, float]]) -> None:
    """Atomically, and only as a speed-up: a folder that cannot be written costs nothing but time."""
    try:
        with _temporary(path) as tmp:
            tmp.write_text(json.dumps({str(d): {s: float(row[s]) for s in STATS} for d, row in result.items()}),
                           encoding="utf-8")
            os.replace(tmp, path)
    except OSError:
        pass
