"""Red team: a stem that imports another exercise gets correct answers, never the kit's code
(issue 8.2). The provided functions are proxies answered by the grader."""

from __future__ import annotations

import textwrap

import numpy as np
import pytest

from autograder.grading import _provided
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
        out = s.call("huge")
        assert out.status == "raised" and "larger than" in out.message, out
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
        assert out.status == "raised" and "larger than" in out.message, out


def test_source_text_is_never_accepted_as_provided(sandbox):
    with pytest.raises(TypeError):
        with sandbox.session("causal_mask", "x = 1\n", "causal_mask.py", provided={"attention": "def softmax(x): ..."}):
            pass
