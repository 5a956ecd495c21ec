"""The folder tree shows the architecture (docs/architecture.md, "The map"): rooms by concern, each
package a floor that imports only from the floors below it, few modules loose at the top, no import
circles, the judge kit-free, and the jail's side of the sandbox apart from the grader's."""

import ast
import sys
from pathlib import Path

import pytest

KIT = Path(__file__).resolve().parents[1]
PACKAGE = KIT / "autograder"
INSIDE = PACKAGE / "sandbox" / "inside"

pytestmark = pytest.mark.quick


def _module_name(path: Path, root: Path = KIT) -> str:
    rel = path.relative_to(root).with_suffix("")
    return ".".join(rel.parts[:-1] if rel.name == "__init__" else rel.parts)


def _imports(path: Path, modules: frozenset[str] = frozenset(), *, inside_functions: bool = False,
             root: Path = KIT) -> set[str]:
    """Modules a file imports: when it is imported (the module's body), or, with `inside_functions`,
    also where its functions run. Imports under `if TYPE_CHECKING:` are left out: they are never
    run, and name a type for an annotation only.
    `from package import submodule` counts as importing the submodule only: the package's own
    code is not needed for it (Python has begun importing the package already)."""
    name = _module_name(path, root)
    package = name if path.name == "__init__.py" else name.rpartition(".")[0]
    tree = ast.parse(path.read_text())
    typing_only = {id(inner) for node in ast.walk(tree)
                   if isinstance(node, ast.If) and "TYPE_CHECKING" in ast.unparse(node.test)
                   for statement in node.body for inner in ast.walk(statement)}
    found = set()
    for node in (ast.walk(tree) if inside_functions else tree.body):
        if id(node) in typing_only:
            continue
        if isinstance(node, ast.Import):
            found.update(alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:
                parts = package.split(".")[:len(package.split(".")) - node.level + 1]
                base = ".".join(parts + ([node.module] if node.module else []))
            names = {f"{base}.{alias.name}" for alias in node.names}
            found.update(names)
            if not names <= modules:
                found.add(base)
    return found


def _top_level_imports(path: Path, modules: frozenset[str] = frozenset()) -> set[str]:
    return _imports(path, modules)


def _kit_modules() -> dict[str, Path]:
    files = [*PACKAGE.rglob("*.py"), *(KIT / "reference").rglob("*.py")]
    return {_module_name(p): p for p in files if "__pycache__" not in p.parts}


def _cycles(graph: dict[str, set[str]]) -> list[list[str]]:
    """Tarjan's strongly connected components with more than one module."""
    index, low, stack, on_stack, found = {}, {}, [], set(), []
    sys.setrecursionlimit(max(sys.getrecursionlimit(), 10_000))

    def visit(v):
        index[v] = low[v] = len(index)
        stack.append(v)
        on_stack.add(v)
        for w in graph[v]:
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in on_stack:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            component = []
            while True:
                w = stack.pop()
                on_stack.discard(w)
                component.append(w)
                if w == v:
                    break
            if len(component) > 1:
                found.append(sorted(component))

    for v in graph:
        if v not in index:
            visit(v)
    return found


def _import_graph() -> dict[str, set[str]]:
    """Each kit module -> the kit modules it imports, at its top or inside its functions."""
    modules = _kit_modules()
    return {name: {d for d in _imports(path, frozenset(modules), inside_functions=True) if d in modules and d != name}
            for name, path in modules.items()}


# The packages (and modules loose at the top) of autograder/, bottom floor first: each imports only
# from its own floor or those below it, at its top or inside its functions. A new package gets its
# floor here.
FLOORS = ("judge", "results", "speedups", "config", "sandbox", "checks", "diagnosis", "intake", "variants",
          "integrity", "reports", "grading", "build", "handout", "cluster", "nbgrader", "gradescope",
          "frontends", "cli", "conftest", "test_exercises")

def _floor_of(module: str) -> str | None:
    """The package of autograder/ a module belongs to (a loose module is its own); None outside it."""
    parts = module.split(".")
    return parts[1] if parts[0] == "autograder" and len(parts) > 1 else None


def _upward(graph: dict[str, set[str]], floors=FLOORS) -> list[str]:
    """Each import of a floor above the importer's, said as "a imports b (x is below y)"."""
    rank = {name: n for n, name in enumerate(floors)}
    found = []
    for importer, imported in sorted((a, b) for a, targets in graph.items() for b in targets):
        low, high = _floor_of(importer), _floor_of(imported)
        if low is None or high is None or low == high:
            continue
        if rank[high] > rank[low]:
            found.append(f"{importer} imports {imported} ({low} is below {high})")
    return found


def test_every_package_has_a_floor():
    placed = {_floor_of(name) for name in _kit_modules()} - {None}
    assert placed <= set(FLOORS), f"give these a floor in FLOORS: {sorted(placed - set(FLOORS))}"
    assert len(set(FLOORS)) == len(FLOORS)


def test_each_package_imports_only_from_the_floors_below():
    """Counting imports inside functions, and module by module: the message names the import."""
    assert _upward(_import_graph()) == []


def test_no_circle_among_the_packages():
    """The packages' own graph: no loop, however long."""
    packages: dict[str, set[str]] = {}
    for importer, targets in _import_graph().items():
        for imported in targets:
            low, high = _floor_of(importer), _floor_of(imported)
            if low and high and low != high:
                packages.setdefault(low, set()).add(high)
                packages.setdefault(high, set())
    assert _cycles(packages) == []


def test_an_import_from_a_floor_above_is_named():
    graph = {"autograder.judge.forms": {"autograder.intake.files", "autograder.judge.syntax"},
             "autograder.intake.files": {"autograder.judge.forms"}}
    assert _upward(graph) == ["autograder.judge.forms imports autograder.intake.files (judge is below intake)"]


def test_the_judge_imports_nothing_of_the_kit():
    """The handout ships it beside check.py and the zygote loads it from its folder: it imports only
    itself (relative imports), the standard library, numpy and torch, matplotlib, IPython, nbformat."""
    judge = PACKAGE / "judge"
    for path in judge.glob("*.py"):
        tree = ast.parse(path.read_text())
        for node in ast.walk(tree):
            if isinstance(node, ast.ImportFrom) and node.level == 0:
                names = [node.module or ""]
            elif isinstance(node, ast.Import):
                names = [alias.name for alias in node.names]
            else:
                continue
            tops = {n.split(".")[0] for n in names}
            assert tops <= {"numpy", "torch", "matplotlib", "IPython", "nbformat", *sys.stdlib_module_names}, \
                f"{path.name} imports {names}"


def test_no_import_circles():
    """Counting imports inside functions: one run later is still an import of the other module."""
    assert [sorted(c) for c in _cycles(_import_graph())] == []


def test_imports_inside_functions_are_counted(tmp_path):
    package = tmp_path / "autograder" / "pkg"
    package.mkdir(parents=True)
    (package / "__init__.py").write_text("")
    module = package / "late.py"
    module.write_text("from typing import TYPE_CHECKING\n"
                      "if TYPE_CHECKING:\n    from autograder.pkg import hinted\n"
                      "def f():\n    from . import other\n    import autograder.pkg.third\n")
    modules = frozenset({"autograder.pkg.other", "autograder.pkg.third", "autograder.pkg.hinted"})
    found = _imports(module, modules, inside_functions=True, root=tmp_path)
    assert {"autograder.pkg.other", "autograder.pkg.third"} <= found
    assert "autograder.pkg.hinted" not in found          # under TYPE_CHECKING: never run
    assert _imports(module, modules, root=tmp_path) & modules == set()    # the body alone imports none


def test_the_cycle_finder_finds_a_circle():
    assert _cycles({"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": {"a"}}) == [["a", "b", "c"]]


def test_at_most_a_dozen_modules_loose_at_the_top():
    loose = sorted(p.name for p in PACKAGE.glob("*.py"))
    assert len(loose) <= 12, loose


def test_the_jail_side_imports_nothing_of_the_kit():
    """The zygote loads these by file path, in a jail where the kit's folders are hidden."""
    for path in INSIDE.glob("*.py"):
        if path.name == "__init__.py":
            continue
        tree = ast.parse(path.read_text())
        for node in ast.walk(tree):
            if isinstance(node, ast.ImportFrom):
                assert node.level == 0, f"{path.name}: relative import"
                names = [node.module or ""]
            elif isinstance(node, ast.Import):
                names = [alias.name for alias in node.names]
            else:
                continue
            assert not any(n.split(".")[0] in ("autograder", "reference", "solutions") for n in names), \
                f"{path.name} imports {names}"


def test_the_grader_side_uses_only_the_protocol_of_the_jail_side():
    inside = {_module_name(p) for p in INSIDE.glob("*.py")} - {"autograder.sandbox.inside"}
    # what crosses between the sides: the framing (what both sides decide with is the judge's)
    allowed = {"autograder.sandbox.inside.protocol", "autograder.sandbox.inside"}
    also: dict[str, set[str]] = {}
    for name, path in _kit_modules().items():
        if name.startswith("autograder.sandbox.inside"):
            continue
        used = {m for m in _top_level_imports(path) if m in inside} - allowed - also.get(name, set())
        assert not used, f"{name} imports {sorted(used)} of the jail's side"
