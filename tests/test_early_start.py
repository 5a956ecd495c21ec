"""`attnkit check` starts the zygotes its files need before the grader imports itself, and the
Sandbox adopts them: a cold check pays each warm-up once, beside the grader's own imports."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from autograder import cli
from autograder.sandbox import early
from autograder.intake.syntax import imported_modules
from autograder.sandbox.outcome import Limits
from autograder.sandbox.zygote_process import _Zygote

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
            assert early.needs_of([path.read_text(encoding="utf-8")]) == (False, False), path


def test_a_notebook_is_read_cell_by_cell(tmp_path):
    cells = [{"cell_type": "code", "source": ["%matplotlib inline\n", "import numpy as np\n"]},
             {"cell_type": "markdown", "source": "import torch"},
             {"cell_type": "code", "source": "import matplotlib.pyplot as plt\n"}]
    (tmp_path / "scaling.ipynb").write_text(json.dumps({"cells": cells}), encoding="utf-8")
    (tmp_path / "multihead.py").write_text("import torch\n", encoding="utf-8")
    (tmp_path / "notes.txt").write_text("import torch\n", encoding="utf-8")
    assert early.folder_needs(tmp_path, None) == {(False, True), (True, False)}
    assert early.folder_needs(tmp_path, ("scaling",)) == {(False, True)}
    assert early.folder_needs(tmp_path / "missing", None) == set()


def test_a_file_of_literals_needs_no_zygote(tmp_path, monkeypatch, capsys):
    """The hand computation as the contract asks for it is read, not run: checking it alone starts
    no zygote at all."""
    (tmp_path / "hand_computation.py").write_text((KIT / "solutions" / "hand_computation.py").read_text(
        encoding="utf-8"), encoding="utf-8")
    assert early.folder_needs(tmp_path, None) == set()
    (tmp_path / "attention.py").write_text("import numpy as np\nprint(np.pi)\n", encoding="utf-8")
    assert early.folder_needs(tmp_path, None) == {(False, False)}
    started: list[dict] = []
    real_init = _Zygote.__init__
    monkeypatch.setattr(_Zygote, "__init__", lambda self, config: started.append(config) or real_init(self, config))
    code = cli.main(["check", "--submission", str(tmp_path), "--exercise", "hand_computation"])
    assert code == 0, capsys.readouterr().out
    assert started == [] and not early._waiting


def test_the_numpy_zygote_starts_before_the_files_are_parsed(tmp_path, monkeypatch):
    """A check of one exercise waits for the numpy zygote's start: a file with a function at the
    margin (no file of literals) has it started before the files are parsed for their imports;
    a torch file's zygote follows the parse."""
    (tmp_path / "attention.py").write_text("import numpy as np\n\n\ndef softmax(x):\n    return x\n")
    (tmp_path / "multihead.py").write_text("import torch\n\n\nclass MultiHeadAttention:\n    pass\n")
    started_before_parse: list[list[dict]] = []
    real_needs = early._needs
    monkeypatch.setattr(early, "_needs", lambda sources: started_before_parse.append(
        [dict(z.config) for z in early._waiting]) or real_needs(sources))
    try:
        early.start_for_folder(tmp_path, None, Limits())
        assert [(c["torch"], c["matplotlib"]) for c in started_before_parse[0]] == [(False, False)]
        assert sorted((z.config["torch"], z.config["matplotlib"]) for z in early._waiting) == \
            [(False, False), (True, False)]
    finally:
        early.close_unadopted()


def test_one_torch_zygote_serves_files_that_need_torch_with_or_without_matplotlib():
    # the longest warm-up started first: a check of every exercise waits for it last
    assert early.zygotes_for({(True, False), (True, True)}) == [(True, True), (False, False)]
    assert early.zygotes_for({(True, False), (False, True)}) == [(True, False), (False, True), (False, False)]
    assert early.zygotes_for(set()) == [(False, False)]


@pytest.mark.speedup("early_zygotes")
def test_check_adopts_the_zygotes_it_started_early(tmp_path, monkeypatch, capsys):
    started: list[dict] = []
    real_init = _Zygote.__init__

    def counting_init(self, config):
        started.append(dict(config))
        real_init(self, config)

    monkeypatch.setattr(_Zygote, "__init__", counting_init)
    for stem in ("attention", "causal_mask"):
        (tmp_path / f"{stem}.py").write_text((KIT / "solutions" / f"{stem}.py").read_text(encoding="utf-8"),
                                             encoding="utf-8")
    code = cli.main(["check", "--submission", str(tmp_path), "--exercise", "attention",
                     "--exercise", "causal_mask"])
    out = capsys.readouterr().out
    assert code == 0, out
    assert [(c["torch"], c["matplotlib"]) for c in started] == [(False, False)]   # one zygote, started once
    assert not early._waiting                                                    # and adopted
    assert started[0]["lean"] is True          # a check forks one child per stem (a watcher's are not lean)


def _maps_numpy_random(z: _Zygote) -> bool:
    z.wait_ready(60)
    try:
        with open(f"/proc/{z.pid}/maps", encoding="utf-8") as maps:
            return "numpy/random/_generator" in maps.read()
    except OSError:
        pytest.skip("this user cannot read the zygote's memory map")


def test_a_lean_zygote_leaves_numpy_random_to_the_child_whose_code_draws(tmp_path, capsys):
    """A check's zygotes are lean: numpy.random's import (a noticeable part of the numpy zygote's start) is left
    to the child that uses it; a watcher's, which fork again at every save, import it ahead. The
    scaling experiment, which draws, gets full marks from a lean zygote's child."""
    (tmp_path / "attention.py").write_text((KIT / "solutions" / "attention.py").read_text(encoding="utf-8"),
                                           encoding="utf-8")
    found = {}
    for lean in (True, False):
        try:
            early.start_for_folder(tmp_path, None, Limits(), lean=lean)
            [z] = early._waiting
            found[lean] = _maps_numpy_random(z)
        finally:
            early.close_unadopted()
    assert found == {True: False, False: True}
    code = cli.main(["check", "--submission", str(KIT / "solutions"), "--exercise", "scaling"])
    assert code == 0, capsys.readouterr().out


def test_a_check_that_stops_before_grading_leaves_no_zygote_running(tmp_path, capsys):
    bad = tmp_path / "course.yml"
    bad.write_text("points: [", encoding="utf-8")
    assert cli.main(["--course", str(bad), "check", "--submission", str(KIT / "solutions")]) == 2
    assert not early._waiting


def test_the_command_line_is_read_before_numpy_or_the_course_types_are_imported():
    """The zygotes start right after the arguments are parsed: building the parser (every
    subcommand, `variants` and `practice` included) must not import numpy, pydantic or torch,
    which would put their import time before the zygotes' warm-up instead of beside it."""
    import subprocess
    import sys

    probe = ("import sys\nfrom autograder.cli import parse, parser\nparser().parse_args(['check', '--exercise', 'attention'])\n"
             "parse(['check', '--exercise', 'attention'])\n"
             "print(sorted(m for m in ('numpy', 'pydantic', 'torch', 'yaml') if m in sys.modules))")
    out = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True, cwd=KIT, check=True)
    assert out.stdout.strip() == "[]", out.stdout


def test_an_import_the_lines_hide_is_made_by_the_child_and_graded_the_same(tmp_path, course, sandbox):
    """A guard line inside a string hides the function below it from the zygote choice
    (syntax.imports_among): the numpy-only child imports torch itself, slower, and the grade is
    the one the plain solution gets."""
    from autograder.grading.submission import grade_exercise
    from autograder.intake.load import load_stem

    solution = (KIT / "solutions" / "attention.py").read_text(encoding="utf-8")
    hidden = solution + ('\n\ndef softmax_by_library(x, axis=-1):\n    note = """\nif __name__ == "__main__":\n    """\n'
                         '    import torch\n    return torch.softmax(torch.as_tensor(x), dim=axis).numpy()\n')
    assert early.needs_of([hidden]) == (False, False)       # what the lines say: numpy only
    assert imported_modules(hidden) & {"torch"} == {"torch"}
    results = []
    for name, text in (("plain", solution), ("hidden", hidden + "\nsoftmax = softmax_by_library\n")):
        folder = tmp_path / name
        folder.mkdir()
        (folder / "attention.py").write_text(text, encoding="utf-8")
        graded = grade_exercise("attention", load_stem(folder, "attention"), course, sandbox, folder=folder)
        results.append([(c.check_id, c.status, c.score) for c in graded.checks])
    assert results[0] == results[1] and all(status == "passed" for _, status, _ in results[0])
