"""autograder.intake.syntax: parsing that survives CPython 3.11's thread-unsafe AST construction."""

from __future__ import annotations

import ast

from autograder.intake import syntax


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
    """The sandbox asks which zygote a source needs at every session (issue 23.1): one parse."""
    parse, calls = _flaky(0)
    monkeypatch.setattr(ast, "parse", parse)
    text = "import numpy as np\n\n\ndef f():\n    import torch  # asked for the 23.1 cache test\n"
    first = syntax.imported_modules(text)
    first.add("changed by the caller")
    assert [syntax.imported_modules(text) for _ in range(3)] == [{"numpy", "torch"}] * 3
    assert calls["n"] == 1
    assert syntax.imported_modules(text + "import matplotlib\n") == {"numpy", "torch", "matplotlib"}
    assert calls["n"] == 2
