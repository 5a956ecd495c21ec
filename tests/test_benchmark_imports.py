"""The benchmarks are run by hand, not by the suite: each name they import from the kit must
still exist, so a moved function breaks a test here rather than the next measurement."""

from __future__ import annotations

import ast
import importlib

import pytest

from autograder.config import KIT_ROOT

BENCHMARKS = sorted((KIT_ROOT / "benchmarks").glob("*.py"))


def kit_imports(path):
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.ImportFrom) and not node.level and (node.module or "").startswith("autograder"):
            for alias in node.names:
                yield node.module, alias.name
        elif isinstance(node, ast.Import):
            for alias in node.names:
                if alias.name.startswith("autograder"):
                    yield alias.name, None


@pytest.mark.quick
@pytest.mark.parametrize("path", BENCHMARKS, ids=lambda p: p.name)
def test_every_name_a_benchmark_imports_from_the_kit_exists(path):
    for module, name in kit_imports(path):
        found = importlib.import_module(module)
        if name is not None and not hasattr(found, name):
            importlib.import_module(f"{module}.{name}")     # a submodule
