"""The first call a check makes, learnt without making it (first_calls.first_call): what
`answered_ahead` asks of a child in one request before the checks run."""

from __future__ import annotations

import numpy as np

from autograder.checks import CHECKS
from autograder.grading.first_calls import first_call

FIGURE = "scaling.plot_scaling.figure"


def test_the_first_call_of_a_check_is_learnt_without_making_it():
    figure = next(c for c in CHECKS["scaling"] if c.id == FIGURE)
    results = {4: {}}
    assert first_call(figure, {"results": results}) == ("plot_scaling", (results,), {})
    constant = next(c for c in CHECKS["hand_computation"])    # reads an attribute: not a call
    assert first_call(constant, constant.inputs(np.random.default_rng(0))) is None
