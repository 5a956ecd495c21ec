"""The comparison every array check makes (judge/answers.py, shared with the handout's
check.py): its fast closeness test is numpy's isclose wherever it is used, and the verdict alone
that diagnosis asks of mutants' answers (arrays_agree, compare_arrays' `agrees`) is the
comparison's own."""

from __future__ import annotations

import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st
from hypothesis.extra import numpy as hnp

from autograder.judge.answers import _isclose, all_close, array_problem, arrays_agree

VALUES = st.floats(allow_nan=True, allow_infinity=True, width=64) | st.sampled_from([0.0, -0.0, 1.0, 1 + 1e-9])
SHAPES = hnp.array_shapes(min_dims=0, max_dims=3, max_side=4)
TOLERANCES = st.sampled_from([(1e-5, 1e-8), (1e-4, 1e-5), (0.0, 0.006), (0.0, 0.0)])


@settings(max_examples=400, deadline=None)
@given(st.data(), SHAPES, TOLERANCES)
def test_the_fast_closeness_test_is_numpys_isclose(data, shape, tolerances):
    expected = data.draw(hnp.arrays(np.float64, shape, elements=VALUES))
    noise = data.draw(hnp.arrays(np.float64, shape, elements=st.sampled_from([0.0, 1e-12, 1e-7, 1e-5, 1e-3, 1.0])))
    got = expected + noise if data.draw(st.booleans()) else data.draw(hnp.arrays(np.float64, shape, elements=VALUES))
    rtol, atol = tolerances
    with np.errstate(all="ignore"):
        assert np.array_equal(_isclose(got, expected, rtol, atol),
                              np.isclose(got, expected, rtol=rtol, atol=atol, equal_nan=True))


@settings(max_examples=400, deadline=None)
@given(st.data(), SHAPES, TOLERANCES, st.sampled_from([np.float64, np.float32]), st.booleans(), st.booleans())
def test_the_fast_allclose_is_numpys_allclose(data, shape, tolerances, dtype, as_list, equal_nan):
    """What the property checks and the figure's reading ask (judge/properties.py,
    figure_reading.py): the same verdict as np.allclose, float32 answers and lists of reference
    numbers included."""
    expected = data.draw(hnp.arrays(np.float64, shape, elements=VALUES))
    noise = data.draw(hnp.arrays(np.float64, shape, elements=st.sampled_from([0.0, 1e-12, 1e-7, 1e-5, 1e-3, 1.0])))
    got = expected + noise if data.draw(st.booleans()) else data.draw(hnp.arrays(np.float64, shape, elements=VALUES))
    with np.errstate(all="ignore"):
        got = got.astype(dtype)
    theirs = expected.tolist() if as_list else expected
    rtol, atol = tolerances
    with np.errstate(all="ignore"):
        assert all_close(got, theirs, rtol, atol, equal_nan) == bool(
            np.allclose(got, theirs, rtol=rtol, atol=atol, equal_nan=equal_nan))


class _Tol:
    rtol, atol = 1e-5, 1e-8


def test_array_problem_says_where_and_passes_what_is_close():
    expected = np.arange(6.0).reshape(2, 3)
    assert array_problem("out", expected + 1e-9, expected, _Tol) is None
    wrong = expected.copy()
    wrong[1, 2] += 0.5
    assert array_problem("out", wrong, expected, _Tol) == (
        "1 of 6 entries of out differ; the largest difference is at out[1, 2]: expected 5, got 5.5 "
        "(rtol=1e-05, atol=1e-08)")
    both_nan = expected.copy()
    both_nan[0, 0] = np.nan
    assert array_problem("out", both_nan, both_nan, _Tol) is None


@settings(max_examples=400, deadline=None)
@given(st.data(), SHAPES, SHAPES, TOLERANCES)
def test_the_verdict_alone_is_the_comparisons_verdict(data, shape, other_shape, tolerances):
    """Diagnosis matches an answer with each mutant's by `agrees`; it must say what the sentence
    of array_problem / compare_arrays says, for any values (nan, inf, -0.0), shapes and lengths."""
    from autograder.checks.base import compare_arrays

    expected = data.draw(hnp.arrays(np.float64, shape, elements=VALUES))
    noise = data.draw(hnp.arrays(np.float64, shape, elements=st.sampled_from([0.0, 1e-12, 1e-7, 1e-5, 1e-3, 1.0])))
    got = (expected + noise if data.draw(st.booleans())
           else data.draw(hnp.arrays(np.float64, data.draw(st.sampled_from([shape, other_shape])), elements=VALUES)))
    tol = type("Tol", (), dict(zip(("rtol", "atol"), tolerances)))
    with np.errstate(all="ignore"):
        assert arrays_agree(got, expected, tol) == (array_problem("x", got, expected, tol) is None)
        pair = compare_arrays("output", "weights", weights=())
        answer = tuple(data.draw(st.sampled_from([(got, got), (got, expected), (expected, got), (got,), (got, got, got)])))
        ctx = type("Ctx", (), {"tol": tol})
        assert pair.agrees(answer, (expected, expected), ctx) == (not pair(answer, (expected, expected), ctx))
        one = compare_arrays("output", weights=())
        assert one.agrees(got, expected, ctx) == (not one(got, expected, ctx))
        assert not hasattr(compare_arrays("output", "weights"), "agrees")   # weights' properties: values_only's
