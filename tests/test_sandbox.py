"""The sandbox: student code runs in a forked child; everything comes back as a CallOutcome.

Hostile submissions are inline strings. Timeouts are small (1-2 s) so the file stays fast. The
tests say which limit stopped a call (its reason and message), never how long it took: on a
loaded machine the wall time of everything stretches.
"""

from __future__ import annotations

import os
import sys
import signal
import textwrap
import time

import numpy as np
import pytest

from autograder.sandbox import CallOutcome, Limits, Reason, Sandbox
from autograder.sandbox.inside import protocol

PAIR = ("tuple", "array", "array")
# The wall backstop far off: a loop starved by a loaded machine still meets its CPU limit first,
# so the reasons asserted here do not depend on the load.
LIMITS = Limits(call_timeout=1.0, import_timeout=2.0, memory_mb=512, cpu_seconds=20, max_processes=64,
                output_kb=256, wall_factor=30)

SOFTMAX = """
import numpy as np

def softmax(x, axis=-1):
    x = np.asarray(x, dtype=np.float64)
    e = np.exp(x - x.max(axis=axis, keepdims=True))
    return e / e.sum(axis=axis, keepdims=True)
"""


def src(text: str) -> str:
    return textwrap.dedent(text).lstrip("\n")


def np_softmax(x):
    e = np.exp(x - x.max(axis=-1, keepdims=True))
    return e / e.sum(axis=-1, keepdims=True)


def run(sandbox, source, function, *args, returns="array", stem="attention", provided=None, timeout=None,
        **kwargs) -> CallOutcome:
    with sandbox.session(stem, src(source), f"{stem}.py", provided=provided) as s:
        assert s.import_outcome.status == "ok", s.import_outcome
        return s.call(function, list(args), kwargs, returns=returns, timeout=timeout)


def proc_stat(pid: int):
    """(state, session id) of a process, or None when it is gone."""
    try:
        with open(f"/proc/{pid}/stat", "rb") as f:
            data = f.read()
    except OSError:
        return None
    rest = data[data.rfind(b")") + 2:].split()
    return rest[0].decode(), int(rest[3])


def live_in_session(sid: int) -> list[int]:
    pids = []
    for name in os.listdir("/proc"):
        if name.isdigit():
            st = proc_stat(int(name))
            if st is not None and st[1] == sid and st[0] not in ("Z", "X"):
                pids.append(int(name))
    return pids


def wait_gone(pids, timeout=3.0) -> list[int]:
    """The pids still alive (not gone, not zombies) after waiting up to `timeout`."""
    deadline = time.monotonic() + timeout
    while True:
        alive = [p for p in pids if (st := proc_stat(p)) is not None and st[0] not in ("Z", "X")]
        if not alive or time.monotonic() > deadline:
            return alive
        time.sleep(0.05)


# ====================================================================== values that come back

def test_correct_softmax_is_ok_with_float64_values(sandbox):
    x = np.array([[1.0, 2.0, 3.0], [0.0, 0.0, 1e4]])
    out = run(sandbox, SOFTMAX, "softmax", x)
    assert out.status == "ok", out
    assert type(out.value) is np.ndarray and out.value.dtype == np.float64
    assert out.dtype == "float64"
    np.testing.assert_allclose(out.value, np_softmax(x))


def test_float32_tensor_and_list_report_their_dtype(sandbox):
    code = """
    import numpy as np
    import torch

    def f32(x):
        return np.asarray(x, dtype=np.float32) * 2

    def as_list(x):
        return [[float(v) for v in row] for row in x]

    def grad_tensor(x):
        t = torch.tensor(x, dtype=torch.float32, requires_grad=True)
        return t * 3

    def ints():
        return np.arange(4)

    def matrix():
        return np.matrix([[1, 2], [3, 4]])
    """
    x = np.array([[1.0, 2.0], [3.0, 4.0]])
    with sandbox.session("attention", src(code), "attention.py") as s:
        out = s.call("f32", [x], returns="array")
        assert (out.status, out.dtype, out.value.dtype) == ("ok", "float32", np.float64)
        np.testing.assert_allclose(out.value, 2 * x)
        out = s.call("as_list", [x], returns="array")
        assert (out.status, out.dtype) == ("ok", "list")
        np.testing.assert_array_equal(out.value, x)
        out = s.call("grad_tensor", [x], returns="array")
        assert (out.status, out.dtype) == ("ok", "float32")
        np.testing.assert_allclose(out.value, 3 * x)
        out = s.call("ints", returns="array")
        assert (out.status, out.dtype) == ("ok", "int64")
        out = s.call("matrix", returns="array")
        assert out.status == "ok" and type(out.value) is np.ndarray and out.value.shape == (2, 2)


def test_tuple_kind_and_its_errors(sandbox):
    code = """
    import numpy as np

    def pair(x):
        return x + 1, x.astype(np.float32)

    def one(x):
        return x

    def three(x):
        return x, x, x

    def second_is_none(x):
        return x, None
    """
    x = np.ones((2, 3))
    with sandbox.session("attention", src(code), "attention.py") as s:
        out = s.call("pair", [x], returns=PAIR)
        assert out.status == "ok" and out.dtype == ["float64", "float32"]
        assert isinstance(out.value, tuple) and len(out.value) == 2
        np.testing.assert_array_equal(out.value[0], x + 1)
        out = s.call("one", [x], returns=PAIR)
        assert out.status == "bad_return"
        assert out.message.startswith("returned 1 value (ndarray), expected 2"), out.message
        out = s.call("three", [x], returns=PAIR)
        assert (out.status, out.message) == ("bad_return", "returned 3 values, expected 2")
        out = s.call("second_is_none", [x], returns=PAIR)
        assert out.status == "bad_return"
        assert out.message == "returned NoneType as value 2 of 2, expected an array"


def test_non_arrays_are_bad_returns_naming_the_type(sandbox):
    code = """
    class Sneaky:
        def __array__(self, dtype=None, copy=None):
            import numpy as np
            return np.zeros(3)
        def __eq__(self, other):
            return True

    def string():
        return "0.1 0.2 0.7"

    def nothing():
        pass

    def mapping():
        return {"a": 1}

    def sneaky():
        return Sneaky()

    def strings_in_list():
        return [[1.0, "2"]]

    def ragged():
        return [[1.0, 2.0], [3.0]]

    def complex_array():
        import numpy as np
        return np.ones(2) * 1j
    """
    with sandbox.session("attention", src(code), "attention.py") as s:
        cases = {"string": "returned str, expected an array", "nothing": "returned NoneType, expected an array",
                 "mapping": "returned dict, expected an array", "sneaky": "returned Sneaky, expected an array",
                 "strings_in_list": "returned a list containing str, expected an array of numbers",
                 "complex_array": "returned a complex array, expected a real array"}
        for name, message in cases.items():
            out = s.call(name, returns="array")
            assert (out.status, out.message) == ("bad_return", message), name
        out = s.call("ragged", returns="array")
        assert out.status == "bad_return" and "different lengths" in out.message
        out = s.call("sneaky", returns="figure")
        assert (out.status, out.message) == ("bad_return", "returned Sneaky, expected a matplotlib Figure")


def test_attribute_reads_module_level_values(sandbox):
    code = """
    SCORES = [[1, 0], [1, 1]]
    WEIGHTS = None
    """
    with sandbox.session("hand_computation", src(code), "hand_computation.py") as s:
        out = s.attribute("SCORES", returns="array")
        assert (out.status, out.dtype) == ("ok", "list")
        np.testing.assert_array_equal(out.value, [[1, 0], [1, 1]])
        out = s.attribute("WEIGHTS", returns="array")
        assert (out.status, out.message) == ("bad_return", "returned NoneType, expected an array")
        out = s.attribute("OUTPUT", returns="array")
        assert (out.status, out.message) == ("missing", "hand_computation.py defines no OUTPUT")


def test_float_dict_dict(sandbox):
    code = """
    import numpy as np

    def scaling_experiment(dims=(4, 16)):
        return {np.int64(d): {"std_scaled": np.float64(1.0), "std_unscaled": float(np.sqrt(d))} for d in dims}

    def bad_keys():
        return {"4": {"std_scaled": 1.0}}

    def not_a_dict():
        return [1, 2]
    """
    with sandbox.session("scaling", src(code), "scaling.py") as s:
        out = s.call("scaling_experiment", [], {"dims": (4, 16)}, returns="float_dict_dict")
        assert out.status == "ok", out
        assert out.value == {4: {"std_scaled": 1.0, "std_unscaled": 2.0}, 16: {"std_scaled": 1.0, "std_unscaled": 4.0}}
        assert all(type(k) is int for k in out.value)
        out = s.call("bad_keys", returns="float_dict_dict")
        assert out.status == "bad_return" and "'4' (str)" in out.message
        out = s.call("not_a_dict", returns="float_dict_dict")
        assert (out.status, out.message) == ("bad_return", "returned list, expected a dict {d: {name: value}}")


def test_figure_description(sandbox):
    code = """
    import matplotlib.pyplot as plt

    def plot_scaling(results):
        fig, ax = plt.subplots()
        dims = sorted(results)
        ax.plot(dims, [results[d]["a"] for d in dims], label="unscaled")
        ax.plot(dims, [results[d]["b"] for d in dims], "o-", label="scaled")
        ax.scatter([1, 2], [3, 4])
        ax.set_xscale("log")
        ax.set_xlabel("d")
        ax.set_ylabel("entropy")
        ax.set_title("Scaling")
        ax.legend()
        fig.suptitle("sqrt(d_k)")
        return fig

    def not_a_figure(results):
        return "a figure"
    """
    results = {4: {"a": 1.0, "b": 2.0}, 16: {"a": 3.0, "b": 4.0}}
    with sandbox.session("scaling", src(code), "scaling.py") as s:
        out = s.call("plot_scaling", [results], returns="figure")
        assert out.status == "ok", out
        fig = out.value
        assert fig["suptitle"] == "sqrt(d_k)"
        (ax,) = fig["axes"]
        assert (ax["title"], ax["xlabel"], ax["ylabel"], ax["xscale"]) == ("Scaling", "d", "entropy", "log")
        assert ax["legend"] == ["unscaled", "scaled"]
        # a scatter is a series too: it follows the lines, with matplotlib's default label
        assert [line["label"] for line in ax["lines"]] == ["unscaled", "scaled", "_child2"]
        assert ax["lines"][0]["x"] == [4.0, 16.0] and ax["lines"][1]["y"] == [2.0, 4.0]
        assert ax["lines"][2]["x"] == [1.0, 2.0] and ax["lines"][2]["y"] == [3.0, 4.0]
        assert ax["collections"] == 1
        out = s.call("not_a_figure", [results], returns="figure")
        assert (out.status, out.message) == ("bad_return", "returned str, expected a matplotlib Figure")


def test_warm_zygote_leaves_no_figure_behind(sandbox):
    """The zygote lays out a pyplot figure once to warm matplotlib: a child sees pyplot as a fresh
    interpreter does (no open figure, the first one is Figure 1, default rcParams)."""
    code = """
    import matplotlib
    import matplotlib.pyplot as plt

    def state():
        before = plt.get_fignums()
        fig = plt.figure()
        return {1: {"open_before": float(len(before)), "number": float(fig.number),
                    "rc_changed": float(sum(matplotlib.rcParams[k] != v
                                            for k, v in matplotlib.rcParamsDefault.items()
                                            if k not in ("backend", "backend_fallback")))}}
    """
    with sandbox.session("scaling", src(code), "scaling.py") as s:
        out = s.call("state", returns="float_dict_dict")
    assert out.status == "ok", out
    assert out.value == {1: {"open_before": 0.0, "number": 1.0, "rc_changed": 0.0}}


def test_the_child_collects_its_garbage_as_python_does(sandbox):
    """A child collects garbage as a fresh interpreter does, its own cycles included; nothing of
    what it was forked with is frozen out of its collections."""
    code = """
    import gc
    import weakref

    class Node:
        pass

    def state():
        node = Node()
        node.self = node                 # a cycle: only the collector frees it
        alive = weakref.ref(node)
        del node
        freed = gc.collect()
        return {1: {"enabled": float(gc.isenabled()), "frozen": float(gc.get_freeze_count()),
                    "cycle_freed": float(alive() is None and freed > 0)}}
    """
    for stem in ("attention", "multihead"):      # the numpy zygote, and the torch one
        source = ("import torch\n" if stem == "multihead" else "") + src(code)
        with sandbox.session(stem, source, f"{stem}.py") as s:
            out = s.call("state", returns="float_dict_dict")
        assert out.status == "ok", out
        assert out.value[1]["enabled"] == 1.0 and out.value[1]["cycle_freed"] == 1.0, (stem, out.value)
        assert out.value[1]["frozen"] == 0.0, (stem, out.value)


def test_call_module_with_state(sandbox):
    code = """
    import torch
    from torch import nn

    class Tiny(nn.Module):
        def __init__(self, d_model, num_heads):
            super().__init__()
            self.W_q = nn.Linear(d_model, d_model)
            self.num_heads = num_heads

        def forward(self, x, mask=None):
            y = self.W_q(x)
            if mask is not None:
                y = y * mask
            return y, torch.ones(x.shape[0], self.num_heads)

    class NotAModule:
        def __init__(self, d_model, num_heads):
            pass
    """
    d = 3
    rng = np.random.default_rng(0)
    w = rng.normal(size=(d, d)).astype(np.float32)
    b = rng.normal(size=d).astype(np.float32)
    x = rng.normal(size=(2, 4, d)).astype(np.float32)
    mask = np.ones((2, 4, d), dtype=np.float32)
    mask[:, :, 0] = 0
    with sandbox.session("multihead", src(code), "multihead.py") as s:
        out = s.call_module("Tiny", init_args=[d, 2], init_kwargs={}, state={"W_q.weight": w, "W_q.bias": b},
                            forward_args=[x], forward_kwargs={"mask": mask}, returns=PAIR)
        assert out.status == "ok", out
        assert out.dtype == ["float32", "float32"]
        np.testing.assert_allclose(out.value[0], (x @ w.T + b) * mask, rtol=1e-5, atol=1e-6)
        assert out.value[1].shape == (2, 2)
        out = s.call_module("Tiny", init_args=[d, 2], state={"W_q.weight": np.zeros((d, d + 1), np.float32)},
                            forward_args=[x], returns=PAIR)
        assert out.status == "bad_return" and "W_q.weight has shape (3, 3), expected (3, 4)" in out.message
        out = s.call_module("Tiny", init_args=[d, 2], state={"W_o.weight": w}, forward_args=[x], returns=PAIR)
        assert out.status == "bad_return" and "has no parameter W_o.weight" in out.message
        out = s.call_module("NotAModule", init_args=[d, 2], forward_args=[x], returns=PAIR)
        assert out.status == "bad_return" and "expected a torch.nn.Module" in out.message
        out = s.call_module("Missing", init_args=[d, 2], forward_args=[x], returns=PAIR)
        assert (out.status, out.message) == ("missing", "multihead.py defines no class Missing")


def test_a_file_without_the_module_class_is_told_so_without_importing_torch(sandbox):
    """A multihead.py of numpy functions only: asking for its module says "defines no class" at
    once. Importing torch first (seconds of CPU) timed a loaded machine's call out instead."""
    code = """
    import sys
    import numpy as np

    def split_heads(x, num_heads):
        return x

    def torch_loaded():
        return float("torch" in sys.modules)
    """
    x = np.ones((1, 2, 4), dtype=np.float32)
    with sandbox.session("multihead", src(code), "multihead.py") as s:
        assert s.call("torch_loaded", []).value == 0.0
        out = s.call_module("MultiHeadAttention", init_args=[4, 2], forward_args=[x], returns=PAIR, timeout=0.3)
        assert (out.status, out.message) == ("missing", "multihead.py defines no class MultiHeadAttention")
        assert s.call("torch_loaded", []).value == 0.0


# ====================================================================== errors in the student's code

def test_missing_and_not_callable(sandbox):
    code = """
    softmax = 3
    """
    with sandbox.session("attention", src(code), "attention.py") as s:
        out = s.call("scaled_dot_product_attention", [1.0], returns=PAIR)
        assert (out.status, out.message) == ("missing", "attention.py defines no function scaled_dot_product_attention")
        out = s.call("softmax", [1.0])
        assert (out.status, out.message) == ("missing", "softmax in attention.py is a int, not a function")


def test_raised_names_exception_and_student_line(sandbox):
    code = """
    import numpy as np

    def helper(x):
        raise ValueError("axis must be -1")

    def softmax(x, axis=-1):
        return helper(x)

    def not_implemented(x):
        raise NotImplementedError
    """
    with sandbox.session("attention", src(code), "attention.py") as s:
        out = s.call("softmax", [np.ones(3)])
        assert out.status == "raised"
        assert out.message == "ValueError: axis must be -1 (attention.py, line 4, in helper)"
        out = s.call("not_implemented", [np.ones(3)])
        assert out.message == "NotImplementedError (attention.py, line 10, in not_implemented)"
        out = s.call("softmax", [], {"bogus": 1})
        assert out.status == "raised" and out.message.startswith("TypeError: softmax() got an unexpected keyword")


def test_exits_and_base_exceptions_are_raised_not_fatal(sandbox):
    code = """
    import sys

    class Escape(BaseException):
        pass

    def exits():
        sys.exit(3)

    def system_exit():
        raise SystemExit

    def interrupt():
        raise KeyboardInterrupt

    def generator_exit():
        raise GeneratorExit("bye")

    def custom():
        raise Escape("out")

    def fine():
        return [1.0]
    """
    with sandbox.session("attention", src(code), "attention.py") as s:
        assert s.call("exits").message == "SystemExit: 3 (the function called sys.exit) (attention.py, line 7, in exits)"
        assert s.call("system_exit").message.startswith("SystemExit: (the function called sys.exit)")
        assert s.call("interrupt").message == "KeyboardInterrupt (attention.py, line 13, in interrupt)"
        assert s.call("generator_exit").message.startswith("GeneratorExit: bye")
        out = s.call("custom")
        assert (out.status, out.message) == ("raised", "Escape: out (attention.py, line 19, in custom)")
        assert s.call("fine").status == "ok"
        assert s.restarts == 0


def test_a_zygote_keeps_sites_builtins_and_isolations_path(course, tmp_path, monkeypatch):
    """The zygote takes the grader's import path: a student's exit()
    still raises SystemExit as `site`'s builtin does, and what isolation (-I) leaves out of the
    path -- a folder the grader has on its own path, its current folder -- stays out: a numpy
    there is not the one the zygote imports."""
    from autograder.sandbox import Sandbox

    graders_own = tmp_path / "graders-own-folder"
    (graders_own / "numpy").mkdir(parents=True)
    (graders_own / "numpy" / "__init__.py").write_text("raise ImportError('the grader-only folder was used')\n")
    monkeypatch.syspath_prepend(str(graders_own))
    monkeypatch.chdir(tmp_path)
    code = """
    import builtins
    import sys

    def calls_exit():
        exit(2)

    def sites_builtins():
        return [float(hasattr(builtins, name)) for name in ("exit", "quit", "help", "copyright")]

    def path_entries():
        return [float(any("graders-own-folder" in p for p in sys.path)), float("" in sys.path), len(sys.path)]
    """
    with Sandbox(course.limits) as box, box.session("attention", src(code), "attention.py") as s:
        out = s.call("calls_exit")
        assert out.message.startswith("SystemExit: 2 (the function called sys.exit)"), out.message
        assert s.call("sites_builtins").value.tolist() == [1.0, 1.0, 1.0, 1.0]
        found_own, found_cwd, entries = s.call("path_entries").value.tolist()
        assert (found_own, found_cwd) == (0.0, 0.0) and entries >= 3    # the stdlib's and site-packages


def test_syntax_error_is_not_run_with_line(sandbox):
    code = "import numpy as np\n\ndef softmax(x)\n    return x\n"
    with sandbox.session("attention", code, "attention.py") as s:
        assert s.import_outcome.status == "not_run"
        assert s.import_outcome.message == "SyntaxError: expected ':' (attention.py, line 3)"
        out = s.call("softmax", [1.0])
        assert (out.status, out.message) == ("not_run", s.import_outcome.message)


def test_exception_and_exit_at_import(sandbox):
    with sandbox.session("attention", "import numpy as np\nx = undefined_name\n", "attention.py") as s:
        assert s.import_outcome.status == "not_run"
        assert s.import_outcome.message == "NameError: name 'undefined_name' is not defined (attention.py, line 2)"
    with sandbox.session("attention", "import sys\nprint('bye')\nsys.exit(0)\n", "attention.ipynb") as s:
        assert s.import_outcome.status == "not_run"
        assert "SystemExit: 0 (the module called sys.exit)" in s.import_outcome.message
        assert "attention.ipynb, line 3" in s.import_outcome.message
        assert s.import_outcome.output == "bye\n"
    with sandbox.session("attention", "import os\nos._exit(4)\n", "attention.py") as s:
        assert s.import_outcome.status == "not_run"
        assert "crashed while importing attention.py" in s.import_outcome.message
        assert "code 4" in s.import_outcome.message


def test_infinite_loop_at_import_costs_one_import_timeout(sandbox):
    with sandbox.session("attention", "while True:\n    pass\n", "attention.py") as s:
        imported = s.import_outcome
        assert (imported.status, imported.reason) == ("not_run", Reason.TIMEOUT)
        assert "did not finish within 2 s" in imported.message
        for x in (1.0, 2.0):     # answered from the import's outcome: no child imports the file again
            out = s.call("softmax", [x])
            assert (out.status, out.reason, out.message) == ("not_run", Reason.TIMEOUT, imported.message)
        assert s.restarts == 0


# ====================================================================== hangs, crashes, resources

HANGS = """
import os
import signal
import time

import numpy as np

def loop(x):
    while True:
        pass

def sleeps(x):
    time.sleep(100)

def stubborn(x):
    signal.signal(signal.SIGTERM, signal.SIG_IGN)
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    while True:
        time.sleep(0.01)

def softmax(x, axis=-1):
    e = np.exp(x - x.max(axis=axis, keepdims=True))
    return e / e.sum(axis=axis, keepdims=True)

def pid():
    return [os.getpid()]
"""


def test_timeouts_kill_and_restart_once_per_hang(sandbox):
    x = np.array([1.0, 2.0])
    with sandbox.session("attention", src(HANGS), "attention.py") as s:
        first = int(s.call("pid").value[0])
        for name in ("loop", "sleeps", "stubborn"):
            out = s.call(name, [x])
            # the call's own limit stopped it: CPU time for a loop, no progress for a sleeper
            assert (out.status, out.message) == ("timeout", "stopped after 1 s"), (name, out)
            assert out.reason == (Reason.CPU if name == "loop" else Reason.WALL), (name, out)
            ok = s.call("softmax", [x])        # the next call gets a fresh child
            assert ok.status == "ok", ok
            np.testing.assert_allclose(ok.value, np_softmax(x))
        assert s.restarts == 3
        again = s.call("loop", [x])           # a function that hung is not run again
        assert again.status == "timeout" and again.message.startswith("not run again")
        # nor sent to the child: it still answers, with no restart left to replace it
        assert s.call("softmax", [x]).status == "ok" and s.restarts == 3


def test_timeout_per_call_overrides_the_limit(sandbox):
    with sandbox.session("attention", src(HANGS), "attention.py") as s:
        out = s.call("sleeps", [1.0], timeout=0.3)
        assert (out.status, out.reason, out.message) == ("timeout", Reason.WALL, "stopped after 0.3 s")


def test_a_call_that_progresses_too_slowly_meets_the_wall_backstop():
    """A child that gets about a twentieth of a core (as on a crowded machine) is making
    progress, so neither its CPU limit nor the no-progress rule ends it: the backstop of
    wall_factor times the limit does (here limit + 2 s), and the message says it was wall time."""
    code = """
    import time

    def crawls():
        while True:
            busy = time.process_time()
            while time.process_time() - busy < 0.003:
                pass
            time.sleep(0.057)
    """
    with Sandbox(Limits(call_timeout=0.3, import_timeout=5, wall_factor=1)) as sb:
        with sb.session("attention", src(code), "attention.py") as s:
            out = s.call("crawls")
    assert (out.status, out.reason) == ("timeout", Reason.WALL), out
    assert out.message.startswith("stopped after ") and out.message.endswith(
        " s of wall time (limit 0.3 s of CPU time)"), out.message


def test_restarts_are_limited(sandbox):
    code = """
    import os

    def die(i):
        os._exit(i)

    def fine():
        return [1.0]
    """
    with sandbox.session("attention", src(code), "attention.py") as s:
        for i in range(1, LIMITS.max_restarts + 2):
            out = s.call("die", [i])
            assert out.status == "crashed" and f"os._exit({i})" in out.message
        out = s.call("fine")
        assert out.status == "crashed" and out.message.startswith("not run: the process exited with code 4")


@pytest.mark.parametrize("body, expected", [
    ("os._exit(3)", "the process exited with code 3 (the code called os._exit(3) or similar)"),
    ("os.kill(os.getpid(), signal.SIGSEGV)", "the process was killed by signal 11 (segmentation fault)"),
    ("ctypes.string_at(0)", "the process was killed by signal 11 (segmentation fault)"),
    ("os.abort()", "the process was killed by signal 6 (aborted)"),
])
def test_crashes_are_reported_and_the_next_call_works(sandbox, body, expected):
    code = f"""
    import ctypes
    import os
    import signal

    def crash():
        {body}

    def fine():
        return [1.0, 2.0]
    """
    with sandbox.session("attention", src(code), "attention.py") as s:
        out = s.call("crash")
        assert (out.status, out.message) == ("crashed", expected)
        assert s.call("fine").status == "ok"


def test_memory_bombs_are_stopped_and_the_next_session_works(sandbox):
    code = """
    def big_bytes():
        return bytearray(10 ** 11)

    def growing():
        chunks = []
        while True:
            chunks.append(bytearray(10 ** 7))

    def torch_big():
        import torch
        return torch.zeros(10 ** 11)

    def fine():
        return [1.0]
    """
    with sandbox.session("attention", src(code), "attention.py") as s:
        for name in ("big_bytes", "growing", "torch_big"):
            out = s.call(name, timeout=5)
            assert out.status == "crashed", (name, out)
            assert "exceeded the memory limit of 512 MB" in out.message, out.message
            assert s.call("fine").status == "ok"
    assert run(sandbox, SOFTMAX, "softmax", np.ones(2)).status == "ok"


def test_cpu_limit():
    """The process's CPU limit (1 s) stops the spin, not the call's timeout (5 s)."""
    code = """
    def spin():
        while True:
            pass
    """
    with Sandbox(Limits(call_timeout=5, import_timeout=5, cpu_seconds=1)) as sb:
        with sb.session("attention", src(code), "attention.py") as s:
            out = s.call("spin")
            assert (out.status, out.reason, out.message) == ("crashed", Reason.SIGNAL,
                                                             "exceeded the CPU time limit of 1 s")


def _ppid(pid: int) -> int | None:
    try:
        with open(f"/proc/{pid}/stat", "rb") as f:
            data = f.read()
    except OSError:
        return None
    return int(data[data.rfind(b")") + 2:].split()[1])


def test_big_prints_are_capped_not_fatal(sandbox):
    code = """
    import sys

    print("at import")

    def chatty(x):
        for i in range(10_000):
            print("x" * 1000)
        sys.stdout.write("y" * 10_000_000)
        sys.stderr.write("z" * 5_000_000)
        print("the end")
        return x

    def quiet(x):
        print("only this")
        return x
    """
    with sandbox.session("attention", src(code), "attention.py") as s:
        assert s.import_outcome.output == "at import\n"
        out = s.call("chatty", [np.ones(2)], timeout=10)
        assert out.status == "ok", out
        assert len(out.output) <= 2048 and out.output.endswith("the end\n")
        out = s.call("quiet", [np.ones(2)])
        assert (out.status, out.output) == ("ok", "only this\n")
        assert os.fstat(s._child.cap_fd).st_size <= LIMITS.output_bytes


# ====================================================================== isolation and integrity

def test_kit_code_cannot_be_imported(sandbox):
    code = """
    import os

    def try_import(name):
        try:
            __import__(name)
        except ImportError as err:
            raise RuntimeError(str(err)) from None
        return [1.0]

    def neighbours():
        names = sorted(os.listdir("."))
        found = [os.path.exists(p) for p in ("solutions/attention.py", "../reference/attention.py",
                                               "reference", "autograder")]
        return [len(names), sum(found)]
    """
    with sandbox.session("attention", src(code), "attention.py") as s:
        for name in ("reference", "autograder", "autograder.sandbox", "solutions", "exercises", "attnkit",
                     "__editable___attnkit_0_1_0_finder", "_attnkit_sandbox_protocol"):
            out = s.call("try_import", [name])
            assert (out.status, out.message.split(" (")[0]) == \
                ("raised", "RuntimeError: the kit's own code is not available to submissions"), name
        out = s.call("neighbours")
        assert out.status == "ok"
        # attention.py alone, and no kit; beside it, where the interpreter lives under /tmp (a venv
        # made there), the folder the jail binds it in (inside/jail.py, UNDER_CHILD_TMPFS)
        assert out.value.tolist() == [1.0 + len(_interpreter_folders_in_tmp()), 0.0]


def _interpreter_folders_in_tmp() -> set[str]:
    prefixes = {os.path.realpath(p) for p in (sys.prefix, sys.base_prefix, sys.exec_prefix, sys.base_exec_prefix,
                                              os.path.dirname(os.path.realpath(sys.executable)))}
    return {p.split("/")[2] for p in prefixes if p.startswith("/tmp/")}


def test_the_module_is_not_main_and_has_its_own_file(sandbox):
    code = """
    import sys
    RAN_MAIN = False
    if __name__ == "__main__":
        RAN_MAIN = True

    def names():
        return [__name__ == "attention", __file__.endswith("/attention.py"), RAN_MAIN,
                sys.modules["attention"].names is names]
    """
    out = run(sandbox, code, "names")
    assert out.value.tolist() == [1.0, 1.0, 0.0, 1.0]


def test_monkeypatching_numpy_in_the_child_changes_nothing_here(sandbox):
    code = """
    import numpy as np

    np.allclose = lambda *a, **k: True
    np.testing.assert_allclose = lambda *a, **k: None
    np.isclose = lambda *a, **k: np.ones(np.shape(a[0]), dtype=bool)
    np.array_equal = lambda *a, **k: True

    def softmax(x, axis=-1):
        return np.zeros_like(x)
    """
    out = run(sandbox, code, "softmax", np.array([1.0, 2.0]))
    assert out.status == "ok"
    assert not np.allclose(out.value, np_softmax(np.array([1.0, 2.0])))


def test_forged_frames_from_the_child_are_bad_returns(sandbox):
    code = """
    import os
    import struct

    def garbage():
        os.write(3, struct.pack(">I", 2 ** 31) + b"{")
        return [1.0]

    def fake_figure():
        header = b'{"status":"ok","value":"not a figure","dtype":"Figure","seq":1,"__blobs__":0}'
        os.write(3, struct.pack(">I", len(header)) + header)
        import time
        time.sleep(0.2)
        return "whatever"

    def fine():
        return [1.0]
    """
    with sandbox.session("scaling", src(code), "scaling.py") as s:
        out = s.call("fake_figure", returns="figure")
        assert out.status == "bad_return" and "could not be read" in out.message
        out = s.call("garbage")
        assert out.status == "bad_return" and "could not be read" in out.message
        assert s.call("fine").status == "ok"


def test_zygote_death_is_a_crash_and_the_sandbox_recovers():
    with Sandbox(Limits(call_timeout=2, import_timeout=5)) as sb:
        with sb.session("attention", src(HANGS), "attention.py") as s:
            assert s.call("softmax", [np.ones(2)]).status == "ok"
            os.kill(sb.zygotes.any().pid, signal.SIGKILL)
            out = s.call("sleeps", [1.0])
            # seen as the server's death, not waited out as a sleeping call's timeout
            assert (out.status, out.reason, out.message) == ("crashed", Reason.SANDBOX,
                                                             "the sandbox's server process died"), out
        out = run(sb, SOFTMAX, "softmax", np.ones(2))
        assert out.status == "ok"
        assert sb.zygotes.restarts == 1


def test_a_zygote_started_again_is_forked_from_the_imports_already_made():
    """Its template still runs: the new zygote is its fork, not a new interpreter importing numpy."""
    with Sandbox(Limits(call_timeout=2, import_timeout=5)) as sb:
        assert run(sb, SOFTMAX, "softmax", np.ones(2)).status == "ok"
        dead = sb.zygotes.any()
        os.kill(dead.pid, signal.SIGKILL)
        dead.proc.wait(10)
        assert run(sb, SOFTMAX, "softmax", np.ones(2)).status == "ok"
        again = sb.zygotes.any()
        assert again is not dead and sb.zygotes.restarts == 1
        assert again.proc.template is dead.proc.template and again.proc.template.alive()
        with open(f"/proc/{again.pid}/stat", "rb") as f:
            assert int(f.read().rsplit(b")", 1)[1].split()[1]) == again.proc.template.proc.pid


def test_a_template_told_to_exit_while_importing_ends_at_once_with_a_spawn_waiting():
    """Its watcher reads the requests during the imports: a spawn waits for them, an exit does not
    (and nothing is forked for the spawn)."""
    import socket
    import tempfile

    from autograder.sandbox.template_process import NEVER_FORKED, Template, template_launch

    template = Template(template_launch({"torch": True, "matplotlib": True}))
    ours, theirs = socket.socketpair(socket.AF_UNIX, socket.SOCK_SEQPACKET)
    with tempfile.TemporaryFile() as err:
        spawned = template.spawn({"jail": False}, theirs, err)
        theirs.close()
        template.sock.send(b'{"op": "exit"}')      # its socket kept open: it could still answer
        assert template.proc.wait(60) == 0
    template.close()
    assert spawned.poll() == NEVER_FORKED
    ours.settimeout(30)
    assert ours.recv(65536) == b""        # no zygote was forked to say it is ready: the end
    ours.close()


@pytest.mark.skipif(os.geteuid() != 0, reason="a zygote's /proc/PID/fd is root's to read")
def test_zygotes_asked_for_while_their_template_imports_keep_nothing_of_each_other():
    """Two Sandboxes' requests wait together while the template imports: neither fork keeps the
    other's control socket or stderr file."""
    import socket
    import tempfile

    from autograder.sandbox.template_process import Template, template_launch

    template = Template(template_launch({"torch": True, "matplotlib": False}))
    ends, inodes = [], []
    for _ in range(2):
        ours, theirs = socket.socketpair(socket.AF_UNIX, socket.SOCK_SEQPACKET)
        err = tempfile.TemporaryFile()
        inodes.append({os.fstat(theirs.fileno()).st_ino, os.fstat(err.fileno()).st_ino})
        spawned = template.spawn({"jail": False}, theirs, err)
        theirs.close()
        ends.append((ours, err, spawned))
    try:
        for ours, _, _ in ends:
            ours.settimeout(60)
            assert b'"ready"' in ours.recv(65536)
        for (_, _, spawned), own, other in zip(ends, inodes, inodes[::-1]):
            held = set()
            for fd in os.listdir(f"/proc/{spawned.pid}/fd"):
                try:
                    held.add(os.stat(f"/proc/{spawned.pid}/fd/{fd}").st_ino)
                except OSError:
                    pass
            assert own & held and not other & held
    finally:
        for ours, err, _ in ends:
            ours.close()
            err.close()
        template.close()


def test_a_template_that_died_leaves_its_zygotes_serving_and_is_started_again_when_needed():
    with Sandbox(Limits(call_timeout=2, import_timeout=5)) as sb:
        assert run(sb, SOFTMAX, "softmax", np.ones(2)).status == "ok"
        zygote = sb.zygotes.any()
        template = zygote.proc.template
        template.proc.kill()
        template.proc.wait(10)
        assert run(sb, SOFTMAX, "softmax", np.ones(2)).status == "ok"     # its fork goes on serving
        assert sb.zygotes.any() is zygote and sb.zygotes.restarts == 0
        os.kill(zygote.pid, signal.SIGKILL)
        assert zygote.proc.wait(10) == -signal.SIGKILL        # unreported by the template: seen gone
        assert run(sb, SOFTMAX, "softmax", np.ones(2)).status == "ok"
        assert sb.zygotes.restarts == 1 and sb.zygotes.any().proc.template is not template


# ====================================================================== provided stems

CAUSAL = """
import numpy as np
from attention import softmax

def create_causal_mask(seq_len):
    return np.tril(np.ones((seq_len, seq_len), dtype=bool))

def masked(x):
    m = create_causal_mask(x.shape[-1])
    return softmax(np.where(m, x, -1e9))
"""


def test_provided_stems_resolve_to_the_kit_version(sandbox):
    x = np.zeros((3, 3))
    out = run(sandbox, CAUSAL, "masked", x, stem="causal_mask", provided={"attention": {"softmax": np_softmax}})
    assert out.status == "ok", out
    np.testing.assert_allclose(out.value, np.tril(np.ones((3, 3))) / np.arange(1, 4)[:, None])


def test_provided_modules_come_as_modules_and_names(sandbox):
    code = """
    import attention
    from causal_mask import create_causal_mask

    def both(n):
        return attention.softmax(create_causal_mask(int(n)))
    """
    provided = {"attention": {"softmax": np_softmax},
                "causal_mask": {"create_causal_mask": lambda n: np.tril(np.ones((n, n)))}}
    out = run(sandbox, code, "both", 2, stem="multihead", provided=provided)
    assert out.status == "ok", out
    np.testing.assert_allclose(out.value, np_softmax(np.tril(np.ones((2, 2)))))


def test_unprovided_stems_cannot_be_imported(sandbox):
    with sandbox.session("causal_mask", src(CAUSAL), "causal_mask.py") as s:
        assert s.import_outcome.status == "not_run"
        assert s.import_outcome.message == ("ImportError: causal_mask.py cannot import attention here; "
                                            "each exercise is graded on its own (causal_mask.py, line 2)")


# ====================================================================== housekeeping

def test_each_child_starts_with_an_empty_private_temp_folder(sandbox):
    code = """
    import os

    def where():
        found = sorted(os.listdir("."))
        open("junk.bin", "wb").write(b"x" * 1000)
        os.mkdir("sub")
        return [len(found)]

    def die():
        os.kill(os.getpid(), 9)
    """
    alone = [1.0 + len(_interpreter_folders_in_tmp())]    # its own attention.py (and an interpreter under /tmp)
    with sandbox.session("attention", src(code), "attention.py") as s:
        assert s.call("where").value.tolist() == alone
        assert s.call("die").status == "crashed"
        assert s.call("where").value.tolist() == alone       # a fresh child: the junk died with the last one


def test_two_sandboxes_at_once(sandbox):
    with Sandbox(LIMITS) as other:
        with sandbox.session("attention", src(SOFTMAX), "attention.py") as a, \
                other.session("attention", src(HANGS), "attention.py") as b:
            x = np.array([0.5, 1.5])
            assert a.call("softmax", [x]).status == "ok"
            assert b.call("softmax", [x]).status == "ok"
            assert b.call("loop", [x], timeout=0.3).status == "timeout"
            assert a.call("softmax", [x]).status == "ok"
            assert b.call("softmax", [x]).status == "ok"
        assert other.zygotes.any().pid != sandbox.zygotes.any().pid


def test_sessions_are_children_of_one_warm_zygote(sandbox):
    """What keeps a session cheap: each is a child forked from the zygote that has numpy imported,
    never a new interpreter, and one child serves all of a session's calls."""
    x = np.random.default_rng(0).normal(size=(4, 8))
    run(sandbox, SOFTMAX, "softmax", x)            # warm
    numpy_only = (False, False)                    # what SOFTMAX needs warm: numpy, neither torch nor matplotlib
    zygote, restarts = sandbox.zygotes.by_needs[numpy_only].pid, sandbox.zygotes.restarts
    for _ in range(10):
        with sandbox.session("attention", src(SOFTMAX), "attention.py") as s:
            for _ in range(5):
                assert s.call("softmax", [x]).status == "ok"
            assert s.restarts == 0
    assert (sandbox.zygotes.by_needs[numpy_only].pid, sandbox.zygotes.restarts) == (zygote, restarts)


def test_protocol_rejects_malformed_blobs():
    good = protocol.pack({}, [np.arange(3.0)])
    assert good[:4] == (len(good[4:].split(b"}")[0]) + 1).to_bytes(4, "big")
    for bad in (b"not npy", b"\x93NUMPY\x01\x00" + b"x" * 20):
        with pytest.raises(protocol.ProtocolError):
            protocol.load_npy(bad)
    import io
    buf = io.BytesIO()
    np.save(buf, np.arange(10.0), allow_pickle=False)
    data = buf.getvalue()
    with pytest.raises(protocol.ProtocolError):
        protocol.load_npy(data[:-8])                 # header says 10 values, 9 follow
    huge = data.replace(b"(10,)", b"(10000000000000,)")
    with pytest.raises(protocol.ProtocolError):
        protocol.load_npy(huge)
    obj = io.BytesIO()
    np.lib.format.write_array(obj, np.array([None, 1], dtype=object), allow_pickle=True)
    with pytest.raises(protocol.ProtocolError):
        protocol.load_npy(obj.getvalue())
    assert protocol.load_npy(data).tolist() == list(range(10))


def test_a_plain_npy_header_is_read_as_numpy_reads_it():
    """load_npy reads np.save's own version 1.0 header by a pattern, any other by numpy: the same
    array, dtype and order either way, and the same refusals."""
    import io

    arrays = [np.arange(10.0), np.float64(2.5), np.zeros((0, 3)), np.ones((2, 3, 4), dtype=np.float32),
              np.asfortranarray(np.arange(6.0).reshape(2, 3)), np.arange(4, dtype=">i4"), np.array([True, False]),
              np.arange(3, dtype=np.uint8), np.arange(3, dtype=np.float16), np.zeros((1,) * 12)]
    for a in arrays:
        buf = io.BytesIO()
        np.save(buf, a, allow_pickle=False)
        data = buf.getvalue()
        assert protocol._plain_header(data) is not None, a.dtype
        fp = io.BytesIO(data)
        np.lib.format.read_magic(fp)
        shape, fortran, dtype = np.lib.format.read_array_header_1_0(fp)
        assert protocol._plain_header(data) == (shape, fortran, dtype, fp.tell())
        got = protocol.load_npy(data)
        assert got.shape == a.shape and got.dtype == a.dtype.newbyteorder("=") and np.array_equal(got, a)
    buf = io.BytesIO()
    np.lib.format.write_array(buf, np.arange(3.0), version=(2, 0))
    assert protocol._plain_header(buf.getvalue()) is None                   # numpy reads it
    assert protocol.load_npy(buf.getvalue()).tolist() == [0.0, 1.0, 2.0]
    buf = io.BytesIO()
    np.save(buf, np.arange(3.0), allow_pickle=False)
    for forged in (b"(3)", b"(3,,)", b"(-3,)", b"(3, )"):     # not np.save's: numpy's reader decides
        data = buf.getvalue().replace(b"(3,)", forged.ljust(4))
        assert protocol._plain_header(data) is None
    complex_header = buf.getvalue().replace(b"'<f8'", b"'<c8'")          # a kind that is never sent
    assert protocol._plain_header(complex_header) is None
    with pytest.raises(protocol.ProtocolError):
        protocol.load_npy(complex_header)


def test_the_protocols_npy_writer_is_read_as_np_save_is():
    """npy_bytes writes what np.save writes for every array the protocol sends: numpy's reader and
    the protocol's own (its fast path, not numpy's) read back the same array, dtype and order."""
    import io

    arrays = [np.arange(10.0), np.float64(2.5), np.zeros((0, 3)), np.ones((2, 3, 4), dtype=np.float32),
              np.asfortranarray(np.arange(6.0).reshape(2, 3)), np.arange(4, dtype=">i4"), np.array([True, False]),
              np.arange(3, dtype=np.uint8), np.arange(3, dtype=np.float16), np.zeros((1,) * 12),
              np.arange(24.0).reshape(2, 3, 4)[:, ::2, 1:], np.arange(-5, 5, dtype=np.int64)]
    for a in arrays:
        plain = np.asarray(a)
        data = protocol.npy_bytes(plain)
        assert len(data) % 64 == (plain.nbytes % 64), a          # the header padded as np.save pads it
        assert protocol._plain_header(data) is not None, a
        for got in (np.load(io.BytesIO(data), allow_pickle=False), protocol.load_npy(data)):
            assert got.shape == plain.shape and got.dtype.newbyteorder("=") == plain.dtype.newbyteorder("=")
            assert np.array_equal(got, plain)
        saved = io.BytesIO()
        np.save(saved, plain, allow_pickle=False)
        assert np.array_equal(protocol.load_npy(saved.getvalue()), protocol.load_npy(data))


def test_kit_files_cannot_be_read_by_path(sandbox):
    if os.geteuid() != 0:
        pytest.skip("hiding the kit's folder needs root (a private mount namespace)")
    import autograder

    kit = os.path.dirname(os.path.dirname(os.path.abspath(autograder.__file__)))
    code = """
    import os

    def peek(kit):
        return [len(os.listdir(kit)) if os.path.isdir(kit) else 0,
                os.path.exists(os.path.join(kit, "reference", "attention.py"))]
    """
    assert os.path.exists(os.path.join(kit, "reference", "attention.py"))
    out = run(sandbox, code, "peek", kit)
    assert out.status == "ok", out
    if out.value.tolist() == [0.0, 0.0]:     # an empty folder, or (kit in the temp folder) none at all
        return
    pytest.skip(f"mount namespaces are not available here: {out.value.tolist()}")


def test_the_kits_own_provided_sources_work(sandbox):

    from autograder.grading.submission import _provided
    code = """
    import numpy as np
    from attention import scaled_dot_product_attention
    from causal_mask import create_causal_mask

    def masked_weights(n):
        x = np.eye(int(n))
        return scaled_dot_product_attention(x, x, x, mask=create_causal_mask(int(n)))[1]
    """
    out = run(sandbox, code, "masked_weights", 3, stem="multihead",
              provided=_provided("multihead"))
    assert out.status == "ok", out
    assert np.allclose(np.triu(out.value, 1), 0) and np.allclose(out.value.sum(-1), 1)


def test_oversized_answers_are_refused(sandbox):
    code = """
    import numpy as np

    def huge():
        return np.zeros(9 * 10 ** 6)

    def fine():
        return [1.0]
    """
    with sandbox.session("attention", src(code), "attention.py") as s:
        out = s.call("huge", timeout=10)
        assert (out.status, out.message) == ("bad_return", "gave an answer that could not be read (the answer is larger "
                                                           "than the limit of 64 MB)")
        assert s.call("fine").status == "ok"


def test_the_temp_folder_and_the_graders_home_are_private(sandbox, tmp_path):
    if os.geteuid() != 0:
        pytest.skip("private folders need root (a private mount namespace)")
    secret = tmp_path / "another_student.py"
    secret.write_text("ANSWER = 42\n")
    home = os.path.realpath(os.path.expanduser("~"))
    code = """
    import os

    def peek(secret, home):
        return [os.path.exists(secret), len(os.listdir(home)) if os.path.isdir(home) else 0]
    """
    out = run(sandbox, code, "peek", str(secret), home)
    assert out.status == "ok", out
    exists, entries = out.value.tolist()
    assert exists == 0.0, "a file in the machine's temp folder is visible to a submission"
    # what stays of the home folder is at most what the interpreter needs (pyenv keeps Python there)
    needed = {p.split(os.sep)[len(home.split(os.sep))] for p in (sys.prefix, sys.base_prefix)
              if os.path.realpath(p).startswith(home + os.sep)}
    assert entries <= len(needed)


# ====================================================================== typed outcomes and notebook cells

def test_raised_outcomes_carry_a_typed_error(sandbox):
    code = """
    import numpy as np

    def helper(a, b):
        return a @ b

    def softmax(x):
        return helper(np.ones((2, 3)), np.ones((2, 3)))
    """
    with sandbox.session("attention", src(code), "attention.py") as s:
        out = s.call("softmax", [np.ones(2)])
    assert (out.status, out.reason) == ("raised", "raised")
    err = out.error
    assert (err.type, err.line, err.function, err.cell) == ("ValueError", 4, "helper", None)
    assert err.operation == "return a @ b"
    assert "matmul" in err.text and out.message.startswith("ValueError: ")


def test_import_outcomes_say_why_in_types(sandbox):
    cases = {"def f(:\n": ("syntax", "SyntaxError"), "import numpy\nraise KeyError('k')\n": ("raised", "KeyError")}
    for code, (reason, kind) in cases.items():
        with sandbox.session("attention", code, "attention.py") as s:
            o = s.import_outcome
            assert (o.status, o.reason, o.error.type) == ("not_run", reason, kind), o
            assert s.call("softmax").reason == reason
    with sandbox.session("attention", "while True:\n    pass\n", "attention.py") as s:
        assert (s.import_outcome.status, s.import_outcome.reason) == ("not_run", "timeout")


CELLS = [
    {"index": 1, "source": "import numpy as np\n", "solution": False},
    {"index": 2, "source": "print('scratch')\nundefined_in_scratch\n", "solution": False},
    {"index": 4, "source": "def softmax(x):\n    e = np.exp(x - x.max())\n    return e / e.sum()\n",
     "solution": True},
    {"index": 5, "source": "def broken(x):\n    return x +\n", "solution": True},
    {"index": 6, "source": "def later(x):\n    y = 1\n    return x / 0\n", "solution": False},
]


def test_notebook_cells_run_in_order_and_a_raising_cell_is_skipped(sandbox):
    with sandbox.session("attention", CELLS, "attention.ipynb") as s:
        o = s.import_outcome
        assert o.status == "ok", o
        assert [(c.index, c.solution, c.error.type) for c in o.skipped] == \
            [(2, False, "NameError"), (5, True, "SyntaxError")]
        assert o.skipped[0].first_line == "print('scratch')" and o.skipped[0].error.line == 2
        assert o.skipped[0].error.cell == 2
        x = np.array([1.0, 2.0])
        assert s.call("softmax", [x]).status == "ok"
        out = s.call("later", [1.0], returns="float")
    assert (out.error.cell, out.error.line, out.error.function) == (6, 3, "later")
    assert "attention.ipynb, cell 6, line 3, in later" in out.message


def test_a_cell_that_runs_out_of_memory_ends_the_run_in_the_grader_and_in_check_py(sandbox, tmp_path):
    """Both run a notebook's cells with one loop (notebook.run_cells): memory running out, as
    torch says it, is not a scratch cell's error to run past, in the grader's child or check.py's."""
    from autograder.judge import notebook

    torch_says = ("raise RuntimeError(\"[enforce fail at alloc_cpu.cpp:117] . DefaultCPUAllocator: can't allocate "
                  "memory: you tried to allocate 800000000000 bytes.\")\n")
    cells = [{"index": 1, "source": "import numpy as np\n", "solution": False},
             {"index": 2, "source": torch_says, "solution": False},
             {"index": 4, "source": "after = 1\n", "solution": False}]
    with sandbox.session("attention", cells, "attention.ipynb") as s:
        o = s.import_outcome
    assert (o.status, o.reason) == ("not_run", "memory"), o
    assert "exceeded the memory limit of 512 MB" in o.message and "cell 2, line 1" in o.message, o.message
    namespace: dict = {}
    with pytest.raises(RuntimeError, match="can't allocate memory"):
        notebook.run_cells(cells, namespace, str(tmp_path / "attention.ipynb"), {})
    assert "np" in namespace and "after" not in namespace


def test_the_template_is_single_threaded_once_its_import_watcher_is_stopped():
    # The template watches the grader from a thread during its imports; its forks then unshare a
    # user namespace, which the kernel refuses (EINVAL) to a process of more than one thread. The
    # thread's join() returns before the kernel has removed its task: without waiting for that,
    # about one stop in thirty found two tasks here, and the jail failed under load.
    import importlib.util
    import socket
    from pathlib import Path

    path = Path(protocol.__file__).with_name("template.py")
    spec = importlib.util.spec_from_file_location("_attnkit_test_template", path)
    template = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(template)
    # This process's own threads (pytest-xdist's, say) would count too: measure in a fork.
    pid = os.fork()
    if pid == 0:
        code = 0
        try:
            for _ in range(300):
                grader, ours = socket.socketpair()
                template.watch_while_importing(ours.fileno())()
                if len(os.listdir("/proc/self/task")) != 1:
                    code = 1
                grader.close()
                ours.close()
        finally:
            os._exit(code)
    _, status = os.waitpid(pid, 0)
    assert os.waitstatus_to_exitcode(status) == 0


def test_a_child_computes_with_one_blas_thread_whatever_the_graders_environment_says(course, monkeypatch):
    """The sandbox gives its zygotes one BLAS and OpenMP thread (autograder/judge/threads.py), also
    when the grader's own environment asks for more: the jail needs a single-threaded zygote."""
    from autograder.judge.threads import VARIABLES
    from autograder.sandbox import Sandbox

    for name in VARIABLES:
        monkeypatch.setenv(name, "4")
    code = f"import os\n\ndef threads():\n    return [float(os.environ.get(v, 0)) for v in {VARIABLES!r}]\n"
    with Sandbox(course.limits) as box, box.session("attention", code, "attention.py") as s:
        out = s.call("threads")
    assert out.status == "ok", out
    assert out.value.tolist() == [1.0] * len(VARIABLES)
