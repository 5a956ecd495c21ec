"""Python source read without running it: parsed under one lock, and the modules it imports.

CPython 3.11's `ast.parse` is not thread-safe: two threads building AST objects at once can fail
with "SystemError: AST constructor recursion depth mismatch" (python/cpython#106905), and a Dask
worker grades submissions in threads. Every parse in the kit goes through `parse`, which holds a
lock; code outside the kit may still parse at the same moment (Python 3.11's traceback module
does, to place its carets), so a SystemError is retried: each parse starts its count afresh.

Cheap to import (no numpy): `attnkit check` reads its files' imports before anything else.
"""

from __future__ import annotations

import ast
import hashlib
import re
import threading

_PARSE_LOCK = threading.Lock()
_IMPORT_LINE = re.compile(r"^[ \t]*(?:from[ \t]+([\w.]+)|import[ \t]+([\w., \t]+))", re.MULTILINE)
_MARGIN_IMPORT_LINE = re.compile(r"^(?:from[ \t]+([\w.]+)|import[ \t]+([\w., \t]+))", re.MULTILINE)
_MAIN_GUARD = re.compile(r"""^if[ \t]+__name__[ \t]*==[ \t]*(["'])__main__\1[ \t]*:""", re.MULTILINE)
_AT_MARGIN = re.compile(r"^[^ \t\r\n#]", re.MULTILINE)     # a line of code that starts at the margin


_ATTEMPTS = 5


def parse(text: str, filename: str = "<unknown>") -> ast.Module:
    """`ast.parse`, one thread at a time, again if another thread's parse disturbed it."""
    return one_at_a_time(ast.parse, text, filename=filename)


_FIELDS: dict[type, tuple[str, ...]] = {}


def children(node: ast.AST) -> list[ast.AST]:
    """ast.iter_child_nodes, several times faster: the fields that hold nodes known per type (all
    but the Load/Store context). Every pass of the similarity's normalisation walks the tree, and
    reading a file counts its nodes."""
    kind = type(node)
    fields = _FIELDS.get(kind)
    if fields is None:
        fields = _FIELDS[kind] = tuple(f for f in kind._fields if f != "ctx")
    found = []
    for name in fields:
        value = getattr(node, name, None)
        if type(value) is list:
            found += [v for v in value if isinstance(v, ast.AST)]
        elif isinstance(value, ast.AST):
            found.append(value)
    return found


def walk(node: ast.AST):
    """Every node under `node` (itself included), in no particular order."""
    stack = [node]
    while stack:
        node = stack.pop()
        yield node
        stack += children(node)


def count_nodes(tree: ast.AST) -> int:
    """How many nodes ast.walk would give (each name's Load/Store context counted), by `walk`."""
    return sum(2 if "ctx" in type(node)._fields else 1 for node in walk(tree))


def statements(tree: ast.AST):
    """Every statement under `tree`, at any depth (in functions, loops, `try`, `match`), and none
    of the expressions: an import is a statement, and no expression holds one."""
    stack = [tree]
    while stack:
        node = stack.pop()
        for name in _STATEMENT_FIELDS:
            for item in getattr(node, name, ()):
                if isinstance(item, ast.stmt):
                    yield item
                    stack.append(item)
                elif isinstance(item, (ast.excepthandler, ast.match_case)):
                    stack.append(item)


_STATEMENT_FIELDS = ("body", "orelse", "finalbody", "handlers", "cases")


def parsed(text: str) -> ast.Module:
    """`parse(text)`, the same tree for the same text while it is among the last few asked: each
    rule that reads a file (its syntax, which zygote it needs, its stubs and imports) reads one
    parse of it. Shared: for rules that do not change the tree (`parse` gives a tree of its own)."""
    if len(text) > PARSED_CHARS:
        return parse(text)
    tree = _parsed_here().get(text, lambda: _tree_or_none(text))
    return tree if tree is not None else parse(text)      # a text that does not parse says why again


def taken(text: str) -> ast.Module:
    """`parse(text)` for a rule that changes the tree (the similarity's rewriting): the shared
    tree when there is one, which no rule is given again (the next to ask parses anew)."""
    tree = _parsed_here().pop(text)
    return tree if tree is not None else parse(text)


def _parsed_here() -> "TextMemo":
    """This thread's shared trees: a tree one thread takes to rewrite is never one another reads."""
    memo = getattr(_PARSED, "memo", None)
    if memo is None:
        memo = _PARSED.memo = TextMemo(8)
    return memo


def _tree_or_none(text: str) -> ast.Module | None:
    try:
        return parse(text)
    except (SyntaxError, ValueError, RecursionError, MemoryError):
        return None


def one_at_a_time(build, *args, **kwargs):
    """`build(*args, **kwargs)` (a parse, or a compile to or from a syntax tree) under the parse
    lock, again if another thread's parse disturbed it."""
    for attempt in range(1, _ATTEMPTS + 1):
        try:
            with _PARSE_LOCK:
                return build(*args, **kwargs)
        except SystemError:
            if attempt == _ATTEMPTS:
                raise
    raise AssertionError("unreachable")


class TextMemo:
    """What was found in a text (under a name), remembered by their digest -- not the text: a
    file may be 2 MB -- for at most `size` texts; when full, it starts again."""

    def __init__(self, size: int):
        self.size = size
        self.found: dict[bytes, object] = {}

    def get(self, text: str, find, name: str = ""):
        digest = self._key(text, name)
        try:
            return self.found[digest]
        except KeyError:
            pass
        if len(self.found) >= self.size:
            self.found.clear()
        value = self.found[digest] = find()
        return value

    def pop(self, text: str, name: str = ""):
        """What was found in the text, forgotten here (None when nothing was)."""
        return self.found.pop(self._key(text, name), None)

    @staticmethod
    def _key(text: str, name: str) -> bytes:
        key = hashlib.blake2b(name.encode("utf-8", "surrogatepass") + b"\0", digest_size=16)
        key.update(text.encode("utf-8", "surrogatepass"))
        return key.digest()


def imported_modules(text: str) -> set[str]:
    """Top-level names of the modules a source imports: import statements anywhere (a function
    may import inside), except in `if __name__ == "__main__":` demo blocks, which the grader
    never runs. A comment that mentions torch does not count.

    Remembered: the sandbox asks once per session which zygote a source needs, several times per
    submission."""
    return set(_IMPORTS_SEEN.get(text, lambda: frozenset(_parsed_imports(text))))


_IMPORTS_SEEN = TextMemo(512)      # a submission's texts, asked several times; not a class's
_PARSED = threading.local()    # per thread, a submission's files, each read by several rules in one child
PARSED_CHARS = 64_000      # a larger text's tree is not kept: a tree takes many times its text's memory


def imports_among(text: str, wanted: tuple[str, ...]) -> set[str]:
    """Which of the modules `wanted` a source imports (as `imported_modules` says), read from its
    lines where they settle it and parsed where they do not. Asked for every file of every
    submission to choose its zygote, where parsing would be the grader's largest cost after
    compiling; the kit's own header names torch and matplotlib in every file, in a comment.

    Lines settle it when each wanted name that a line of code (not a comment line) outside the
    `if __name__ == "__main__":` blocks mentions is imported by a line at the left margin: such a
    line is a module-level import -- or a line of a multi-line string, which can make the answer
    a bigger zygote than needed, never a smaller one, except for a guard line inside a string
    (then the child imports the module itself: slower, graded the same)."""
    head = _outside_main_blocks(text)
    named = {name for name in wanted if name in head and _mentioned_in_code(head, name)}
    if named and not named <= _imported_by_pattern(head, _MARGIN_IMPORT_LINE):
        return imported_modules(text) & set(wanted)
    return named


def _outside_main_blocks(text: str) -> str:
    """The text without its `if __name__ == "__main__":` blocks: each from its guard line to the
    next line of code at the margin (a jupytext file has one after each task)."""
    kept, at = [], 0
    for guard in _MAIN_GUARD.finditer(text):
        if guard.start() < at:
            continue
        kept.append(text[at:guard.start()])
        line_end = text.find("\n", guard.end())
        after = _AT_MARGIN.search(text, line_end + 1) if line_end >= 0 else None
        at = after.start() if after else len(text)
    kept.append(text[at:])
    return "".join(kept)


def _mentioned_in_code(text: str, name: str) -> bool:
    """`name` on a line that is not only a comment."""
    for line in text.splitlines():
        if name in line and not line.lstrip().startswith("#"):
            return True
    return False


def _parsed_imports(text: str) -> set[str]:
    try:
        tree = parsed(text)
    except (SyntaxError, ValueError, RecursionError, MemoryError, SystemError):
        return _imported_by_pattern(text)
    names: set[str] = set()
    kept = ast.Module(body=[node for node in tree.body if not is_main_guard(node)], type_ignores=[])
    for node in statements(kept):
        if isinstance(node, ast.Import):
            names.update(alias.name.split(".")[0] for alias in node.names)
        elif isinstance(node, ast.ImportFrom) and node.module and not node.level:
            names.add(node.module.split(".")[0])
    return names


def is_main_guard(node: ast.stmt) -> bool:
    """An `if __name__ == "__main__":` statement (an else, if it has one, is the caller's to judge)."""
    test = node.test if isinstance(node, ast.If) else None
    return (isinstance(test, ast.Compare) and isinstance(test.left, ast.Name) and test.left.id == "__name__"
            and len(test.comparators) == 1 and isinstance(test.comparators[0], ast.Constant)
            and test.comparators[0].value == "__main__" and isinstance(test.ops[0], ast.Eq))


def _imported_by_pattern(text: str, lines: re.Pattern = _IMPORT_LINE) -> set[str]:
    """The modules the import lines `lines` finds name: for a source that does not parse (it will
    fail to import anyway) every import line; for `imports_among`, those at the margin."""
    names = set()
    for match in lines.finditer(text):
        if match.group(1):
            names.add(match.group(1).split(".")[0])
        else:
            for part in match.group(2).split(","):
                words = part.split()
                if words:
                    names.add(words[0].split(".")[0])
    return names
