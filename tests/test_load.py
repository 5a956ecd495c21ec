"""Room 1: files become source text or a LoadError that says what is wrong; nothing runs."""

import json

import nbformat
import pytest
from nbformat.v4 import new_code_cell, new_markdown_cell, new_notebook

from autograder.intake.load import LoadError, SourceFile, load_stem


def _notebook(path, *cells):
    nb = new_notebook(cells=list(cells))
    nbformat.write(nb, path)


def test_a_notebook_is_its_code_cells_as_ipython_transforms_them(tmp_path):
    _notebook(tmp_path / "attention.ipynb",
              new_markdown_cell("# words"),
              new_code_cell("%matplotlib inline\n!pip install nothing\nimport numpy as np\nnp.exp?"),
              new_code_cell("%%timeit\nwhile True: pass"),
              new_code_cell("def softmax(x, axis=-1):\n    %time y = 1\n    return x"))
    loaded = load_stem(tmp_path, "attention")
    assert isinstance(loaded, SourceFile) and loaded.filename == "attention.ipynb"
    assert "import numpy as np" in loaded.source and "def softmax" in loaded.source and "words" not in loaded.source
    run = [c.as_dict()["source"] for c in loaded.cells]
    assert run == ["get_ipython().run_line_magic('matplotlib', 'inline')\nget_ipython().system('pip install nothing')\n"
                   "import numpy as np\nget_ipython().run_line_magic('pinfo', 'np.exp')\n",
                   "get_ipython().run_cell_magic('timeit', '', 'while True: pass\\n')\n",
                   "def softmax(x, axis=-1):\n    get_ipython().run_line_magic('time', 'y = 1')\n    return x\n"]
    assert [c.as_dict()["text"].splitlines()[0] for c in loaded.cells] == ["%matplotlib inline", "%%timeit",
                                                                          "def softmax(x, axis=-1):"]
    compile(loaded.source, "attention.ipynb", "exec")


def test_a_cell_magic_that_runs_its_body_in_the_namespace_is_read_as_its_body(tmp_path):
    """`%%time` over a definition: the grader reads the definition (stubs, imports), the child
    runs the magic's call; both keep the cell's line numbers, blank lines at the top included."""
    _notebook(tmp_path / "attention.ipynb",
              new_code_cell("\n%%time\nimport torch\ndef softmax(x, axis=-1):\n    return x"),
              new_code_cell("%%capture out\ndef broken(:\n    pass", metadata={"nbgrader": {"solution": False}}))
    loaded = load_stem(tmp_path, "attention")
    cell = loaded.cells[0]
    assert cell.source.splitlines()[3:5] == ["def softmax(x, axis=-1):", "    return x"]
    assert cell.as_dict()["source"].splitlines()[1].startswith("get_ipython().run_cell_magic('time', ''")
    assert cell.first_line == "%%time" and "import torch" in loaded.source
    assert "cell 2" in loaded.source.skipped[0] and "line 2" in loaded.source.skipped[0]
@pytest.mark.parametrize("name, content, words", [
    ("attention.py", b"", "is empty"),
    ("attention.py", b"   \n\n", "is empty"),
    ("attention.py", b"\x7fELF\x00\x01binary", "binary file"),
    ("attention.py", "x = 'caf\u00e9'\n".encode("latin-1"), "not UTF-8 text (byte 0xe9 on line 1)"),
    ("attention.py", b"def softmax(x:\n    return x\n", "syntax error at line 1"),
    ("attention.ipynb", b"{not json", "invalid JSON at line 1"),
    ("attention.ipynb", b'{"hello": "world"}', "not a Jupyter notebook"),
    ("attention.ipynb", json.dumps({"cells": "nope", "nbformat": 4, "nbformat_minor": 5, "metadata": {}}).encode(),
     "not a valid nbformat notebook"),
])
def test_broken_files_give_a_message_that_says_what_is_wrong(tmp_path, name, content, words):
    (tmp_path / name).write_bytes(content)
    loaded = load_stem(tmp_path, "attention")
    assert isinstance(loaded, LoadError) and not loaded.missing
    assert words in loaded.message and name in loaded.message


def test_a_huge_file_is_refused_before_it_is_read(tmp_path):
    (tmp_path / "attention.py").write_bytes(b"#" * (3 * 1024 * 1024))
    loaded = load_stem(tmp_path, "attention")
    assert isinstance(loaded, LoadError) and "the limit is" in loaded.message


def test_missing_and_symlinked_files(tmp_path):
    assert load_stem(tmp_path, "attention").missing
    (tmp_path / "elsewhere.py").write_text("x = 1\n")
    (tmp_path / "attention.py").symlink_to(tmp_path / "elsewhere.py")
    loaded = load_stem(tmp_path, "attention")
    assert isinstance(loaded, LoadError) and "symbolic link" in loaded.message


def test_help_syntax_becomes_what_ipython_runs_and_ordinary_code_is_kept(tmp_path):
    _notebook(tmp_path / "attention.ipynb", new_code_cell("a = 1 if 2 else 3\nx?\nnp.linalg.norm??\n?y\nprint('why?')"))
    lines = load_stem(tmp_path, "attention").cells[0].as_dict()["source"].splitlines()
    assert lines == ["a = 1 if 2 else 3", "get_ipython().run_line_magic('pinfo', 'x')",
                     "get_ipython().run_line_magic('pinfo2', 'np.linalg.norm')",
                     "get_ipython().run_line_magic('pinfo', 'y')", "print('why?')"]


def test_a_notebook_keeps_its_cells_numbered_as_jupyter_shows_them(tmp_path):
    _notebook(tmp_path / "attention.ipynb",
              new_markdown_cell("# words"),
              new_code_cell("import numpy as np"),
              new_code_cell("def softmax(x, axis=-1):\n    return x", metadata={"nbgrader": {"solution": True}}),
              new_code_cell("### BEGIN SOLUTION\ny = 2\n### END SOLUTION"),
              new_code_cell("print(softmax(np.ones(3))"))          # a scratch cell that does not compile
    loaded = load_stem(tmp_path, "attention")
    assert [(c.index, c.solution) for c in loaded.cells] == [(2, False), (3, True), (4, True)]
    assert "cell 5" in loaded.source.skipped[0] and "syntax error" in loaded.source.skipped[0]


def test_a_solution_cell_that_does_not_compile_names_its_cell(tmp_path):
    _notebook(tmp_path / "attention.ipynb", new_code_cell("x = 1"),
              new_code_cell("def softmax(x:\n    pass", metadata={"nbgrader": {"solution": True}}))
    loaded = load_stem(tmp_path, "attention")
    assert isinstance(loaded, LoadError) and "cell 2" in loaded.message and "line 1" in loaded.message


def test_a_plain_v4_notebook_read_without_nbformat_gives_what_nbformat_gives(tmp_path, monkeypatch):
    """The fast path (JSON read directly) and nbformat's reader give the same cells, and anything
    that is not a plain format-4 notebook still goes through nbformat."""
    import autograder.intake.load as load

    cells = [new_markdown_cell("# words"), new_code_cell("import numpy as np\n%time x = 1"),
             nbformat.v4.new_raw_cell("raw"),
             new_code_cell("### BEGIN SOLUTION\ndef softmax(x, axis=-1):\n    return x\n### END SOLUTION",
                           metadata={"nbgrader": {"solution": True, "grade_id": "a"}})]
    text = nbformat.writes(new_notebook(cells=cells))
    as_strings = json.loads(text)                                   # nbformat saves sources as lists of lines
    for cell in as_strings["cells"]:
        cell["source"] = "".join(cell["source"])
    for variant in (text, json.dumps(as_strings)):
        assert load.plain_v4(json.loads(variant))
        fast = load.notebook_cells(variant, "attention.ipynb")
        monkeypatch.setattr(load, "plain_v4", lambda raw: False)
        assert load.notebook_cells(variant, "attention.ipynb") == fast
        monkeypatch.undo()
    odd = json.loads(text)
    odd["cells"][1].pop("cell_type")                      # not plain: nbformat reads it (and logs that it is invalid)
    assert not load.plain_v4(odd)
    read = load.notebook_cells(json.dumps(odd), "attention.ipynb")
    assert [c.index for c in read] == [4] and "def softmax" in read[0].source


def test_what_compile_said_of_a_text_is_kept_by_text_and_name(monkeypatch):
    """A class run reads every graded file again at its end (the similarity signal): compile() is
    asked once per text and name; the memo is bounded."""
    from autograder.intake import load

    calls = []
    real = load._compile_problem
    monkeypatch.setattr(load, "_compile_problem", lambda source, name: calls.append(name) or real(source, name))
    monkeypatch.setattr(load, "_COMPILED", load.TextMemo(4))
    broken = "def f(:\n    pass\n"
    first = load.syntax_problem(broken, "a.py")
    assert first.startswith("a.py has a syntax error at line 1") and load.syntax_problem(broken, "a.py") == first
    assert load.syntax_problem(broken, "b.py").startswith("b.py has a syntax error")   # the name is part of it
    assert load.syntax_problem("x = 1\n", "a.py") is None
    assert calls == ["a.py", "b.py", "a.py"]
    for i in range(10):
        load.syntax_problem(f"x = {i}\n", "a.py")
    assert len(load._COMPILED.found) <= 4
