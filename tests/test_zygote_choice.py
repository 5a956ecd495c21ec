"""Which zygote a submission's file is graded in, read from its import lines; a file of literals
is read without one."""

from __future__ import annotations

from pathlib import Path

import pytest

from autograder import cli
from autograder.judge.syntax import imported_modules
from autograder.sandbox.zygote_process import _Zygote
from autograder.sandbox.literals import read_here
from autograder.sandbox.zygotes import needs_of

KIT = Path(__file__).resolve().parents[1]


@pytest.mark.parametrize("source, expected", [
    ("import numpy as np\n", set()),
    ("import torch\nfrom torch import nn\n", {"torch"}),
    ("def plot():\n    import matplotlib.pyplot as plt\n", {"matplotlib"}),   # imported when called
    ('if __name__ == "__main__":\n    import matplotlib.pyplot as plt\n', set()),   # a demo: never run
    ("# import torch would be slow\nx = 'import torch'\n", set()),
    ("%matplotlib inline\nimport matplotlib.pyplot as plt\n", {"matplotlib"}),   # does not parse: by lines
])
def test_what_a_source_imports(source, expected):
    assert imported_modules(source) & {"torch", "matplotlib"} == expected


def test_the_bundled_numpy_exercises_need_no_matplotlib_to_be_graded():
    """Their demos draw, but only in `if __name__ == "__main__":` blocks the grader never runs."""
    for stem in ("hand_computation", "attention", "causal_mask"):
        for folder in ("solutions", "exercises"):
            path = KIT / folder / f"{stem}.py"
            assert needs_of(read_here((path.read_text(encoding="utf-8"),)).imports) == (False, False), path
    torch_module = (KIT / "solutions" / "multihead.py").read_text(encoding="utf-8")
    assert needs_of(read_here((torch_module,)).imports)[0] is True       # the one that does need torch


def test_a_file_of_literals_needs_no_zygote(tmp_path, monkeypatch, capsys):
    """The hand computation as the contract asks for it is read, not run: checking it alone starts
    no zygote at all."""
    (tmp_path / "hand_computation.py").write_text((KIT / "solutions" / "hand_computation.py").read_text(
        encoding="utf-8"), encoding="utf-8")
    started: list[dict] = []
    real_init = _Zygote.__init__
    monkeypatch.setattr(_Zygote, "__init__", lambda self, config: started.append(config) or real_init(self, config))
    code = cli.main(["check", "--submission", str(tmp_path), "--exercise", "hand_computation"])
    assert code == 0, capsys.readouterr().out
    assert started == []


def test_an_import_the_lines_hide_is_made_by_the_child_and_graded_the_same(tmp_path, course, sandbox):
    """A guard line inside a string hides the function below it from the zygote choice
    (syntax.imports_among): the numpy-only child imports torch itself, slower, and the grade is
    the one the plain solution gets."""
    from autograder.grading.submission import grade_exercise
    from autograder.intake.load import load_stem

    solution = (KIT / "solutions" / "attention.py").read_text(encoding="utf-8")
    hidden = solution + ('\n\ndef softmax_by_library(x, axis=-1):\n    note = """\nif __name__ == "__main__":\n    """\n'
                         '    import torch\n    return torch.softmax(torch.as_tensor(x), dim=axis).numpy()\n')
    assert needs_of(read_here((hidden,)).imports) == (False, False)       # what the lines say: numpy only
    assert imported_modules(hidden) & {"torch"} == {"torch"}
    results = []
    for name, text in (("plain", solution), ("hidden", hidden + "\nsoftmax = softmax_by_library\n")):
        folder = tmp_path / name
        folder.mkdir()
        (folder / "attention.py").write_text(text, encoding="utf-8")
        graded = grade_exercise("attention", load_stem(folder, "attention"), course, sandbox, folder=folder)
        results.append([(c.check_id, c.status, c.score) for c in graded.checks])
    assert results[0] == results[1] and all(status == "passed" for _, status, _ in results[0])
