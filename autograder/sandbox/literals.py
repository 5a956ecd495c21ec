"""A source that only binds literal values, read without running it (`inert_values`).

Attention by hand (hand_computation.py) is numbers typed as nested lists. When every top-level
statement of a file (or of every notebook cell) is one of

    NAME = <literal> (one or more NAME targets)   a docstring or other constant, `pass`
    import math / numpy [as x], from math import n, from __future__ import f
    if __name__ == "__main__": ...                (no else: the grader imports the file, so it
                                                   never runs)

its names' values are `ast.literal_eval`'s (Python's own evaluator of literals: nothing is
called, looked up or imported), and executing the file would bind exactly these values and do
nothing else. The import lines only bind modules already warm in every zygote, and only those
the course does not block. The sandbox answers for such a file without a child
(autograder/sandbox/inert.py), and `attnkit check` starts no zygote for it.

Imports nothing of the kit but the judge's syntax.py (its one parse lock), and not numpy.
"""

from __future__ import annotations

import __future__
import ast
import math
import re
from dataclasses import dataclass
from functools import lru_cache
from typing import Any

from autograder.judge.syntax import imported_modules, imports_among, is_main_guard, parse

# Modules every zygote has imported: importing one binds a name and runs nothing new.
QUIET_MODULES = frozenset({"math", "numpy"})
UNBOUND = object()      # a name bound to a module, not to a literal


# A line that starts a statement no inert file has (a definition, a loop, a call such as print(...)
# or plot(...)): the file runs in a child, told without parsing it (most files are not inert).
_RUNS = re.compile(r"^(?:(?:async|def|class|for|while|with|try|del|global|assert|raise|return)\b|@|[\w.]+ *\()",
                   re.MULTILINE)


# The grader's own memory bounds what it reads: Python's AST of a list of numbers takes hundreds
# of times the memory of its text. A hand computation is a few KB; a file of literals larger
# than MAX_READ_CHARS runs in a child, under the child's limits.
MAX_READ_CHARS = 32 * 1024


def source_texts(source: str | list) -> tuple[str, ...]:
    """The texts of a source as the sandbox takes it: a string, or a notebook's cells (dicts)."""
    return (source,) if isinstance(source, str) else tuple(str(c.get("source", "")) for c in source)


@dataclass(frozen=True)
class Read:
    """What the sandbox must know of a source before it runs: which of torch and matplotlib it
    imports (its zygote) and, for a file that only binds literals, their values (UNBOUND for a
    module's name) with the modules it imports (a course may block one). Found by the Sandbox's
    reader: for students' code the grader's bounded child (autograder/intake/facts.py), which
    answers with these fields; `read_here` for the kit's own texts."""
    imports: frozenset[str]
    literals: dict[str, Any] | None
    modules: frozenset[str] = frozenset()


def read_here(texts: tuple[str, ...]) -> Read:
    """A Read of texts parsed in this process."""
    imports = set().union(*(imports_among(text, ("torch", "matplotlib")) for text in texts))
    values = inert_texts(tuple(texts))
    modules = set().union(*(imported_modules(text) for text in texts)) if values is not None else set()
    return Read(frozenset(imports), values, frozenset(modules))


def inert_of(read: Read, blocked: tuple[str, ...] = ()) -> dict[str, Any] | None:
    """name -> value for a source that only binds literals and imports no blocked module, else
    None (it must run in a child)."""
    if read.literals is None or read.modules & set(blocked):
        return None
    return dict(read.literals)


def inert_values(source: str | list, blocked: tuple[str, ...] = ()) -> dict[str, Any] | None:
    """name -> value for a source (a string, or a notebook's cells) that only binds literals and
    imports no blocked module, else None (it must run in a child): `inert_of` its Read, as the
    Sandbox applies a course's blocked modules. The same values for the same texts (do not change them)."""
    return inert_of(read_here(source_texts(source)), blocked)


def inert_texts(texts: tuple[str, ...]) -> dict[str, Any] | None:
    """name -> value (UNBOUND for a module's name) for texts run one after the other (a file, or a
    notebook's code cells) that only bind literals and import only quiet modules, else None. A
    course's blocked modules are applied to the Read (`inert_of`), never here."""
    if sum(len(text) for text in texts) > MAX_READ_CHARS or any(_RUNS.search(text) for text in texts):
        return None
    return _values(tuple(texts))


@lru_cache(maxsize=8)     # a submission's session, its stem opened ahead and its zygote prepared
def _values(texts: tuple[str, ...]) -> dict[str, Any] | None:
    values: dict[str, Any] = {}
    for text in texts:
        try:
            tree = parse(text)
        except (SyntaxError, ValueError, MemoryError, RecursionError, SystemError):
            return None
        for statement in tree.body:
            if not _binds_only_literals(statement, values):
                return None
    return values


def _binds_only_literals(node: ast.stmt, values: dict[str, Any]) -> bool:
    if isinstance(node, ast.Pass) or (isinstance(node, ast.Expr) and isinstance(node.value, ast.Constant)):
        return True
    if isinstance(node, ast.Import):
        if not all(alias.name in QUIET_MODULES for alias in node.names):
            return False
        for alias in node.names:
            values[alias.asname or alias.name] = UNBOUND
        return True
    if isinstance(node, ast.ImportFrom):
        if node.level or node.module not in ("math", "__future__"):
            return False
        known = __future__.all_feature_names if node.module == "__future__" else dir(math)
        if not all(alias.name in known for alias in node.names):
            return False
        for alias in node.names:
            values[alias.asname or alias.name] = UNBOUND
        return True
    if isinstance(node, ast.If):
        # no else: the guard's body never runs when the file is imported, an else's would
        return not node.orelse and is_main_guard(node)
    if isinstance(node, ast.Assign) and all(isinstance(t, ast.Name) for t in node.targets):
        try:
            value = ast.literal_eval(node.value)
        except (ValueError, TypeError, SyntaxError, MemoryError, RecursionError):
            return False
        for target in node.targets:
            values[target.id] = value
        return True
    return False


# A literal's value as JSON-able data and back (a bounded child finds a file's values:
# autograder/intake/facts.py), every type ast.literal_eval makes kept as it was.
_TAGS = {tuple: "tuple", set: "set", dict: "dict", complex: "complex", bytes: "bytes"}


def plain_literal(value: Any) -> Any:
    """`value` (what literal_eval made) as JSON-able data; TypeError for anything else."""
    if value is None or type(value) in (bool, int, float, str):
        return value
    if type(value) is list:
        return [plain_literal(v) for v in value]
    if value is Ellipsis:
        return {"ellipsis": None}
    tag = _TAGS.get(type(value))
    if tag is None:
        raise TypeError(f"not a literal: {type(value).__name__}")
    if tag == "dict":
        return {tag: [[plain_literal(k), plain_literal(v)] for k, v in value.items()]}
    if tag == "complex":
        return {tag: [value.real, value.imag]}
    if tag == "bytes":
        return {tag: value.hex()}
    return {tag: [plain_literal(v) for v in value]}


def literal_from_plain(plain: Any, depth: int = 0) -> Any:
    """The inverse of plain_literal; ValueError for data that is not one."""
    if depth > 200:
        raise ValueError("nested too deeply")
    if plain is None or type(plain) in (bool, int, float, str):
        return plain
    if type(plain) is list:
        return [literal_from_plain(v, depth + 1) for v in plain]
    if not isinstance(plain, dict) or len(plain) != 1:
        raise ValueError("not a literal's data")
    (tag, items), = plain.items()
    try:
        if tag == "ellipsis":
            return ...
        if tag == "complex":
            return complex(float(items[0]), float(items[1]))
        if tag == "bytes":
            return bytes.fromhex(items)
        made = [literal_from_plain(v, depth + 1) for v in items]
        if tag == "dict":
            return {k: v for k, v in made}
        return {"tuple": tuple, "set": set}[tag](made)
    except (TypeError, ValueError, KeyError, IndexError) as err:
        raise ValueError(f"not a literal's data ({err})") from None
