"""One file's code as copydetect's winnowing fingerprints, after normalising what a copier changes.

The code is parsed (never run) and read as its syntax tree in source order, one token per node:
comments, layout, brackets, quotes and docstrings are gone and numbers are their values, so a
file reformatted (by hand or by black) reads the same. Every name the file itself binds (its
variables, parameters, functions, classes, attributes it assigns, import aliases) becomes `V`
and every string `S`, while the names it only uses (numpy's `exp`, `keepdims`, `range`) stay:
renaming locals changes nothing, and two independent solutions are not made alike by erasing the
library calls that tell them apart. Library calls are read in one spelling (integrity/canonical.py:
`np.matmul(a, b)` as `a @ b`, torch's names as numpy's) and only the code that can run from the
contract's names is read (integrity/live_code.py): padding never changes a fingerprint. A
top-level statement that reads as one of the stub's (its imports, its demo blocks, a function
left as given) is left out, and the k-grams of the stub's code (`boilerplate`) are removed from
what remains, so only what a student wrote can be shared. The tokens are hashed in k-grams of one
top-level statement each (a stable hash, so a run's pairs do not change with Python's hash seed;
the functions' order says nothing) and winnowed by copydetect.

Why not copydetect's own tokenizer (pygments): it makes every name `V`, library calls included,
and reads layout-sensitive characters, so independent solutions of these short functions look
alike: on the kit's corpus, at copydetect's defaults, it pairs independent solutions this module
keeps apart (benchmarks/bench_similarity.py measures both).
"""

from __future__ import annotations

import ast
import hashlib
import importlib.util
import sys
import types
from dataclasses import dataclass, field
from functools import lru_cache
from pathlib import Path

import numpy as np

# Through the kit's one parse lock: a class run fingerprints in its main thread while its lanes
# parse (CPython 3.11's ast.parse is not thread-safe, judge/syntax.py).
from autograder.judge.syntax import children, parse, taken
from autograder.integrity.canonical import canonicalise, in_canonical_order
from autograder.integrity.live_code import live_statements


def _copydetect_utils():
    """copydetect.utils (its winnowing), without running the package's __init__: that imports
    copydetect's own report, and with it matplotlib.pyplot: a costly import at the start of every
    class run, while nothing else is graded. utils needs only numpy, pygments, markupsafe and
    its sibling winnow module; while it loads, a stand-in package object holds copydetect's folder,
    then it is taken away, so that an `import copydetect` later runs the real package (which finds
    its utils loaded). Any failure of this way falls back to the plain import."""
    if "copydetect.utils" in sys.modules or "copydetect" in sys.modules:
        import copydetect.utils

        return copydetect.utils
    before = set(sys.modules)
    try:
        folder = Path(next(iter(importlib.util.find_spec("copydetect").submodule_search_locations)))
        standin = types.ModuleType("copydetect")
        standin.__path__ = [str(folder)]
        sys.modules["copydetect"] = standin
        try:
            spec = importlib.util.spec_from_file_location("copydetect.utils", folder / "utils.py")
            module = importlib.util.module_from_spec(spec)
            sys.modules["copydetect.utils"] = module
            spec.loader.exec_module(module)
        finally:
            del sys.modules["copydetect"]
        module.get_copied_slices, module.winnow       # noqa: B018 - what this module uses is there
        return module
    except Exception:  # noqa: BLE001 - the plain import, whatever it costs
        for name in set(sys.modules) - before:
            if name == "copydetect" or name.startswith("copydetect."):
                del sys.modules[name]
        import copydetect.utils

        return copydetect.utils


_utils = _copydetect_utils()
get_copied_slices, winnow = _utils.get_copied_slices, _utils.winnow


NOISE_TOKENS = 6         # k: a shared run shorter than this many tokens is never seen
GUARANTEE_TOKENS = 8    # a shared run this long is always seen (winnowing's guarantee)
WINDOW = GUARANTEE_TOKENS - NOISE_TOKENS + 1

BOUND, STRING = "V", "S"
_IMPORTS = (ast.Import, ast.ImportFrom)
_LEAVES = (ast.JoinedStr,)         # an f-string is one string: what it says is prose


@dataclass(frozen=True)
class Tokens:
    """A file's normalised tokens, the line (1-based) each comes from and the top-level statement
    (numbered from 0) it belongs to."""
    text: tuple[str, ...]
    lines: np.ndarray
    statements: np.ndarray | None = None


@dataclass(frozen=True)
class Fingerprint:
    """The winnowed k-gram hashes of a file's own code (the stub's removed): `hashes` sorted and
    unique; `found` each one where it was found (a hash may recur), at token `starts`; `coverage`:
    how many tokens they cover (copydetect's token coverage)."""
    hashes: np.ndarray
    found: np.ndarray
    starts: np.ndarray
    coverage: int

    @property
    def empty(self) -> bool:
        return self.coverage == 0


def _binds(node: ast.AST) -> tuple[str, ...]:
    """The names one node binds: what a copier can rename without changing what the code does."""
    if isinstance(node, ast.Name):
        return () if isinstance(node.ctx, ast.Load) else (node.id,)
    if isinstance(node, ast.arg):
        return (node.arg,)
    if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
        return (node.name,)
    if isinstance(node, ast.alias):
        return (node.asname or node.name.split(".")[0],)
    if isinstance(node, ast.Attribute):
        return () if isinstance(node.ctx, ast.Load) else (node.attr,)
    if isinstance(node, (ast.ExceptHandler, ast.MatchAs, ast.MatchStar)):
        return (node.name,) if node.name else ()
    if isinstance(node, (ast.Global, ast.Nonlocal)):
        return tuple(node.names)
    return ()


def _in_source_order(node: ast.AST) -> list[tuple[ast.AST, int]]:
    """Every node of `node` (but the Load/Store contexts and what is inside a docstring or an
    f-string), depth first in source order, with the line it is on (its parent's when it has none)."""
    order, stack = [], [(node, 1)]
    append, push, pop = order.append, stack.extend, stack.pop
    while stack:
        node, line = pop()
        kind = type(node)
        placed = _PLACED.get(kind)
        if placed is None:
            placed = _PLACED[kind] = "lineno" in kind._attributes
        if placed:
            line = getattr(node, "lineno", line)      # a node the normalisation made may have none
        append((node, line))
        if kind in _LEAVES or (kind is ast.Expr and _is_docstring(node)):
            continue
        push([(child, line) for child in reversed(children(node))])
    return order


# Whether a node type's nodes carry a line, kept per type: walking the tree is most of
# fingerprinting a file.
_PLACED: dict[type, bool] = {}


def _is_docstring(node: ast.AST) -> bool:
    return isinstance(node, ast.Expr) and isinstance(node.value, ast.Constant) and isinstance(node.value.value, str)


@dataclass(frozen=True)
class Given:
    """The stub's top-level statements (its imports, demo blocks, the functions as it gives them):
    `texts` as written, with the names each binds; `tokens` as read. A file's statement that is
    one of them is left out. `roots`: the names the stub defines (the contract's functions and
    classes), from which a file's live code is found."""
    texts: dict[str, frozenset[str]] = field(default_factory=dict)
    tokens: frozenset[tuple[str, ...]] = frozenset()
    roots: frozenset[str] = frozenset()


def given_statements(stub: str) -> Given:
    try:
        tree = parse(stub)
    except (SyntaxError, ValueError, RecursionError, MemoryError):
        return Given()
    texts = {text: frozenset(name for node, _ in _in_source_order(statement) for name in _binds(node))
             for statement, text in zip(tree.body, _texts(tree, stub))}
    roots = frozenset(s.name for s in tree.body if isinstance(s, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)))
    return Given(texts, frozenset(words for words, _ in _statements(stub, Given()) or ()), roots)


def _texts(tree: ast.Module, source: str) -> list[str]:
    lines = source.splitlines()
    return ["\n".join(lines[s.lineno - 1:s.end_lineno]) for s in tree.body]


def _statements(source: str, given: Given, prune: bool = True) -> list[tuple[tuple[str, ...], tuple[int, ...]]] | None:
    """(tokens, their lines) of each top-level statement but those given, or None when the source
    does not parse. Library calls are read in one spelling (integrity/canonical.py) and only the
    code reachable from the contract's names is read (integrity/live_code.py). A statement written
    as the stub wrote it is not even read (most of a file); the names it binds are bound all the same."""
    try:
        tree = taken(source)      # rewritten below: the reading's shared tree, if it is there
        texts = _texts(tree, source)
        bound: set[str] = set()
        for text in texts:
            bound |= given.texts.get(text, frozenset())
        # The stub's own statements are left out before anything is read (its imports kept: they
        # say what the file's names stand for).
        imports = [s for s, text in zip(tree.body, texts) if text in given.texts and isinstance(s, _IMPORTS)]
        own = ast.Module(body=imports + [s for s, text in zip(tree.body, texts) if text not in given.texts],
                         type_ignores=[])
        canonicalise(own)
        live = (live_statements(own, given.roots) if prune else own.body)[len(imports):]
        orders = [_in_source_order(in_canonical_order(statement)) for statement in live if statement is not None]
    except (SyntaxError, ValueError, RecursionError, MemoryError):
        return None
    bound |= {name for order in orders for node, _ in order for name in _binds(node)}
    statements = []
    for order in orders:
        pairs = [(word, line) for node, line in order if (word := _word(node, bound))]
        words = tuple(w for w, _ in pairs)
        if words not in given.tokens:       # the stub's, reformatted
            statements.append((words, tuple(n for _, n in pairs)))
    return statements


def normalise(source: str, given: Given = Given(), prune: bool = True) -> Tokens | None:
    """The normalised tokens of Python source, but its top-level statements that are the stub's
    (`given`, however reformatted), and (`prune`) its code that never runs; None when it does not parse."""
    statements = _statements(source, given, prune)
    if statements is None:
        return None
    words: list[str] = []
    lines: list[int] = []
    for statement_words, statement_lines in statements:
        words += statement_words
        lines += statement_lines
    numbers = np.repeat(np.arange(len(statements), dtype=np.int32), [len(w) for w, _ in statements])
    return Tokens(tuple(words), np.array(lines, dtype=np.int32), numbers)


def _word(node: ast.AST, bound: set[str]) -> str:
    """The token of one node ("" for none)."""
    if isinstance(node, ast.Name):
        return BOUND if node.id in bound else node.id
    if isinstance(node, ast.Attribute):
        return "." + (BOUND if node.attr in bound else node.attr)
    if isinstance(node, ast.JoinedStr):
        return STRING
    if isinstance(node, ast.Constant):
        return STRING if isinstance(node.value, (str, bytes)) else repr(node.value)
    if _is_docstring(node):
        return ""        # prose
    if isinstance(node, ast.keyword):
        return (BOUND if node.arg in bound else node.arg or "**") + "="
    if isinstance(node, ast.alias):
        return "import " + node.name
    if isinstance(node, ast.ImportFrom):
        return "from " + (node.module or "") + "." * node.level
    if isinstance(node, (ast.arg, ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
        return type(node).__name__ + " " + BOUND
    if isinstance(node, ast.Module):
        return ""
    return type(node).__name__


@lru_cache(maxsize=65536)
def _token_id(word: str) -> int:
    return int.from_bytes(hashlib.blake2b(word.encode("utf-8", "surrogateescape"), digest_size=8).digest(),
                          "little") >> 1


_MULTIPLIER = np.uint64(0x9E3779B97F4A7C15)
ACROSS = np.iinfo(np.int64).max     # the hash of k tokens of two top-level statements: never a fingerprint


def kgram_hashes(tokens: Tokens, k: int = NOISE_TOKENS) -> np.ndarray:
    """A stable hash of every k consecutive tokens (int64, non-negative); ACROSS for tokens of two
    top-level statements, whose order in the file says nothing (a copier shuffles the functions)."""
    if len(tokens.text) < k:
        return np.zeros(0, dtype=np.int64)
    ids = np.fromiter((_token_id(w) for w in tokens.text), dtype=np.uint64, count=len(tokens.text))
    windows = np.lib.stride_tricks.sliding_window_view(ids, k)
    powers = _MULTIPLIER ** np.arange(k - 1, -1, -1, dtype=np.uint64)   # wraps modulo 2**64, as meant
    with np.errstate(over="ignore"):
        mixed = (windows * powers).sum(axis=1, dtype=np.uint64)
    hashes = (mixed >> np.uint64(1)).astype(np.int64)
    if tokens.statements is not None:
        hashes[tokens.statements[:1 - k] != tokens.statements[k - 1:]] = ACROSS
    return hashes


def boilerplate(sources: list[str], k: int = NOISE_TOKENS) -> np.ndarray:
    """Every k-gram hash of the given code (the stubs'), sorted: excluded from every fingerprint.
    Its demo blocks too, which never run where it stands: a student may make them run."""
    hashes = [kgram_hashes(t, k) for t in (normalise(s, prune=False) for s in sources) if t is not None]
    hashes = [h[h != ACROSS] for h in hashes]
    return np.unique(np.concatenate(hashes)) if hashes else np.zeros(0, dtype=np.int64)


def fingerprint(tokens: Tokens, excluded: np.ndarray, k: int = NOISE_TOKENS, window: int = WINDOW) -> Fingerprint:
    """copydetect's winnowing of the k-gram hashes, without those in `excluded` (sorted)."""
    all_hashes = kgram_hashes(tokens, k)
    if len(all_hashes) == 0:
        nothing = np.zeros(0, dtype=np.int64)
        return Fingerprint(nothing, nothing, nothing, 0)
    hashes, index = winnow(all_hashes, window_size=window, remove_duplicates=False)
    keep = ~np.isin(hashes, excluded) & (hashes != ACROSS)
    hashes, index = hashes[keep], index[keep]
    return Fingerprint(np.unique(hashes), hashes, index, covered(index, k))


def covered(starts, k: int) -> int:
    """How many tokens the k-grams starting at `starts` cover together."""
    slices = get_copied_slices(np.asarray(starts, dtype=np.int64), k)
    return int(np.sum(slices[1] - slices[0])) if slices.size else 0


def shared_slices(a: Fingerprint, b: Fingerprint, hashes, k: int = NOISE_TOKENS) -> tuple[np.ndarray, np.ndarray]:
    """copydetect's copied slices (token ranges, 2 x n) of each file for the shared `hashes`."""
    return tuple(get_copied_slices(fp.starts[np.isin(fp.found, hashes)], k) for fp in (a, b))
