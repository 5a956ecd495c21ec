"""Red team: a stem that imports another exercise gets correct answers, never the kit's code.
The provided functions are proxies answered by the grader."""

from __future__ import annotations

import textwrap

import numpy as np
import pytest

from autograder.grading.submission import _provided
from autograder.sandbox import Limits

LIMITS = Limits(call_timeout=5.0, import_timeout=10.0, memory_mb=1024)


def src(text: str) -> str:
    return textwrap.dedent(text).lstrip("\n")


STEAL = """
import gc
import inspect
import sys

import attention
from attention import softmax

def steal():
    found = []
    for how in (lambda: inspect.getsource(softmax), lambda: inspect.getsource(attention),
                lambda: softmax.__code__.co_code, lambda: attention.__loader__.get_source("attention"),
                lambda: attention.__spec__.loader.get_source("attention"), lambda: open(attention.__file__).read(),
                lambda: softmax._call.__self__.guard.provided["attention"].softmax.__code__):
        try:
            found.append(str(how()))
        except Exception as err:
            found.append("")
    for obj in gc.get_objects():
        if isinstance(obj, str) and "def scaled_dot_product_attention" in obj:
            found.append(obj)
    for name, module in list(sys.modules.items()):
        if "reference" in name or "_attnkit_provided" in name:
            found.append(name)
    return [float(any("apply_mask" in f or "def softmax" in f or "reference" in f for f in found))]

def uses(x):
    return softmax(x)
"""


def test_provided_functions_answer_correctly_and_reveal_no_source(sandbox):
    with sandbox.session("causal_mask", src(STEAL), "causal_mask.py", provided=_provided("causal_mask")) as s:
        assert s.import_outcome.status == "ok", s.import_outcome
        x = np.array([[1.0, 2.0, 3.0]])
        out = s.call("uses", [x])
        assert out.status == "ok", out
        e = np.exp(x - x.max())
        np.testing.assert_allclose(out.value, e / e.sum())
        assert s.call("steal").value.tolist() == [0.0]


def test_tensors_in_tensors_out(sandbox):
    code = """
    import torch
    from attention import scaled_dot_product_attention
    from causal_mask import create_causal_mask

    def run(n):
        x = torch.eye(int(n), dtype=torch.float32)
        out, w = scaled_dot_product_attention(x, x, x, mask=create_causal_mask(int(n)))
        assert isinstance(out, torch.Tensor) and out.dtype == torch.float32, type(out)
        return w
    """
    with sandbox.session("multihead", src(code), "multihead.py", provided=_provided("multihead")) as s:
        assert s.import_outcome.status == "ok", s.import_outcome
        out = s.call("run", [3])
        assert out.status == "ok", out
        assert np.allclose(np.triu(out.value, 1), 0) and np.allclose(out.value.sum(-1), 1)


def test_errors_of_provided_functions_are_the_students(sandbox):
    code = """
    import numpy as np
    from attention import scaled_dot_product_attention

    def wrong():
        return scaled_dot_product_attention(np.ones((2, 3)), np.ones((2, 4)), np.ones((2, 3)))[0]

    def huge():
        return scaled_dot_product_attention(np.ones((1 << 14, 1)), np.ones((1 << 14, 1)), np.ones((1 << 14, 1)))[0]

    def from_a_thread():
        import threading
        box = []
        t = threading.Thread(target=lambda: box.append(_try(lambda: scaled_dot_product_attention(
            np.ones((2, 2)), np.ones((2, 2)), np.ones((2, 2))))))
        t.start()
        t.join()
        return [float(box[0])]

    def _try(fn):
        try:
            fn()
            return 1
        except RuntimeError:
            return 0
    """
    with sandbox.session("causal_mask", src(code), "causal_mask.py", provided=_provided("causal_mask")) as s:
        out = s.call("wrong")
        assert out.status == "raised" and out.error is not None and out.error.type == "ValueError", out
        assert out.error.function == "wrong" and out.error.line == 5
        out = s.call("huge")     # refused before anything is allocated: the call is lost, the next gets a new child
        assert out.status == "crashed" and out.reason == "refused" and "(16384, 16384)" in out.message, out
        # a thread cannot talk over the socket while the main thread does
        assert s.call("from_a_thread").value.tolist() == [0.0]
        assert s.call("wrong").status == "raised"
    code = """
from causal_mask import create_causal_mask

def big():
    return create_causal_mask(10 ** 6)
"""
    with sandbox.session("multihead", code, "multihead.py", provided=_provided("multihead")) as s:
        out = s.call("big")
        assert out.status == "crashed" and out.reason == "refused" and "(1000000, 1000000)" in out.message, out


def test_source_text_is_never_accepted_as_provided(sandbox):
    with pytest.raises(TypeError):
        with sandbox.session("causal_mask", "x = 1\n", "causal_mask.py", provided={"attention": "def softmax(x): ..."}):
            pass


# ---------------------------------------------------------------------- prices

def test_prices_count_every_array_the_reference_makes_before_it_runs():
    from autograder.grading.provided import PRICES, provided_for
    from autograder.sandbox.provided import MAX_ELEMENTS, MAX_WORK

    sdpa = provided_for("causal_mask")["attention"]["scaled_dot_product_attention"].cost
    B = 40_000
    # three inputs of 40 000 numbers, scores of B x B: the price is the scores'
    bomb = sdpa(np.ones((B, 1, 1, 1)), np.ones((1, B, 1, 1)), np.ones((1, B, 1, 1)))
    assert bomb.largest == B * B and "(40000, 40000, 1, 1)" in bomb.what
    # V's batch dimensions broadcast the output further than the scores
    wide = sdpa(np.ones((1, 3, 2)), np.ones((1, 4, 2)), np.ones((500, 1, 4, 7)))
    assert wide.largest == 500 * 3 * 7 and wide.work == 3 * 4 * 2 + 500 * 3 * 4 * 7
    # what a scaling experiment of the course's size may ask: (n_trials, seq_len, d) = (1000, 4, 256)
    x = np.ones((1000, 4, 256))
    honest = sdpa(x, x, x)
    assert honest.largest <= MAX_ELEMENTS and honest.work <= MAX_WORK
    mask = provided_for("multihead")["causal_mask"]["create_causal_mask"].cost
    assert mask(np.int64(8)).largest == 64
    for size, what in ((60000.0, "got float"), (True, "got bool"), (np.array(60000), "got a 0-d array"),
                       ([8], "got list")):
        with pytest.raises(TypeError, match=f"seq_len expected an int, {what}"):
            mask(size)
    causal = provided_for("multihead")["causal_mask"]["causal_attention"].cost
    assert causal(np.ones((3, 2)), np.ones((3, 2)), np.ones((3, 5))).largest == 15
    # every function a submission may import has its own price
    assert {(stem, name) for s in ("hand_computation", "causal_mask", "scaling", "multihead")
            for stem, names in provided_for(s).items() for name in names} <= set(PRICES)


def test_a_refused_call_at_import_costs_the_file_with_its_reason(sandbox, tmp_path):
    """Scores of 2000 x 2000 (32 MB, small enough for any machine) are above the bound: the
    import is stopped, and every check of the stem says it was refused."""
    from autograder.checks import check_ids
    from autograder.config import load_course
    from autograder.grading.submission import grade_submission

    code = """
    import numpy as np
    from attention import scaled_dot_product_attention

    scaled_dot_product_attention(np.ones((2000, 1)), np.ones((2000, 1)), np.ones((2000, 1)))
    """
    with sandbox.session("causal_mask", src(code), "causal_mask.py", provided=_provided("causal_mask")) as s:
        assert s.import_outcome.status == "not_run" and s.import_outcome.reason == "refused", s.import_outcome
        assert "importing causal_mask.py was stopped: it asked" in s.import_outcome.message
    (tmp_path / "causal_mask.py").write_text(src(code))
    result = grade_submission(tmp_path, load_course(known_checks=check_ids()), sandbox, stems=("causal_mask",))
    assert {(c.status, c.reason) for c in result.checks} == {("error", "refused")}


def test_a_function_refused_once_is_not_called_again_so_the_others_keep_their_restarts(sandbox):
    code = """
    import numpy as np
    from attention import softmax, scaled_dot_product_attention

    def bad():
        return scaled_dot_product_attention(np.ones((2000, 1)), np.ones((2000, 1)), np.ones((2000, 1)))[0]

    def good():
        return softmax(np.zeros(4))
    """
    with sandbox.session("causal_mask", src(code), "causal_mask.py", provided=_provided("causal_mask")) as s:
        for attempt in range(LIMITS.max_restarts + 1):
            out = s.call("bad")
            assert out.status == "crashed" and out.reason == "refused", (attempt, out)
        assert "not run again: an earlier call of bad stopped" in out.message, out.message
        assert s.call("good").value.tolist() == [0.25] * 4
        assert s.restarts == 1
