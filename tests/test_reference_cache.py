"""The reference's slow answers kept on disk: the scaling experiment's large reference run (cached for
the reference and its seeded mutants only, as JSON), and the answers of torch stems (.npz)."""

from __future__ import annotations

import functools
import json

import numpy as np

from autograder.checks import reference_cache
from autograder.checks.base import ReferenceImplementation
from autograder.checks.scaling import mutants, precise
from reference.scaling import expected_statistics

DIMS, SEQ_LEN = (4, 8), 3


def _fresh(monkeypatch, tmp_path):
    monkeypatch.setenv("ATTNKIT_CACHE_DIR", str(tmp_path))
    monkeypatch.setattr(precise, "_MEMORY", {})


def test_the_reference_run_is_the_reference_and_is_written_as_json(monkeypatch, tmp_path):
    _fresh(monkeypatch, tmp_path)
    got = precise.precise_run(ReferenceImplementation("scaling"), DIMS, SEQ_LEN)
    assert got == expected_statistics(DIMS, SEQ_LEN)
    files = list((tmp_path / "reference").glob("*.json"))
    assert len(files) == 1
    assert json.loads(files[0].read_text())["8"]["std_scaled"] == got[8]["std_scaled"]
    monkeypatch.setattr(precise, "_MEMORY", {})   # a new process reads the file back
    assert precise.precise_run(ReferenceImplementation("scaling"), DIMS, SEQ_LEN) == got


def test_an_override_that_is_not_a_seeded_mutant_is_never_answered_from_the_cache(monkeypatch, tmp_path):
    _fresh(monkeypatch, tmp_path)
    precise.precise_run(ReferenceImplementation("scaling"), DIMS, SEQ_LEN)
    constant = {d: dict.fromkeys(precise.STATS, 0.5) for d in DIMS}
    own = ReferenceImplementation("scaling", {"scaling_experiment": lambda **kw: constant})
    assert precise.precise_run(own, DIMS, SEQ_LEN) is constant
    unseeded = ReferenceImplementation("scaling", {"scaling_experiment": mutants.scaling_fn(seeded=False)})
    first, again = (precise.precise_run(unseeded, DIMS, SEQ_LEN) for _ in range(2))
    assert first != again
    assert len(list((tmp_path / "reference").glob("*.json"))) == 1


def test_a_seeded_mutant_is_cached_apart_from_the_reference(monkeypatch, tmp_path):
    _fresh(monkeypatch, tmp_path)
    reference = precise.precise_run(ReferenceImplementation("scaling"), DIMS, SEQ_LEN)
    for options in ({"scale": "dk"}, {"log": np.log2}, {"trials": 1000}):
        mutant = ReferenceImplementation("scaling", {"scaling_experiment": mutants.scaling_fn(**options)})
        want = mutants.scaling_experiment(dims=DIMS, seq_len=SEQ_LEN, **precise.PRECISE, **options)
        assert precise.precise_run(mutant, DIMS, SEQ_LEN) == want != reference
        monkeypatch.setattr(precise, "_MEMORY", {})
        assert precise.precise_run(mutant, DIMS, SEQ_LEN) == want
    assert len(list((tmp_path / "reference").glob("*.json"))) == 4


def test_a_damaged_file_is_ignored_and_rewritten(monkeypatch, tmp_path):
    _fresh(monkeypatch, tmp_path)
    want = precise.precise_run(ReferenceImplementation("scaling"), DIMS, SEQ_LEN)
    [path] = (tmp_path / "reference").glob("*.json")
    for text in ("{not json", json.dumps({"4": {"std_scaled": 1.0}}), json.dumps({"4": "x", "8": None})):
        path.write_text(text)
        monkeypatch.setattr(precise, "_MEMORY", {})
        assert precise.precise_run(ReferenceImplementation("scaling"), DIMS, SEQ_LEN) == want
    assert json.loads(path.read_text())["4"]["entropy_unscaled"] == want[4]["entropy_unscaled"]


# ---------------------------------------------------------------- reference answers of torch stems

def test_multihead_answers_are_kept_as_npz_and_read_back_equal_to_the_reference(monkeypatch, tmp_path):
    """The grader reads multihead's reference answers from disk (no torch import); what it reads is
    exactly what the reference (torch for the module) computes, dtypes included."""
    from autograder.checks import CHECKS
    from autograder.checks.base import rng_for
    from autograder.grading.submission import _expected, _expected_made

    _fresh(monkeypatch, tmp_path)
    assert reference_cache.needs_torch("multihead") and not reference_cache.needs_torch("attention")
    _expected_made.cache_clear()
    from autograder.checks.multihead import ARGUMENTS

    kept = [c for c in CHECKS["multihead"] if c not in ARGUMENTS]   # a nested answer is made each time, not kept
    for check in kept:
        made = _expected(check, 7)[1]
        _expected_made.cache_clear()
        inputs, read = _expected(check, 7)              # the second time: from the .npz file
        _expected_made.cache_clear()
        want = (check.expected_run or check.run)(ReferenceImplementation("multihead"), check.inputs(rng_for(7, check.id)))
        for got in (made, read):
            assert type(got) is type(want), check.id
            for a, b in zip(got if isinstance(got, tuple) else (got,), want if isinstance(want, tuple) else (want,)):
                assert a.dtype == b.dtype and np.array_equal(a, b), check.id
    files = list((tmp_path / "reference").glob("answer-*.npz"))
    assert len(files) == len(kept)
    _expected(CHECKS["multihead"][0], 8)               # another seed: another file
    assert len(list((tmp_path / "reference").glob("answer-*.npz"))) == len(files) + 1
    _expected_made.cache_clear()


def test_a_damaged_answer_file_is_made_again_and_other_answers_are_not_kept(monkeypatch, tmp_path):
    _fresh(monkeypatch, tmp_path)
    want = (np.arange(6.0).reshape(2, 3), np.ones(2, dtype=np.float32))
    assert reference_cache.stored_answer("x.y.z", 1, lambda: want) is want
    [path] = (tmp_path / "reference").glob("answer-*.npz")
    got = reference_cache.stored_answer("x.y.z", 1, lambda: 1 / 0)     # read, not made
    assert all(a.dtype == b.dtype and np.array_equal(a, b) for a, b in zip(got, want))
    whole = path.read_bytes()
    for damaged in (b"not an npz file", whole[: len(whole) // 2]):     # the second: a zip error, not OSError
        path.write_bytes(damaged)
        assert reference_cache.stored_answer("x.y.z", 1, lambda: want) is want
    assert reference_cache.stored_answer("x.y.other", 1, lambda: {"a": 1}) == {"a": 1}   # not arrays: not kept
    assert len(list((tmp_path / "reference").glob("answer-*.npz"))) == 1


def test_threads_making_the_same_answer_at_once_never_read_a_half_written_file(monkeypatch, tmp_path):
    """A class run's workers are threads of one process: each writes a temporary file of its own,
    every thread gets the answer, and no temporary file is left behind."""
    import threading

    _fresh(monkeypatch, tmp_path)
    want = (np.random.default_rng(0).normal(size=(200, 200)), np.arange(10))
    got, errors = [], []

    def work():
        try:
            for _ in range(20):
                got.append(reference_cache.stored_answer("x.y.z", 3, lambda: want))
        except Exception as err:  # noqa: BLE001
            errors.append(err)

    threads = [threading.Thread(target=work) for _ in range(6)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert not errors
    assert len(got) == 120 and all(np.array_equal(a, b) for g in got for a, b in zip(g, want))
    assert [p.name for p in (tmp_path / "reference").iterdir() if p.name.startswith(".")] == []


def test_answers_asked_in_two_threads_at_once_are_made_once_and_are_the_same(monkeypatch, tmp_path):
    """Two grading threads (a class's lanes) asking for the same slow reference answers at once:
    the second waits for the first instead of making each a second time."""
    import threading

    from autograder.grading import submission as grading
    from autograder.checks import CHECKS

    _fresh(monkeypatch, tmp_path)
    grading._expected_made.cache_clear()
    made, inner = [], grading._expected_made.__wrapped__
    monkeypatch.setattr(grading, "_expected_made",
                        functools.lru_cache(maxsize=None)(lambda c, s: made.append(c.id) or inner(c, s)))
    slow = [c for c in CHECKS["scaling"] + CHECKS["multihead"] if c.expected_run or reference_cache.needs_torch(c.exercise)]
    other = threading.Thread(target=lambda: [grading._expected(c, 5) for c in slow])
    other.start()
    got = {c.id: grading._expected(c, 5)[1] for c in reversed(slow)}      # the other end first: both at once
    other.join()
    assert sorted(made) == sorted(c.id for c in slow)                      # each made once
    grading._expected_made.cache_clear()
    for c in slow:
        want = (c.expected_run or c.run)(ReferenceImplementation(c.exercise), c.inputs(rng_for_check(c, 5)))
        same = want == got[c.id] if isinstance(want, dict) or want is None else _equal(want, got[c.id])
        assert same, c.id


def _equal(a, b) -> bool:
    """Two answers equal: arrays, or tuples of them however nested (the arguments checks' answers)."""
    if isinstance(a, tuple) or isinstance(b, tuple):
        return isinstance(a, tuple) and isinstance(b, tuple) and len(a) == len(b) and all(map(_equal, a, b))
    return np.array_equal(a, b)


def rng_for_check(check, seed):
    from autograder.checks.base import rng_for

    return rng_for(seed, check.id)
