"""Recognisers several exercises share: mistakes told by a property of the answer (computed in a
16-bit float), or by the error they raise (`if mask:` on an array, `K.T` on a batch, ...), rather
than by one exact wrong answer. They are written in the handout's shared modules
(autograder/handout/check_raised.py, check_recognisers.py), which check.py applies by name; an
exercise's own recognisers are in its package (autograder/checks/<stem>/recognisers.py).

An answer predicate is (answer, expected, ctx, check) -> bool | None (None: compare with the
entry's mutants instead). An error predicate is (RaisedError) -> bool.
"""

from __future__ import annotations

# The shared ones are the handout's own modules, which check.py applies the same way.
from autograder.handout.check_raised import (  # noqa: F401 - the catalogues' error recognisers
    AXIS_ERRORS, FRONT_AXES, REVERSES_ALL_AXES, SHAPE_ERRORS, boolean_index_error, invert_error,
    low_precision_error, transpose_all_axes, transpose_fixed_axes, truth_value_of_array)
from autograder.handout.check_recognisers import (  # noqa: F401 - the catalogues' answer recognisers
    HALF_ROUNDING, LOW_PRECISION, low_precision, low_precision_dtype)
