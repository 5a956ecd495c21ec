"""A file that only binds literals is read, not run (autograder/sandbox/literals.py says which,
autograder/sandbox/inert.py answers for it): the grade is the one a child gives, message for
message, and anything that is not plainly a literal runs in a child as before.

The differential test grades each file twice, once read (the default) and once with the reading
switched off so that every file runs in a child, and expects the same ExerciseResult."""

from __future__ import annotations

from pathlib import Path

import pytest

import autograder.sandbox.client as client
from autograder.grading.submission import grade_exercise
from autograder.intake.load import load_submission
from autograder.sandbox.literals import inert_values
from autograder.sandbox.inert import InertSession

KIT = Path(__file__).resolve().parent.parent
SOLUTION = (KIT / "solutions" / "hand_computation.py").read_text()
STUB = (KIT / "exercises" / "hand_computation.py").read_text()


def _with(**names) -> str:
    """The solution with some names bound to other source text."""
    lines = [SOLUTION]
    lines += [f"{name} = {text}" for name, text in names.items()]
    return "\n".join(lines) + "\n"


# Inert files a student may hand in: right, unfinished, and wrong in the ways a literal can be.
INERT = {
    "solution": SOLUTION,
    "stub": STUB,
    "ints": _with(SCORES="[[1, 1], [1, 0]]"),
    "tuples": _with(SCORES="((1.0, 1.0), (1.0, 0.0))", WEIGHTS="([0.5, 0.5], [0.6698, 0.3302])"),
    "transposed": _with(CSM_OUTPUT="[[0.6878, 0.6374, 0.6625], [0.5289, 0.5607, 0.5079], "
                                   "[0.3130, 0.3027, 0.3467], [0.5448, 0.5175, 0.5122]]"),
    "ragged": _with(SCORES="[[1.0, 1.0], [1.0]]"),
    "strings": _with(SCORES="[['1', '1'], ['1', '0']]", WEIGHTS="'0.5 0.5; 0.67 0.33'"),
    "dict_and_set": _with(SCORES="{0: [1.0, 1.0], 1: [1.0, 0.0]}", WEIGHTS="{0.5, 0.6698}"),
    "complex_bool_bytes": _with(SCORES="[[1+0j, 1j], [1, 0]]", WEIGHTS="[[True, False], [False, True]]",
                                OUTPUT="b'1.5 1.5'"),
    "huge_and_inf": _with(SCORES="[[1, 1e999], [-1e999, 0]]",
                          WEIGHTS="[[123456789012345678901234567890, 0.5], [0.5, 0.5]]"),
    "empty_and_deep": _with(SCORES="[]", WEIGHTS="[[[[[[[[[[0.5]]]]]]]]]]", OUTPUT="[[]]"),
    "scalars": _with(SCORES="1.0", SCALED_SCORES="None", CSM_SCORES="..."),
    "chained_and_rebound": _with(SCORES="WEIGHTS_COPY = [[0.5, 0.5], [0.6698, 0.3302]]",   # SCORES = W.. = [..]
                                 WEIGHTS="[[0.5, 0.5], [0.7, 0.3]]"),
    "negative_and_signs": _with(OUTPUT="[[-1.5, +1.5], [-(1.6698), 1.3302]]"),
    "imports_and_guard": "from __future__ import annotations\nimport numpy as np\nfrom math import sqrt, exp\n"
                         "import math\n" + SOLUTION + "\nif __name__ == '__main__':\n    raise SystemExit(1)\n",
    "docstring_only_names_missing": '"""My answers."""\nSCORES = [[1.0, 1.0], [1.0, 0.0]]\npass\n',
}

# Files that must run in a child: executing them does more than bind literals, or may fail.
RUNS = {
    "a call": "SCORES = [[1.0, 1.0], [1.0, 0.0]]\nprint(SCORES)\n",
    "a computed value": "import numpy as np\nSCORES = np.array([[1.0, 1.0], [1.0, 0.0]])\n",
    "a name": "A = [[1.0]]\nSCORES = A\n",
    "arithmetic": "SCORES = [[1.0, 1.0], [1.0, 0.0]] * 2\n",
    "an else after the guard": SOLUTION + "\nif __name__ == '__main__':\n    pass\nelse:\n    SCORES = 1\n",
    "another guard": SOLUTION + "\nif __name__ != '__main__':\n    SCORES = 1\n",
    "a function": SOLUTION + "\ndef f(x=print('hi')):\n    return x\n",
    "a decorated function, indented after a bracket": "SCORES = [\n1.0]\n@staticmethod\ndef f():\n    pass\n",
    "an import that runs code": "import antigravity\nSCORES = [[1.0]]\n",
    "an import of a sibling": "import attention\nSCORES = [[1.0]]\n",
    "a missing math name": "from math import no_such_thing\nSCORES = [[1.0]]\n",
    "a star import": "from math import *\nSCORES = [[1.0]]\n",
    "a relative import": "from . import x\nSCORES = [[1.0]]\n",
    "an annotation": "SCORES: list = [[1.0]]\n",
    "unpacking": "SCORES, WEIGHTS = [[1.0]], [[1.0]]\n",
    "an attribute target": "import math\nmath.pi = 3\nSCORES = [[1.0]]\n",
    "augmented": "SCORES = [[1.0]]\nSCORES += [[2.0]]\n",
    "a loop": "SCORES = []\nfor i in range(2):\n    SCORES.append([1.0, 1.0])\n",
    "a syntax error": "SCORES = [[1.0, 1.0]\n",
    "set() rebound": "set = list\nSCORES = set()\n",
}


@pytest.mark.parametrize("name", sorted(RUNS))
def test_a_file_that_does_more_than_bind_literals_runs_in_a_child(name):
    assert inert_values(RUNS[name]) is None


def test_a_long_file_of_literals_runs_in_a_child_under_its_limits():
    """Reading costs the grader memory many times the file's size: past 32 KB a child runs it."""
    assert inert_values("X = [" + "0," * 8000 + "]\n") is not None
    assert inert_values("X = [" + "0," * 20000 + "]\n") is None
    assert inert_values([{"source": "X = [" + "0," * 9000 + "]\n"}] * 2) is None


def test_a_blocked_module_is_not_imported_by_reading_the_file():
    source = "import numpy as np\nSCORES = [[1.0, 1.0], [1.0, 0.0]]\n"
    assert inert_values(source) is not None
    assert inert_values(source, blocked=("numpy",)) is None


def test_notebook_cells_are_read_in_order_and_each_must_be_inert():
    cells = [{"source": "SCORES = [[0.0]]", "index": 1}, {"source": "SCORES = [[1.0]]\nWEIGHTS = [[2.0]]", "index": 3}]
    assert inert_values(cells) == {"SCORES": [[1.0]], "WEIGHTS": [[2.0]]}
    assert inert_values(cells + [{"source": "print(SCORES)", "index": 4}]) is None


@pytest.fixture(scope="module")
def forms(tmp_path_factory):
    """Each inert file as a .py and as a notebook (its `# %%` cells, as jupytext reads them)."""
    import jupytext
    import nbformat

    out = {}
    for name, text in INERT.items():
        folder = tmp_path_factory.mktemp(name)
        (folder / "hand_computation.py").write_text(text)
        out[f"{name}.py"] = folder
        nb_folder = tmp_path_factory.mktemp(name + "_nb")
        nbformat.write(jupytext.reads(text, fmt="py:percent"), nb_folder / "hand_computation.ipynb")
        out[f"{name}.ipynb"] = nb_folder
    return out


def test_every_inert_form_is_read_not_run(forms):
    for label, folder in forms.items():
        loaded = load_submission(folder, ("hand_computation",))["hand_computation"]
        from autograder.intake.cells import session_source

        assert inert_values(session_source(loaded)) is not None, label


def test_a_read_file_is_graded_exactly_as_a_child_grades_it(forms, course, sandbox, monkeypatch):
    """Every check's status, score, message, hint and reason, for each inert file in both forms."""
    spawned = []
    real_session = client.Session

    def counted(*args, **kwargs):
        spawned.append(args[1])
        return real_session(*args, **kwargs)

    monkeypatch.setattr(client, "Session", counted)
    read = {}
    for label, folder in forms.items():
        loaded = load_submission(folder, ("hand_computation",))["hand_computation"]
        read[label] = grade_exercise("hand_computation", loaded, course, sandbox, folder=folder)
    assert len(spawned) == 2       # a child only for the names one file does not bind (its .py and .ipynb)
    monkeypatch.setattr(client, "inert_of", lambda read, blocked=(): None)
    for label, folder in forms.items():
        loaded = load_submission(folder, ("hand_computation",))["hand_computation"]
        ran = grade_exercise("hand_computation", loaded, course, sandbox, folder=folder)
        assert ran == read[label], label
    assert len(spawned) == 2 + len(forms)       # the second pass ran every file in a child
    assert read["solution.py"].score == read["solution.py"].max_score
    assert read["stub.py"].score == 0


def test_a_name_the_file_does_not_bind_or_a_call_goes_to_a_child(course, sandbox):
    source = "SCORES = [[1.0, 1.0], [1.0, 0.0]]\n"
    with sandbox.session("hand_computation", source, "hand_computation.py") as session:
        assert isinstance(session, InertSession)
        assert session.attribute("SCORES").value.tolist() == [[1.0, 1.0], [1.0, 0.0]]
        assert session._child_session is None                  # read, no child
        missing = session.attribute("WEIGHTS")
        assert missing.status == "missing" and missing.message == "hand_computation.py defines no WEIGHTS"
        called = session.call("SCORES", [])
        assert called.status == "missing" and "not a function" in called.message
        assert session._child_session is not None and session._child_session.import_outcome.ok
