"""The handout's check.py is the grader's engine, shipped kit-free: its modules are the grader's
files byte for byte, and on a student's folder it gives the grader's verdict on every visible
check (its status: passed, failed, error or not implemented; its score), the same hint once per
cause, and checks the file the grader grades.
Run as a student runs it: a Python that sees numpy, torch and matplotlib but not the kit."""

from __future__ import annotations

import ast
import dataclasses
import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

from autograder.checks import check_ids
from autograder.config import KIT_ROOT, load_course
from autograder.handout.write import HANDOUT_CODE, MODULES, write_handout

# A hanging function costs each driver its call limit per call, for each function that calls it:
# 1.5 s of CPU time, not the course's 10, is still far above what any honest call here takes.
_COURSE = load_course(known_checks=check_ids())
COURSE = dataclasses.replace(_COURSE, limits=dataclasses.replace(_COURSE.limits, call_timeout=1.5))
SOLUTIONS = KIT_ROOT / "solutions"
CORPUS = KIT_ROOT / "tests" / "corpus"


@pytest.fixture(scope="module")
def handout(tmp_path_factory) -> Path:
    out = tmp_path_factory.mktemp("handout") / "self attention"          # a space in the path, on purpose
    write_handout(out, COURSE)
    return out


def _run(python, folder: Path, *args: str) -> subprocess.CompletedProcess:
    env = {k: v for k, v in os.environ.items() if k != "PYTHONPATH"}
    return subprocess.run([str(python), "check.py", *args], cwd=folder, capture_output=True, text=True,
                          timeout=900, env=env)


# ---------------------------------------------------------------- one engine, shipped as it is

def test_the_handouts_modules_are_the_graders_files_byte_for_byte(handout):
    assert (handout / "check.py").read_bytes() == (HANDOUT_CODE / "student_check.py").read_bytes()
    for name, source in MODULES.items():
        assert (handout / name).read_bytes() == source.read_bytes(), name
    # the judge, whole, and nothing else of the kit
    judge = KIT_ROOT / "autograder" / "judge"
    assert sorted(p.name for p in (handout / "judge").glob("*.py")) == sorted(p.name for p in judge.glob("*.py"))
    assert {p.name for p in handout.glob("*.py")} == {"check.py", "attnkit_tests.py", *(n for n in MODULES if "/" not in n)} | \
        {f"{s}.py" for s in COURSE.exercises}
    # and the grader decides with those very modules
    import autograder.grading.student_implementation as student_implementation
    import autograder.grading.submission as submission
    import autograder.intake.cells as cells
    import autograder.intake.load as load
    import autograder.intake.stubs as stubs
    from autograder.judge import calls, forms, notebook

    assert load.notebook_cells is notebook.notebook_cells and load.Cell is notebook.Cell
    assert submission.calls is student_implementation.calls is calls
    assert cells.raised_note is notebook.raised_note and stubs.forms is forms and submission.forms is forms
    # the sandbox's child runs a notebook's cells with the judge's loop, and builds a student's torch
    # module with its code: its zygote loads the judge's own files
    inside = KIT_ROOT / "autograder" / "sandbox" / "inside"
    assert "NOTEBOOK.run_cells(" in (inside / "child.py").read_text()
    assert "MODULE.forward(" in (inside / "child.py").read_text()
    assert '"notebook",' in (inside / "zygote.py").read_text() and '"torch_module"' in (inside / "zygote.py").read_text()


def test_the_handouts_code_imports_nothing_of_the_kit_and_never_forks(handout):
    """Kit-free (the standard library, numpy, torch, matplotlib, IPython's transformer, the
    handout's own modules and its judge/) and the same on Linux, macOS and Windows: children are subprocesses,
    never fork or a multiprocessing start method that differs between systems."""
    own = {p.stem for p in handout.glob("*.py")} | {"judge"}
    allowed = {"numpy", "torch", "matplotlib", "IPython", "nbformat", *own, *sys.stdlib_module_names}
    for path in handout.rglob("*.py"):
        tree = ast.parse(path.read_text(encoding="utf-8"))
        for node in ast.walk(tree):
            names = ([a.name for a in node.names] if isinstance(node, ast.Import) else
                     [node.module] if isinstance(node, ast.ImportFrom) and node.level == 0 and node.module else [])
            top = {n.split(".")[0] for n in names}
            # the grader's branch (`if __package__:`) of a shared module imports the kit's own copy
            kit = top & {"autograder", "pydantic"}
            if kit:
                assert _under_package_branch(tree, node), (path.name, names)
            assert top - {"autograder"} <= allowed, (path.name, names)
            assert top.isdisjoint({"multiprocessing"}), path.name
            if isinstance(node, ast.Attribute) and isinstance(node.value, ast.Name) and node.value.id == "os":
                assert node.attr not in ("fork", "forkpty", "setsid", "killpg"), (path.name, node.attr)


def _under_package_branch(tree: ast.Module, target: ast.AST) -> bool:
    for node in ast.walk(tree):
        if isinstance(node, ast.If) and isinstance(node.test, ast.Name) and node.test.id == "__package__":
            if any(target is inner for stmt in node.body for inner in ast.walk(stmt)):
                return True
    return False


def test_the_handout_holds_no_key(handout):
    texts = "\n".join(p.read_text(encoding="utf-8", errors="replace") for p in handout.rglob("*")
                      if p.is_file() and p.suffix in (".py", ".json", ".md", ".ipynb"))
    for stem in COURSE.exercises:
        spec = json.loads((handout / "check_data" / f"{stem}.json").read_text())
        hidden = [c for c in check_ids() if c.startswith(stem + ".") and COURSE.check(c).hidden]
        assert not {c["id"] for c in spec["checks"]} & set(hidden)
        assert all(f'"{c}"' not in texts for c in hidden), stem
    assert not {p.name for p in handout.rglob("*.py")} & {p.name for p in (KIT_ROOT / "reference").rglob("*.py")
                                                          if p.name != "__init__.py"} - {f"{s}.py" for s in COURSE.exercises}
    for stem in COURSE.exercises:        # the stubs, not the solutions
        assert (handout / f"{stem}.py").read_bytes() != (SOLUTIONS / f"{stem}.py").read_bytes()


# ---------------------------------------------------------------- the same verdict

def _softmax_without_max(source: str) -> str:
    return source.replace("shifted = x - np.max(x, axis=axis, keepdims=True)", "shifted = x")


def _only_output(source: str) -> str:
    return source.replace("    return output, weights\n", "    return output\n", 1)


DISPLAY_TIME_SCRATCH = [
    "import numpy as np\nfrom IPython.display import display\n",
    "%%time\nx = np.arange(3.0)\ndisplay(x)\n",
    "undefined_name + 1   # a scratch cell that raises: Jupyter goes on\n",
]


# Every way a notebook's run differs from a .py file's, in one notebook: IPython's names and
# magics, and cells that raise (named by their number as Jupyter shows it, markdown counted).
JUPYTER_RUN = [
    "%matplotlib inline\nimport numpy as np\n",
    "@solution",                                                        # cell 3: `%%time` over the work
    "display(softmax(np.ones(3)))\nundefined_name + 1\n",              # cell 4: NameError on its line 2
    "x = %time 5\nassert x == 6, 'my own check'\n",                    # cell 5: the student's own assert
    "!pip install nothing\nshell = get_ipython()\n",
    "raise SystemExit('stop here')\n",                                 # cell 7: Jupyter goes on even so
    "after_the_exit = softmax(np.zeros(2))\n",
]
JUPYTER_RUN_NOTES = [
    "cell 4 ('display(softmax(np.ones(3)))') raised NameError: name 'undefined_name' is not defined (line 2) "
    "and was skipped",
    "cell 5 ('x = %time 5') raised AssertionError: my own check (line 2) and was skipped",
    "cell 7 (\"raise SystemExit('stop here')\") raised SystemExit: stop here (the module called sys.exit) "
    "(line 1) and was skipped",
]


def _notebook(cells: list[str], crlf: bool = False) -> str:
    """A plain format-4 notebook of code cells, the solution's code split over two of them."""
    nl = "\r\n" if crlf else "\n"
    body = {"nbformat": 4, "nbformat_minor": 5, "metadata": {},
            "cells": [{"cell_type": "markdown", "metadata": {}, "source": "# my work"}] +
                     [{"cell_type": "code", "metadata": {}, "execution_count": None, "outputs": [],
                       "source": [line + nl for line in cell.splitlines()]} for cell in cells]}
    return json.dumps(body, indent=1).replace("\n", nl)


SCORES_LINE = "    scores = Q @ np.swapaxes(K, -1, -2) / math.sqrt(d_k)"


def _keys_and_queries_swapped(source: str) -> str:
    """K Q^T for Q K^T: the weights are (n_k, n_q), so `weights @ V` fails on rectangular inputs with
    numbers other than those of the catalogued mistake (K untransposed): known by its masked words."""
    assert SCORES_LINE in source
    return source.replace(SCORES_LINE, "    scores = K @ np.swapaxes(Q, -1, -2) / math.sqrt(d_k)")


def _bfloat16_torch() -> str:
    """Attention in torch's bfloat16, returned as tensors: numpy holds no bfloat16, yet the hint names it."""
    return ("import math\nimport torch\n\n\ndef softmax(x, axis=-1):\n"
            "    return torch.softmax(torch.as_tensor(x), dim=axis).numpy()\n\n\n"
            "def scaled_dot_product_attention(Q, K, V, mask=None):\n"
            "    q, k, v = (torch.tensor(a).to(torch.bfloat16) for a in (Q, K, V))\n"
            "    scores = torch.matmul(q, k.transpose(-2, -1)) / math.sqrt(q.size(-1))\n"
            "    if mask is not None:\n"
            "        scores = scores.masked_fill(torch.as_tensor(mask) == 0, float('-inf'))\n"
            "    w = torch.softmax(scores, dim=-1)\n"
            "    return torch.matmul(w, v), w\n")


def _rounded_early(source: str) -> str:
    """Part B's scores rounded to one decimal, its weights and output carried on from them (4 decimals)."""
    scores = np.array([[1.9, 1.1, 1.1], [1.1, 1.1, 0.6], [1.1, 0.6, 1.0]])
    x = np.array([[1.0, 0.5, 0.2, 0.8], [0.3, 0.9, 0.1, 0.4], [0.6, 0.2, 0.7, 0.3]])
    weights = _softmax_rows(scores / 2)
    return _written(source, {"CSM_SCORES": scores, "CSM_WEIGHTS": weights, "CSM_OUTPUT": weights @ x}, 4)


def _written(source: str, values: dict[str, np.ndarray], decimals: int) -> str:
    """`source` with each named answer replaced by `values`' (written with `decimals` decimals)."""
    for name, value in values.items():
        start = source.index(f"{name} = [")
        end = source.index("\n]", start) + 2
        rows = "\n".join("    [" + ", ".join(f"{v:.{decimals}f}" for v in row) + "]," for row in value)
        source = source[:start] + f"{name} = [\n{rows}\n]" + source[end:]
    return source


SYNTAX_ERROR = "\n\ndef unfinished(x:\n"

# split_heads never returns; the checks after it run in a new child, and each must be judged on
# its own answer (merge_heads right, MultiHeadAttention right, multi_head_attention hangs in split_heads)
SPLIT_HEADS_HANGS = """import math

import numpy as np
import torch
from torch import nn


def split_heads(x, num_heads):
    while True:
        pass


def merge_heads(x):
    b, h, t, dh = x.shape
    return x.transpose(0, 2, 1, 3).reshape(b, t, h * dh)


def multi_head_attention(X, W_q, W_k, W_v, W_o, num_heads, mask=None):
    q = split_heads(X @ W_q, num_heads)
    return q, q


class MultiHeadAttention(nn.Module):
    def __init__(self, d_model, num_heads):
        super().__init__()
        self.h, self.dh = num_heads, d_model // num_heads
        self.W_q, self.W_k = nn.Linear(d_model, d_model), nn.Linear(d_model, d_model)
        self.W_v, self.W_o = nn.Linear(d_model, d_model), nn.Linear(d_model, d_model)

    def forward(self, x, mask=None):
        B, T, D = x.shape
        q, k, v = (w(x).view(B, T, self.h, self.dh).transpose(1, 2) for w in (self.W_q, self.W_k, self.W_v))
        scores = q @ k.transpose(-2, -1) / math.sqrt(self.dh)
        if mask is not None:
            scores = scores.masked_fill(torch.as_tensor(mask) == 0, float("-inf"))
        weights = torch.softmax(scores, dim=-1)
        return self.W_o((weights @ v).transpose(1, 2).reshape(B, T, D)), weights
"""

# a plot that shows its figure and returns nothing (a function with work: it fails, not "not
# implemented"); scaling_experiment is not defined at all
PLOT_RETURNS_NONE = """import matplotlib.pyplot as plt


def plot_scaling(results):
    ds = list(results)
    plt.plot(ds, [results[d]["std_unscaled"] for d in ds], label="unscaled")
    plt.plot(ds, [results[d]["std_scaled"] for d in ds], label="scaled")
    plt.xlabel("d"); plt.ylabel("std"); plt.legend()
    plt.show()
"""


def _softmax_rows(m: np.ndarray) -> np.ndarray:
    e = np.exp(m - m.max(axis=1, keepdims=True))
    return e / e.sum(axis=1, keepdims=True)


def _rounded_every_step(source: str) -> str:
    """Every answer rounded to 2 decimals and the next step computed from the rounded one: a row of
    CSM_WEIGHTS sums to 0.99 (each weight still within the tolerance, which the grader accepts),
    and CSM_OUTPUT, carried from the rounded weights, is off the exact output by more than it."""
    q, k = np.array([[1.0, 0.0], [0.0, 1.0]]), np.array([[1.0, 1.0], [1.0, 0.0]])
    v = np.array([[2.0, 1.0], [1.0, 2.0]])
    x = np.array([[1.0, 0.5, 0.2, 0.8], [0.3, 0.9, 0.1, 0.4], [0.6, 0.2, 0.7, 0.3]])
    scores = np.round(q @ k.T, 2)
    scaled = np.round(scores / np.sqrt(2), 2)
    weights = np.round(_softmax_rows(scaled), 2)
    csm_scores = np.round(x @ x.T, 2)
    csm_weights = np.round(_softmax_rows(csm_scores / 2), 2)
    return _written(source, {"SCORES": scores, "SCALED_SCORES": scaled, "WEIGHTS": weights,
                             "OUTPUT": np.round(weights @ v, 2), "CSM_SCORES": csm_scores,
                             "CSM_WEIGHTS": csm_weights, "CSM_OUTPUT": np.round(csm_weights @ x, 2)}, 2)


def _without_bias(multihead: str) -> str:
    assert multihead.count("nn.Linear(d_model, d_model)\n") == 4
    return multihead.replace("nn.Linear(d_model, d_model)\n", "nn.Linear(d_model, d_model, bias=False)\n")


def _softmax_from_attention(causal_mask: str) -> str:
    """causal_attention with the softmax imported from the student's own attention exercise."""
    inline = causal_mask[causal_mask.index("    scores = scores - scores.max("):
                         causal_mask.index("    output = weights @ V")]
    return "from attention import softmax\n\n" + causal_mask.replace(inline, "    weights = softmax(scores, axis=-1)\n")


SCALING_MISTAKES = {"scaling std holds the variance": "variance_not_std", "scaling seed fixed": "seed_ignored__fixed",
                    "scaling entropy in bits": "entropy_log2", "scaling dims ignored": "dims_ignored__ho_default_dims"}


def _cases() -> dict[str, dict[str, str]]:
    """Folder name -> the files written over a fresh handout (stem.py / stem.ipynb -> text)."""
    solution = {stem: (SOLUTIONS / f"{stem}.py").read_text() for stem in COURSE.exercises}
    attention = solution["attention"]
    return {
        "solutions": {f"{s}.py": t for s, t in solution.items()},
        "stubs": {},
        "softmax wrong axis": {"attention.py": (CORPUS / "attention/buggy/softmax_wrong_axis.py").read_text()},
        "softmax without max": {"attention.py": _softmax_without_max(attention)},
        "returns only output": {"attention.py": _only_output(attention)},
        "bare reshape": {"multihead.py": (CORPUS / "multihead/buggy/reshape_without_transpose.py").read_text()},
        # work in the .py, Jupyter's autosave of the untouched notebook saved after it
        "py and autosaved notebook": {"attention.py": attention, "attention.ipynb": "@stub"},
        # the student's .py does not compile, the notebook is the handout's untouched stub
        "py with a syntax error": {"attention.py": attention + SYNTAX_ERROR},
        "notebook with display, time and a raising cell": {
            "causal_mask.ipynb": _notebook([*DISPLAY_TIME_SCRATCH, solution["causal_mask"]]),
            "scaling.ipynb": _notebook(["%%time\n" + solution["scaling"], DISPLAY_TIME_SCRATCH[2]])},
        # the cell holding the work raised before its definitions ran: the names it defines are missing
        "notebook whose defining cell raised": {"attention.ipynb": _notebook(
            ["import numpy as np\n", "undefined_name + 1\n" + attention])},
        "notebook run as jupyter runs it": {"attention.ipynb": _notebook(
            [("%%time\n" + attention) if cell == "@solution" else cell for cell in JUPYTER_RUN])},
        # work in the notebooks; causal_mask imports attention, which Python (and Jupyter) finds in
        # attention.py: the student downloaded attention.ipynb as attention.py, as told
        "notebooks importing one another": {"attention.ipynb": _notebook([attention]), "attention.py": attention,
                                            "causal_mask.ipynb": _notebook([_softmax_from_attention(
                                                solution["causal_mask"])])},
        "hand answers rounded early": {"hand_computation.py": _rounded_early(solution["hand_computation"])},
        "hand answers rounded to 2 decimals at every step": {
            "hand_computation.py": _rounded_every_step(solution["hand_computation"])},
        # an error explained by its words: .T on a batch; torch's .transpose(1, 2) on a 2-D K
        "K.T on a batch": {"attention.py": (CORPUS / "attention/buggy/transpose_all_axes.py").read_text()},
        "torch axes counted from the front": {
            "attention.py": (CORPUS / "attention/buggy/transpose_fixed_axes__ho4_torch_1_2.py").read_text()},
        # an error explained by a mistake's error with its numbers masked
        "keys and queries swapped": {"attention.py": _keys_and_queries_swapped(attention)},
        # the 16-bit float named in the hint: numpy's float16, torch's bfloat16
        "float16": {"attention.py": (CORPUS / "attention/buggy/low_precision_dtype.py").read_text()},
        "bfloat16 tensors": {"attention.py": _bfloat16_torch()},
        # property checks (no future seen, the module's structure), their mistakes named as the grader
        # names them by comparing arrays: a wrong answer, and an error
        "mask after the softmax": {"causal_mask.py": (CORPUS / "causal_mask/buggy/mask_after_softmax.py").read_text()},
        # a right np.tril mask used as 1 = blocked: the mask's checks pass, and both say so of the use
        "causal mask used as blocked": {"causal_mask.py": (SOLUTIONS / "causal_mask.py").read_text().replace(
            "scores = np.where(allowed, scores, -np.inf)", "scores = np.where(allowed, -np.inf, scores)")},
        "heads not split": {"multihead.py": (CORPUS / "multihead/buggy/heads_not_split.py").read_text()},
        "multihead keys not transposed": {
            "multihead.py": (CORPUS / "multihead/buggy/keys_not_transposed.py").read_text()},
        # two explanations fit one check; the grader rules one out with the student's other results
        "softmax over axis -2": {"attention.py": (CORPUS / "attention/buggy/softmax_wrong_axis__neg2.py").read_text()},
        "crlf": {"attention.py": attention.replace("\n", "\r\n"),
                 "causal_mask.ipynb": _notebook([solution["causal_mask"]], crlf=True)},
        "a function hangs, a new child goes on": {"multihead.py": SPLIT_HEADS_HANGS},
        # layers without a bias: the check's weights cannot be loaded into the module
        "linear layers without bias": {"multihead.py": _without_bias(solution["multihead"])},
        # a body of only `pass` returns None: not implemented yet; the other names are not defined
        "pass body and names missing": {"multihead.py": "def merge_heads(x):\n    pass\n"},
        "plot returns none": {"scaling.py": PLOT_RETURNS_NONE},
        # the scaling experiment's mistakes, told by properties of its random runs (the variance, a
        # seed that decides nothing) or by the statistics of a large run of the mistake (bits)
        **{name: {"scaling.py": (CORPUS / f"scaling/buggy/{mistake}.py").read_text()}
           for name, mistake in SCALING_MISTAKES.items()},
        # two arrays of different shapes where one is expected: failed with a sentence, never a traceback
        "an answer that cannot be compared": {"multihead.py": "def merge_heads(x):\n    return x, x[0]\n"},
    }


@pytest.fixture(scope="module")
def folders(handout, tmp_path_factory) -> dict[str, Path]:
    made = {}
    root = tmp_path_factory.mktemp("students")
    for name, files in _cases().items():
        folder = root / name
        shutil.copytree(handout, folder)
        for filename, text in files.items():
            if text == "@stub":           # touched after the .py: newer on disk, still the stub
                os.utime(folder / filename, (2e9, 2e9))
                continue
            (folder / filename).write_bytes(text.encode("utf-8"))
        made[name] = folder
    return made


# One grading session for every folder graded here, as a class run grades its students one after
# another in one session (its first grade starts the sandbox, a few seconds; the next ones reuse it).
_SESSION = []


def _grader():
    from autograder.grading.course_session import GradingSession

    if not _SESSION:
        _SESSION.append(GradingSession(COURSE))
    return _SESSION[0]


@pytest.fixture(scope="module", autouse=True)
def _close_the_grader():
    yield
    while _SESSION:
        _SESSION.pop().close()


def _grader_verdicts(folder: Path) -> dict[str, dict]:
    result = _grader().grade(folder)
    return {e.stem: {"file": e.graded_file,
                     "checks": {c.check_id: (c.status, c.score) for c in e.checks if not c.hidden},
                     "hints": {c.check_id: (c.hint or "", tuple(c.misconceptions)) for c in e.checks
                               if not c.hidden and c.status != "passed"}}
            for e in result.exercises}


def _check_py_verdicts(python, folder: Path) -> tuple[dict[str, dict], str]:
    done = _run(python, folder, "--json", "results.json")
    assert done.returncode in (0, 1), done.stdout + done.stderr
    assert "Traceback" not in done.stdout + done.stderr, done.stdout + done.stderr
    written = json.loads((folder / "results.json").read_text())["exercises"]
    return {stem: {"file": e["file"], "checks": {c["id"]: (c["status"], c["score"]) for c in e["checks"]},
                   "hints": {c["id"]: (c["hint"], tuple(c["mistakes"])) for c in e["checks"] if c["status"] != "passed"}}
            for stem, e in written.items()}, done.stdout


@pytest.mark.parametrize("case", list(_cases()))
def test_check_py_and_the_grader_agree_on_every_visible_check(case, folders, kit_free_python):
    folder = folders[case]
    mine, printed = _check_py_verdicts(kit_free_python, folder)
    graders = _grader_verdicts(folder)
    for stem in COURSE.exercises:
        assert mine[stem]["file"] == graders[stem]["file"], (stem, mine[stem]["file"], graders[stem]["file"])
        assert mine[stem]["checks"] == graders[stem]["checks"], (stem, {
            k: (v, graders[stem]["checks"].get(k)) for k, v in mine[stem]["checks"].items()
            if graders[stem]["checks"].get(k) != v})
        # the same hint on each check, word for word: what was seen in the answer, then the mistake
        # it names, and the same mistakes named (ruled out by the visible results alike)
        assert mine[stem]["hints"] == graders[stem]["hints"], stem
    # each hint said once, per cause: a cause of several checks says its first check's hint (what was
    # seen in that answer, then the mistake), so the mistake's words are there once for all of them
    for hint in {h for v in mine.values() for h, _ in v["hints"].values() if h}:
        first = hint.splitlines()[0]
        assert printed.count(first) <= 1, (hint, printed)
        told = first if first in printed else first.split(". ", 1)[-1]
        assert printed.count(told) == 1, (hint, printed)


def test_check_py_rules_out_what_the_visible_results_rule_out_as_the_grader_does(folders, kit_free_python):
    # softmax over axis -2: on a 3-D check, a softmax axis fixed at 1 gives the same answer, but on
    # the visible 4-D check (batched) it does not give the student's: both name one mistake only
    folder = folders["softmax over axis -2"]
    mine, graders = _check_py_verdicts(kit_free_python, folder)[0]["attention"], _grader_verdicts(folder)["attention"]
    check_id = "attention.scaled_dot_product_attention.float32"
    assert mine["hints"][check_id][1] == ("softmax_wrong_axis",), mine["hints"][check_id]
    assert mine["hints"] == graders["hints"]


def test_a_mistake_behind_several_checks_is_said_once_as_the_grader_says_it(folders, kit_free_python):
    printed = _run(kit_free_python, folders["softmax wrong axis"], "attention.py").stdout
    assert "1 mistake -> " in printed and "1 cause" not in printed, printed


@pytest.mark.parametrize("case, named", [
    ("scaling std holds the variance", {"scaling.scaling_experiment.std": ("variance_not_std",)}),
    ("scaling seed fixed", {"scaling.scaling_experiment.seed": ("seed_ignored",),
                            "scaling.scaling_experiment.n_trials": ("seed_ignored",)}),
    ("scaling entropy in bits", {"scaling.scaling_experiment.entropy": ("entropy_log2",)}),
    # told by the dims each check asks for, which its shipped parameters hold
    ("scaling dims ignored", {"scaling.scaling_experiment.seed": ("dims_ignored",),
                              "scaling.scaling_experiment.n_trials": ("dims_ignored",)})])
def test_the_scaling_experiments_mistakes_are_named_by_check_py(case, named, folders, kit_free_python):
    """Named without the reference: by the answer's own statistics and runs, or by the shipped
    statistics of a large run of the mistake; a mistake behind two checks said once."""
    mine, printed = _check_py_verdicts(kit_free_python, folders[case])
    hints = mine["scaling"]["hints"]
    assert {check_id: hints[check_id][1] for check_id in named} == named, hints
    said = {hints[check_id][0] for check_id in named}
    assert len(said) == 1 and all(printed.count(hint) == 1 for hint in said), printed
    assert len(named) < 2 or f"1 mistake -> {len(named)} checks" in printed, printed


def test_which_file_counts_is_said(folders, kit_free_python):
    printed = _run(kit_free_python, folders["py and autosaved notebook"], "attention.ipynb").stdout
    assert "attention (attention.py): 11/11 visible checks passed" in printed, printed
    assert "checked from attention.py: attention.ipynb is an untouched stub; graded attention.py" in printed
    readme = (folders["stubs"] / "README.md").read_text()
    assert "Hand in the exercise files you worked in" in readme and "untouched" in readme


def test_a_py_that_does_not_compile_is_checked_not_the_untouched_notebook(folders, kit_free_python, tmp_path):
    folder = folders["py with a syntax error"]
    mine, printed = _check_py_verdicts(kit_free_python, folder)
    assert "checked from attention.py: attention.ipynb is an untouched stub; graded attention.py" in printed, printed
    assert "attention.py" in printed and "line" in printed.split("checked from attention.py", 1)[1], printed
    # handed in alone, as a student hands in the file they worked in: the grader's verdict is the same
    alone = tmp_path / "handed in"
    alone.mkdir()
    shutil.copy(folder / "attention.py", alone / "attention.py")
    graders = _grader_verdicts(alone)["attention"]
    assert mine["attention"]["file"] == graders["file"] == _grader_verdicts(folder)["attention"]["file"] == "attention.py"
    assert mine["attention"]["checks"] == graders["checks"]
    assert all(status == "error" for status, _ in graders["checks"].values()), graders["checks"]


def test_an_exercise_imports_the_other_exercises_py_file_as_python_does(folders, kit_free_python):
    """`from attention import softmax` in causal_mask.ipynb: check.py gives it the student's
    attention.py, as Python and Jupyter do (with the stub there instead: test_handout_notebooks.py)."""
    printed = _run(kit_free_python, folders["notebooks importing one another"], "causal_mask").stdout
    assert "causal_mask (causal_mask.ipynb): 6/6 visible checks passed" in printed, printed


def test_a_notebook_runs_as_jupyter_runs_it_and_the_skipped_cell_is_named(folders, kit_free_python):
    printed = _run(kit_free_python, folders["notebook with display, time and a raising cell"],
                   "causal_mask", "scaling").stdout
    assert "causal_mask (causal_mask.ipynb): 6/6 visible checks passed" in printed, printed
    assert "scaling (scaling.ipynb): 7/7 visible checks passed" in printed, printed
    assert "note: cell 4 ('undefined_name + 1" in printed and "NameError" in printed, printed


def test_check_py_and_the_grader_run_a_notebooks_cells_alike(folders, kit_free_python):
    """One loop runs a notebook's cells on both sides (the judge's notebook.run_cells): the same cells
    skipped, named and explained alike, as Jupyter's Run All goes past them, and full marks."""
    folder = folders["notebook run as jupyter runs it"]
    printed = _run(kit_free_python, folder, "attention").stdout
    assert "attention (attention.ipynb): 11/11 visible checks passed" in printed, printed
    check_py = [line.strip()[len("note: "):] for line in printed.splitlines() if line.strip().startswith("note: cell")]
    (graded,) = [e for e in _grader_results(folder) if e.stem == "attention"]
    assert graded.score == graded.max_score and graded.graded_file == "attention.ipynb"
    grader = [note for note in graded.note.split("; ") if note.startswith("cell ")]
    assert check_py == grader == JUPYTER_RUN_NOTES, (check_py, grader)


def _messages_both_ways(python, folder: Path, stem: str) -> tuple[dict, dict]:
    """Each visible check of `stem`: (status, message), from check.py's --json and from the grader."""
    done = _run(python, folder, stem, "--json", "results.json")
    assert done.returncode in (0, 1), done.stdout + done.stderr
    written = json.loads((folder / "results.json").read_text())["exercises"][stem]["checks"]
    mine = {c["id"]: (c["status"], c["message"]) for c in written}
    graded = {c.check_id: (c.status, c.message) for e in _grader_results(folder) if e.stem == stem
              for c in e.checks if not c.hidden}
    return mine, graded


def test_a_module_that_cannot_take_the_checks_weights_fails_as_in_the_grader(folders, kit_free_python):
    """nn.Linear(..., bias=False): there is no W_q.bias to load the check's weights into. Both sides
    build the module with the judge's torch_module: the module's checks fail (not an error of the student's
    code), with the grader's sentence."""
    mine, graded = _messages_both_ways(kit_free_python, folders["linear layers without bias"], "multihead")
    module_checks = sorted(i for i in graded if ".MultiHeadAttention." in i)
    assert module_checks, graded
    for check_id in module_checks:
        assert mine[check_id] == graded[check_id], (check_id, mine[check_id], graded[check_id])
        status, message = graded[check_id]
        assert status == "failed" and message.startswith("MultiHeadAttention has no parameter W_q.bias to load "
                                                         "the check's weights into"), graded[check_id]
        assert "returned a MultiHeadAttention" not in message, graded[check_id]


def test_a_name_missing_because_its_cell_raised_names_that_cell(folders, kit_free_python):
    """The cell that defines softmax raised on its first line and was skipped: check.py says, as
    the grader does, that this cell (number 3: the markdown cell counts) defines it."""
    mine, graded = _messages_both_ways(kit_free_python, folders["notebook whose defining cell raised"], "attention")
    assert mine == graded, {i: (mine[i], graded.get(i)) for i in mine if mine[i] != graded.get(i)}
    assert mine["attention.softmax.rows"] == ("failed", "attention.ipynb defines no softmax: cell 3, which "
                                                        "defines it, was skipped (see the note)"), mine


def test_hand_answers_rounded_early_are_said_to_lose_points(folders, kit_free_python):
    """Consistent with one another; but the scores are rounded to one decimal, which the grader
    marks down (hand_imprecise): check.py says so of the scores, a first step that follows from no
    rounded value, and fails them as the grader does."""
    printed = _run(kit_free_python, folders["hand answers rounded early"], "hand_computation").stdout
    assert "6/7 visible checks passed" in printed and "wrong hand_computation.part_b.scores" in printed, printed
    assert "CSM_SCORES is off by rounding: its numbers were rounded to too few decimals; the values are graded " \
           "after hand-in and will lose points" in printed, printed
    assert "follow from rounded" not in printed and "follows from your rounded" not in printed, printed
    graded = {c.check_id: c for e in _grader_results(folders["hand answers rounded early"]) for c in e.checks}
    assert graded["hand_computation.part_b.scores"].status != "passed"
    assert "hand_imprecise" in graded["hand_computation.part_b.scores"].misconceptions
    assert "rounded values" not in _run(kit_free_python, folders["solutions"], "hand_computation").stdout


def _hand_checks_both_ways(python, folder: Path, tmp_path: Path) -> tuple[str, dict, dict]:
    """What check.py printed, its hand checks by id (--json), and the grader's."""
    written = tmp_path / "results.json"
    printed = _run(python, folder, "hand_computation", "--json", str(written)).stdout
    mine = {c["id"]: c for c in json.loads(written.read_text())["exercises"]["hand_computation"]["checks"]}
    return printed, mine, {c.check_id: c for e in _grader_results(folder) for c in e.checks}


def test_hand_answers_rounded_at_every_step_are_judged_as_the_grader_judges_rounding(folders, kit_free_python,
                                                                                      tmp_path):
    """A weights row summing to 0.99 after rounding is a row the grader accepts (each weight within
    its tolerance): check.py does not fail it, and says that the output is rounded and computed
    from the rounded weights, which the grader marks down."""
    folder = folders["hand answers rounded to 2 decimals at every step"]
    printed, mine, graded = _hand_checks_both_ways(kit_free_python, folder, tmp_path)
    assert graded["hand_computation.part_b.weights"].status == "passed"
    assert mine["hand_computation.part_b.weights"]["status"] == "passed", printed
    assert tuple(graded["hand_computation.part_b.output"].misconceptions) == ("hand_imprecise",)
    assert "CSM_OUTPUT is off by rounding: it was rounded, and so was your CSM_WEIGHTS it follows from; the " \
           "values are graded after hand-in and will lose points" in printed, printed
    # no hand check check.py fails is one the grader passes
    assert not [i for i, c in mine.items() if c["status"] != "passed" and graded[i].status == "passed"], printed


def test_a_slip_in_the_scores_does_not_fail_the_right_weights_after_it(handout, kit_free_python, tmp_path):
    """One dot product mistyped in CSM_SCORES, the weights and output computed from the right ones:
    the grader passes the weights, so check.py does not fail them for not following the scores."""
    folder = tmp_path / "student"
    shutil.copytree(handout, folder)
    source = (SOLUTIONS / "hand_computation.py").read_text()
    x = np.array([[1.0, 0.5, 0.2, 0.8], [0.3, 0.9, 0.1, 0.4], [0.6, 0.2, 0.7, 0.3]])
    scores = x @ x.T
    weights = _softmax_rows(scores / 2)
    slipped = scores.copy()
    slipped[0, 1] = slipped[1, 0] = scores[0, 1] + 0.1
    (folder / "hand_computation.py").write_text(_written(
        source, {"CSM_SCORES": slipped, "CSM_WEIGHTS": weights, "CSM_OUTPUT": weights @ x}, 4))
    printed, mine, graded = _hand_checks_both_ways(kit_free_python, folder, tmp_path)
    assert graded["hand_computation.part_b.weights"].status == "passed"
    assert mine["hand_computation.part_b.weights"]["status"] == "passed", printed
    assert "recheck CSM_SCORES" in printed and "your answers are consistent" not in printed, printed
    assert not [i for i, c in mine.items() if c["status"] != "passed" and graded[i].status == "passed"], printed


def _grader_results(folder: Path):
    return _grader().grade(folder).exercises


@pytest.fixture(scope="module")
def python_without_torch(tmp_path_factory) -> Path:
    """A venv without the kit and without torch: numpy alone on its path."""
    root = tmp_path_factory.mktemp("no torch")
    subprocess.run([sys.executable, "-m", "venv", "--without-pip", str(root / "env")], check=True)
    python = root / "env" / ("Scripts/python.exe" if os.name == "nt" else "bin/python")
    site = subprocess.run([str(python), "-c", "import sysconfig; print(sysconfig.get_paths()['purelib'])"],
                          capture_output=True, text=True, check=True).stdout.strip()
    numpy_only = root / "numpy-only"
    numpy_only.mkdir()
    installed = Path(np.__file__).resolve().parents[1]
    for name in ("numpy", "numpy.libs"):
        if (installed / name).exists():
            (numpy_only / name).symlink_to(installed / name)
    Path(site, "numpy_only.pth").write_text(str(numpy_only) + "\n")
    assert subprocess.run([str(python), "-c", "import torch"], capture_output=True).returncode != 0
    return python


def test_without_torch_the_numpy_checks_still_run_and_torch_is_one_sentence(folders, python_without_torch):
    printed = _run(python_without_torch, folders["solutions"], "multihead").stdout
    assert "multihead (multihead.py): 11/15 visible checks passed" in printed, printed
    assert printed.count("torch is not installed: pip install torch --index-url "
                         "https://download.pytorch.org/whl/cpu") == 1, printed
    assert "Traceback" not in printed


def test_a_visible_checks_explanations_are_not_ruled_out_by_hidden_results(tmp_path):
    """The grader narrows a visible check's explanations with visible results only (what check.py
    sees): with the 2-D mask check that tells a mask applied only when 2-D from a mask ignored made
    hidden, the visible padding check names both, as check.py would; the hidden check itself is
    still weighed with every result."""

    from autograder.config.course import CheckConfig
    from autograder.grading.course_session import GradingSession

    telling = "attention.scaled_dot_product_attention.bool_mask"
    attention = COURSE.exercises["attention"]
    checks = {**attention.checks, telling: CheckConfig(points=attention.checks[telling].points, hidden=True)}
    course = dataclasses.replace(COURSE, exercises={**COURSE.exercises,
                                                     "attention": dataclasses.replace(attention, checks=checks)})
    (tmp_path / "attention.py").write_text((CORPUS / "attention/buggy/mask_rank_ignored__ho_only_2d.py").read_text())
    named = {}
    for which, grading in (("visible", COURSE), ("hidden", course)):
        with GradingSession(grading) as session:
            result = session.grade(tmp_path, stems=("attention",))
        named[which] = {c.check_id: tuple(c.misconceptions) for c in result.exercises[0].checks}
    padding = "attention.scaled_dot_product_attention.padding_mask"
    assert named["visible"][padding] == ("mask_rank_ignored",), named["visible"]
    assert set(named["hidden"][padding]) > {"mask_rank_ignored"}, named["hidden"]


def test_an_errors_lead_counts_the_mistakes_narrowing_kept():
    """An error two mistakes raise alike is led in for both; once the student's other results rule
    one out, the lead speaks of the one left (hint_text: the grader's and check.py's words)."""
    from autograder.judge.answers import hint_text, raised_lead

    lead = raised_lead("ValueError", 12, None)
    both = hint_text("", ["First mistake.", "Second mistake."], lead)
    kept = hint_text("", ["Second mistake."], lead)
    assert "each of these mistakes:" in both and "2 explanations fit" in both
    assert kept == ("Your code raised ValueError on line 12 on inputs where a correct implementation returns; "
                    "the same error comes from this mistake: Second mistake.")
