"""docs/architecture.md names the code as it is: every module, file, function, class and setting it
cites in backticks exists, so a newcomer who follows the page finds what it names."""

import ast
import re
from pathlib import Path

import pytest

KIT = Path(__file__).resolve().parents[1]
PAGE = KIT / "docs" / "architecture.md"
CODE_ROOTS = ("autograder", "reference", "tests")
STRING_ROOTS = ("autograder", "reference")     # a status or setting the kit itself holds

pytestmark = pytest.mark.quick

# what the page writes as an example of a place, not a name in the code
PLACEHOLDERS = {"<stem>": "attention", "<student>": "ada"}


class Index:
    """Every module of the kit (dotted, e.g. autograder.grading.grade), what each defines at its top
    level and in its classes, and the strings its code holds (statuses such as "bad_return")."""

    def __init__(self):
        self.modules: dict[str, set[str]] = {}
        self.strings: set[str] = set()
        for root in CODE_ROOTS:
            for path in (KIT / root).rglob("*.py"):
                if "__pycache__" in path.parts:
                    continue
                rel = path.relative_to(KIT).with_suffix("")
                name = ".".join(rel.parts[:-1] if rel.name == "__init__" else rel.parts)
                self.modules[name] = self._defined(ast.parse(path.read_text(encoding="utf-8")),
                                                   strings=root in STRING_ROOTS)

    def _defined(self, tree: ast.Module, strings: bool) -> set[str]:
        names = set()
        for node in ast.walk(tree) if strings else ():
            if isinstance(node, ast.Constant) and isinstance(node.value, str) and node.value.isidentifier():
                self.strings.add(node.value)
        for node in tree.body:
            names.update(self._names(node))
            if isinstance(node, ast.ClassDef):
                for inner in node.body:
                    names.update(f"{node.name}.{n}" for n in self._names(inner))
                    if isinstance(inner, ast.AnnAssign) and isinstance(inner.target, ast.Name):
                        names.add(f"{node.name}.{inner.target.id}")
        return names

    @staticmethod
    def _names(node: ast.stmt) -> set[str]:
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            return {node.name}
        if isinstance(node, ast.Assign):
            return {t.id for t in node.targets if isinstance(t, ast.Name)}
        if isinstance(node, ast.AnnAssign) and isinstance(node.target, ast.Name):
            return {node.target.id}
        if isinstance(node, (ast.Import, ast.ImportFrom)):
            return {(a.asname or a.name).split(".")[0] for a in node.names}
        return set()

    def dotted(self, name: str) -> bool:
        """`grading.grade.grade`, `explain.weighed`, `CallOutcome.status`: a module (by the end of its
        dotted name) and what it defines, or a class and its attribute."""
        if any(m == name or m.endswith("." + name) for m in self.modules):
            return True
        parts = name.split(".")
        for cut in range(1, len(parts)):
            module, attr = ".".join(parts[:cut]), ".".join(parts[cut:])
            if any((m == module or m.endswith("." + module)) and attr in defined
                   for m, defined in self.modules.items()):
                return True
        return any(name in defined for defined in self.modules.values())

    def word(self, name: str) -> bool:
        """A bare name: a module or package, something defined, or a value the code holds."""
        return (any(m.rsplit(".", 1)[-1] == name for m in self.modules)
                or any(name in defined for defined in self.modules.values())
                or name in self.strings)


def _path_exists(cited: str) -> bool:
    for placeholder, example in PLACEHOLDERS.items():
        cited = cited.replace(placeholder, example)
    cited = cited.rstrip("/")
    for folder in (KIT, KIT / "autograder", KIT / "solutions"):
        if (folder / cited).exists() or (folder / f"{cited}.py").exists():     # `judge/forms`: a module
            return True
    # a file named by itself (`lms.py`) or under its folder (`sandbox/client.py`)
    return any(p.as_posix().endswith("/" + cited) for p in (KIT / "autograder").rglob("*")
               if "__pycache__" not in p.parts)


def cited() -> list[str]:
    """The names the page writes in backticks, commands, flags and settings left out."""
    text = re.sub(r"```.*?```", "", PAGE.read_text(encoding="utf-8"), flags=re.S)
    found = []
    for token in re.findall(r"`([^`\n]+)`", text):
        token = token.strip()
        call = re.fullmatch(r"([\w.]+)\(.*\)", token)
        if call:
            token = call.group(1)
        if (" " in token or token.startswith(("-", ".", "/", "OUT/")) or "=" in token
                or token.endswith(":") or token in ("course.yml", "check.py")):
            continue
        found.append(token)
    return sorted(set(found))


def missing_names(index: Index, names: list[str]) -> list[str]:
    missing = []
    for name in names:
        if "/" in name or name.endswith(".py"):
            ok = _path_exists(name)
        elif "." in name:
            ok = index.dotted(name)
        else:
            ok = index.word(name)
        if not ok:
            missing.append(name)
    return missing


@pytest.fixture(scope="module")
def index():
    return Index()


def test_every_name_the_architecture_page_cites_exists(index):
    names = cited()
    assert len(names) > 100, "the page's names were not found: has its form changed?"
    assert missing_names(index, names) == []


def test_a_name_that_is_not_in_the_code_is_caught(index):
    """The test above can fail: names the code never had, in each form the page writes."""
    assert missing_names(index, ["grade_student", "grading.grade.grade_student", "judge/verdicts.py",
                                 "checks/<stem>/verdicts.py", "CallOutcome.verdict"]) == [
        "grade_student", "grading.grade.grade_student", "judge/verdicts.py", "checks/<stem>/verdicts.py",
        "CallOutcome.verdict"]
