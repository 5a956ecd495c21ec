"""Notebooks graded as Jupyter's Run All runs them: each notebook here runs through real Jupyter
(nbclient, the python3 kernel) and through the kit's loader and sandbox, and both must end with
the same definitions, the same values of a few calls and the same IPython names present."""

import json
import sys
from contextlib import ExitStack
from pathlib import Path

import nbformat
import pytest
from nbformat.v4 import new_code_cell, new_markdown_cell, new_notebook

from autograder.intake.cells import open_session
from autograder.config import KIT_ROOT
from autograder.grading.submission import grade_exercise
from autograder.intake.load import load_stem

SOFTMAX = ("def softmax(x, axis=-1):\n    e = np.exp(x - x.max(axis=axis, keepdims=True))\n"
           "    return e / e.sum(axis=axis, keepdims=True)")
ATTENTION = ("def scaled_dot_product_attention(Q, K, V, mask=None):\n"
             "    s = Q @ np.swapaxes(K, -1, -2) / np.sqrt(Q.shape[-1])\n"
             "    if mask is not None:\n        s = np.where(mask, s, -1e9)\n    w = softmax(s)\n    return w @ V, w")

# What the notebook ended with, printed by a last cell in both runs (functions and classes
# defined by the notebook itself; `__name__` is "__main__" in Jupyter and the stem in the kit).
PROBE = """\
import builtins as _b, json as _j, types as _t
def _value(expression):
    try:
        return repr(eval(expression))
    except Exception as err:
        return type(err).__name__
print("PROBE" + _j.dumps({
    "defined": sorted(n for n, v in list(globals().items()) if isinstance(v, (_t.FunctionType, type))
                      and not n.startswith("_") and getattr(v, "__module__", None) == __name__),
    "values": {e: _value(e) for e in VALUES},
    "ipython": sorted(n for n in ("display", "get_ipython", "In", "Out", "_ih", "_oh", "_dh", "exit", "quit")
                      if n in globals() or hasattr(_b, n)),
}))"""

NOTEBOOKS = {
    "time_defines": [
        "%matplotlib inline\nimport numpy as np",
        "%%time\n" + SOFTMAX,
        "%%time\n\n" + ATTENTION + "\nn_calls = 0",
        "%time t = softmax(np.ones(3))",
        "x = %time 5",
        "def uses_time(local_n):\n    %time m = local_n + 1\n    return 2 * local_n",
    ],
    "timeit_capture_shell": [
        "%load_ext autoreload\n%autoreload 2\n%config InlineBackend.figure_format = 'retina'\nimport numpy as np",
        "%%timeit -n1 -r1 setup_value = 3\ndef only_timed():\n    return setup_value\nlocal_to_timeit = 1",
        "%%capture out\nprint('hello')\n" + SOFTMAX,
        "%timeit -n1 -r1 softmax(np.ones(3))\n!echo hi\nlisting = !echo hi\nsoftmax?\nnp.exp??",
        "display(out.stdout)\ncaptured = out.stdout\n" + ATTENTION,
    ],
    "unknown_cell_magic": [
        "import numpy as np",
        "%%bash\necho hi\nexit 0",
        SOFTMAX,
        "%%html\n<b>bold</b>",
        "def helper(x):\n    return 2 * x",
    ],
    "errors_and_writefile": [
        "import numpy as np",
        "%%writefile helper_mod.py\ndef twice(x):\n    return 2 * x\n",
        "from helper_mod import twice",
        "%%time\ndef before_error():\n    return 1\nraise ValueError('after the definition')",
        "undefined_name_in_scratch",
        "%%time\n" + SOFTMAX,
    ],
}
VALUES = ["softmax(np.array([1.0, 2.0, 3.0])).round(6).tolist()", "x", "n_calls", "captured", "twice(4)",
          "before_error()", "helper(3)", "uses_time(3)", "local_to_timeit", "setup_value", "listing"]
# Where the kit differs from Jupyter, on purpose: no shell runs in the grader.
CORPUS = KIT_ROOT / "tests" / "corpus" / "attention" / "correct"
KIT_ONLY = {"unknown_cell_magic": {"skipped": [3]}, "timeit_capture_shell": {"values": {"listing": "[]"}}}


def _notebook(name: str) -> nbformat.NotebookNode:
    """One of NOTEBOOKS (or a notebook of the corpus), with the probe as its last cell."""
    if name in NOTEBOOKS:
        nb = new_notebook(cells=[new_markdown_cell("# A student's notebook")]
                          + [new_code_cell(c) for c in NOTEBOOKS[name]],
                          metadata={"kernelspec": {"name": "python3", "display_name": "Python 3", "language": "python"}})
    else:
        nb = nbformat.read(CORPUS / f"{name}.ipynb", as_version=4)
    nb.cells.append(new_code_cell(f"VALUES = {VALUES!r}\n" + PROBE))
    return nb


def _probed(text: str) -> dict:
    line = next(line for line in text.splitlines() if line.startswith("PROBE"))
    return json.loads(line[len("PROBE"):])


def _run_in_jupyter(nb: nbformat.NotebookNode, folder: Path) -> tuple[dict, list[int]]:
    """The probe's findings, and the numbers of the cells that raised (as Jupyter numbers them)."""
    from jupyter_client.manager import KernelManager
    from nbclient import NotebookClient

    manager = KernelManager(kernel_name="python3")
    manager.kernel_spec.argv[0] = sys.executable     # the python3 kernel, in this interpreter (as the kit's)
    NotebookClient(nb, km=manager, allow_errors=True, timeout=60,
                   resources={"metadata": {"path": str(folder)}}).execute()
    raised = [i for i, cell in enumerate(nb.cells, start=1)
              if any(o.get("output_type") == "error" for o in cell.get("outputs", []))]
    printed = "".join(o.get("text", "") for o in nb.cells[-1].outputs if o.get("output_type") == "stream")
    return _probed(printed), raised


@pytest.fixture(scope="module")
def kit(course, sandbox):
    """(the course, a sandbox) as `attnkit check` grades with them."""
    return course, sandbox


@pytest.mark.slow
@pytest.mark.parametrize("name", sorted(NOTEBOOKS) + ["ho2_nb_magics"])
def test_the_kit_ends_a_notebook_with_what_jupyter_ends_it_with(name, kit, tmp_path):
    _, sandbox = kit
    nb = _notebook(name)
    jupyter_folder, kit_folder = tmp_path / "jupyter", tmp_path / "kit"
    jupyter_folder.mkdir(), kit_folder.mkdir()
    nbformat.write(nb, kit_folder / "attention.ipynb")
    in_jupyter, raised_in_jupyter = _run_in_jupyter(nb, jupyter_folder)

    loaded = load_stem(kit_folder, "attention")
    with ExitStack() as stack:
        session, _, notes, _ = open_session(stack, sandbox, "attention", loaded, {})
        outcome = session.import_outcome
    assert outcome.status == "ok", outcome
    in_kit = _probed(outcome.output)
    differs = KIT_ONLY.get(name, {})
    expected = dict(in_jupyter, values={**in_jupyter["values"], **differs.get("values", {})})
    assert in_kit == expected
    skipped = [cell.index for cell in outcome.skipped]
    assert skipped == sorted(raised_in_jupyter + differs.get("skipped", []))
    for index in skipped:                       # each skipped cell is named by its own number, with why
        assert any(note.startswith(f"cell {index} (") and "skipped" in note for note in notes), notes
    assert in_jupyter["defined"] and "softmax" in in_jupyter["defined"]


def test_a_working_notebook_whose_definitions_sit_under_cell_magics_gets_full_marks(kit, tmp_path):
    """`%%time` on the cell that defines a function: the cell is graded, not dropped (which would
    blame a later cell with NameError and score 0)."""
    nbformat.write(_notebook("time_defines"), tmp_path / "attention.ipynb")
    result = grade_exercise("attention", load_stem(tmp_path, "attention"), *kit)
    assert result.score == result.max_score > 0, [(c.check_id, c.message) for c in result.checks if not c.passed]
    assert "skipped" not in result.note



def test_writefile_writes_only_inside_the_childs_own_folder(kit, tmp_path):
    """Where Jupyter would write anywhere, the grader writes only into its child's folder and says so."""
    nbformat.write(new_notebook(cells=[
        new_code_cell("%%writefile ../outside_the_folder.py\nx = 1"),
        new_code_cell("%%writefile inside.py\nx = 1"),
        new_code_cell("import os\nprint('FOUND', os.path.exists('../outside_the_folder.py'), os.path.exists('inside.py'))"),
    ]), tmp_path / "attention.ipynb")
    with ExitStack() as stack:
        session, _, notes, _ = open_session(stack, kit[1], "attention", load_stem(tmp_path, "attention"), {})
        output = session.import_outcome.output
    assert notes == [] and "FOUND False True" in output
    assert "%%writefile ../outside_the_folder.py: not written" in output
