"""autograder.judge.syntax: parsing that survives CPython 3.11's thread-unsafe AST construction."""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

from autograder.judge import syntax


def _flaky(failures: int):
    real = ast.parse
    calls = {"n": 0}

    def parse(*args, **kwargs):
        calls["n"] += 1
        if calls["n"] <= failures:
            raise SystemError("AST constructor recursion depth mismatch (before=66, after=36)")
        return real(*args, **kwargs)

    return parse, calls


def test_a_parse_disturbed_by_another_thread_is_tried_again(monkeypatch):
    parse, calls = _flaky(2)
    monkeypatch.setattr(ast, "parse", parse)
    tree = syntax.parse("import torch\n")
    assert isinstance(tree, ast.Module) and calls["n"] == 3


def test_imports_are_read_from_the_lines_when_parsing_keeps_failing(monkeypatch):
    parse, _ = _flaky(100)
    monkeypatch.setattr(ast, "parse", parse)
    assert syntax.imported_modules("import torch\nfrom matplotlib import pyplot\n") == {"torch", "matplotlib"}


def test_a_source_is_parsed_once_for_its_imports_however_often_asked(monkeypatch):
    """The sandbox asks which zygote a source needs at every session: one parse."""
    parse, calls = _flaky(0)
    monkeypatch.setattr(ast, "parse", parse)
    text = "import numpy as np\n\n\ndef f():\n    import torch  # asked for the 23.1 cache test\n"
    first = syntax.imported_modules(text)
    first.add("changed by the caller")
    assert [syntax.imported_modules(text) for _ in range(3)] == [{"numpy", "torch"}] * 3
    assert calls["n"] == 1
    assert syntax.imported_modules(text + "import matplotlib\n") == {"numpy", "torch", "matplotlib"}
    assert calls["n"] == 2


# ---------------------------------------------------------------- which zygote, mostly without parsing

WANTED = ("torch", "matplotlib")
KIT = Path(__file__).resolve().parents[1]


def _kit_sources() -> list:
    folders = ("solutions", "exercises", "reference", "tests/corpus", "tests/hostile")
    return sorted(p for folder in folders for p in (KIT / folder).rglob("*.py"))


def test_the_lines_answer_as_the_parse_does_for_every_python_file_of_the_kit():
    """Solutions, stubs, the reference, the corpus of student files and the hostile ones."""
    paths = _kit_sources()
    assert len(paths) > 300
    for path in paths:
        text = path.read_text(encoding="utf-8", errors="replace")
        assert syntax.imports_among(text, WANTED) == syntax._parsed_imports(text) & set(WANTED), path


def test_the_kit_files_are_chosen_a_zygote_without_a_parse(monkeypatch):
    """Their header names torch and matplotlib in a comment, their demos import matplotlib in the
    main block: neither asks for a parse."""
    parse, calls = _flaky(0)
    monkeypatch.setattr(ast, "parse", parse)
    for folder in ("solutions", "exercises"):
        for path in sorted((KIT / folder).glob("*.py")):
            syntax.imports_among(path.read_text(encoding="utf-8") + f"\n# {path}\n", WANTED)
    assert calls["n"] == 0


@pytest.mark.parametrize("source, expected, parsed", [
    ("import numpy as np\n", set(), False),
    ("# numpy, torch and matplotlib are allowed\nimport numpy as np\n", set(), False),
    ("import torch\nfrom torch import nn\n", {"torch"}, False),
    ("import numpy, torch.nn as tnn\n", {"torch"}, False),
    ("from matplotlib import pyplot as plt\n", {"matplotlib"}, False),
    ("import matplotlib.pyplot as plt\nx = 1  # a figure\n", {"matplotlib"}, False),
    ("import numpy\r\nimport torch\r\n", {"torch"}, False),                            # Windows line ends
    ('import numpy\n\nif __name__ == "__main__":\n    import matplotlib.pyplot as plt\n', set(), False),
    ("import numpy\n\nif __name__ == '__main__':\n    import torch\n    # the end\n", set(), False),
    ('if __name__ == "__main__":\n    import torch\n\ndef f():\n    pass\n\n\nif __name__ == "__main__":\n'
     '    import matplotlib\n', set(), False),                                            # one after each task
    # what the lines cannot settle is parsed
    ("def plot():\n    import matplotlib.pyplot as plt\n", {"matplotlib"}, True),       # imported when called
    ("x = 'torch'\n", set(), True),
    ("x = 1; import torch\n", {"torch"}, True),
    ("import torchvision\n", set(), True),
    ('if __name__ == "__main__":\n    pass\ndef f():\n    import torch\n', {"torch"}, True),   # guard not last
    ('if __name__ == "__main__":\n    pass\nelse:\n    import torch\n', set(), True),
    # a margin import inside a string: a bigger zygote than needed, the grade the same
    ('NOTE = """\nimport torch\n"""\n', {"torch"}, False),
])
def test_what_the_lines_say_and_when_the_source_is_parsed(monkeypatch, source, expected, parsed):
    monkeypatch.setattr(syntax, "_IMPORTS_SEEN", syntax.TextMemo(16))     # parsed here, not remembered
    parse, calls = _flaky(0)
    monkeypatch.setattr(ast, "parse", parse)
    assert syntax.imports_among(source, WANTED) == expected
    assert bool(calls["n"]) == parsed


def _kit_and_corpus_sources() -> list[str]:
    root = Path(__file__).resolve().parent.parent
    paths = [*sorted((root / "solutions").glob("*.py")), *sorted((root / "tests" / "corpus").rglob("*.py"))]
    texts = [p.read_text(encoding="utf-8") for p in paths]
    texts.append("try:\n    import a\nexcept ImportError:\n    from b import c\nelse:\n    import d\nfinally:\n"
                 "    import e\nmatch x:\n    case 1:\n        import f\n    case _:\n        from g import h\n"
                 "class K:\n    def m(self):\n        while True:\n            with o:\n                import i\n"
                 "async def n():\n    async for q in r:\n        from j import k\n    async with s:\n        import l\n")
    return texts


def test_the_statement_walk_finds_every_import_the_full_walk_finds():
    """Imports are statements: the statement walk (what reading a file asks: which modules, which
    names from a sibling) finds exactly the import nodes ast.walk finds, at any depth."""
    found = 0
    for text in _kit_and_corpus_sources():
        try:
            tree = ast.parse(text)
        except SyntaxError:
            continue
        imports = (ast.Import, ast.ImportFrom)
        expected = [id(n) for n in ast.walk(tree) if isinstance(n, imports)]
        assert sorted(id(n) for n in syntax.statements(tree) if isinstance(n, imports)) == sorted(expected)
        assert syntax.count_nodes(tree) == sum(1 for _ in ast.walk(tree))     # a file's size limit
        found += len(expected)
    assert found > 100


def test_a_shared_parse_is_the_same_tree_and_an_error_is_said_each_time():
    text = "def f(x):\n    return x\n"
    assert syntax.parsed(text) is syntax.parsed(text)
    assert ast.dump(syntax.parsed(text)) == ast.dump(ast.parse(text))
    for _ in range(2):
        with pytest.raises(SyntaxError):
            syntax.parsed("def f(:\n")


def test_a_tree_taken_to_be_rewritten_is_given_to_no_other_rule():
    text = "import numpy as np\nX = np.ones(3)\n"
    shared = syntax.parsed(text)
    assert syntax.taken(text) is shared                 # the reading's tree, not a parse more
    shared.body.clear()                                 # the similarity rewrites it
    again = syntax.parsed(text)
    assert again is not shared and len(again.body) == 2
    assert syntax.taken("def g():\n    return 1\n").body[0].name == "g"    # nothing shared: parsed
