"""What the grader needs to know of a student's code without running it, found in a bounded child
(autograder/intake/bounded.py) where the code is parsed, and remembered here by the digest of its
texts, so that the grader's own process parses none of it:

    imports   which of torch and matplotlib it imports (the zygote it needs: sandbox/zygotes.py)
    literals  name -> value, when it only binds literals (read, not run: sandbox/literals.py,
              sandbox/inert.py), and the modules such a file imports (a course may block one)
    stubs     the graded names it leaves as stubs, for the stem it is read as (intake/stubs.py)
    has_work  whether it answers anything for that stem (which form of an exercise counts)
    imports_from  for that stem, the names it imports from each other stem (what a note says of
              a sibling it imports whose .py file is the stub: grading/submission.py)

The child that parses a file finds its facts (a notebook's or a large file's in the child that
reads it alone, intake/load.py) and they travel with its answer, so the grader asks a child only
for a text it meets otherwise (a test's source, the kit's own files).
"""

from __future__ import annotations

import hashlib
import threading
from collections import OrderedDict
from dataclasses import dataclass
from typing import Any

from autograder.sandbox.literals import Read

WANTED = ("torch", "matplotlib")
KEPT = 1024     # texts remembered: the students in flight, not the class


@dataclass(frozen=True)
class Facts(Read):
    """What the sandbox must know (literals.Read), and for the stem a file is read as: the graded
    names it leaves as stubs, and whether it answers anything."""
    stubs: frozenset[str] | None = None
    has_work: bool | None = None
    imports_from: dict[str, tuple[str, ...]] | None = None


NOTHING_KNOWN = {"imports": [], "literals": None, "stubs": None, "has_work": None,
                 "imports_from": None}        # such a source runs in a child


def facts_here(texts: list[str], stem: str | None) -> dict:
    """The facts of `texts` (a file, or a notebook's cells) as JSON-able data, found in this process
    (a child). `stem`: the stem whose stubs and work are asked for, on the texts joined (None: none)."""
    from autograder.sandbox.literals import UNBOUND, plain_literal, read_here

    read = read_here(tuple(texts))       # what the sandbox must know, found as the kit finds it
    imports = sorted(read.imports)
    literals = None
    if read.literals is not None:
        try:
            literals = {"values": [[k, plain_literal(v)] for k, v in read.literals.items() if v is not UNBOUND],
                        "modules": sorted(k for k, v in read.literals.items() if v is UNBOUND),
                        "imported": sorted(read.modules)}
        except (TypeError, RecursionError):
            literals = None      # such a file runs in a child
    stubs = work = imports_from = None
    if stem is not None:
        from autograder.intake import stubs as stub_rules

        joined = texts[0] if len(texts) == 1 else "\n\n".join(texts)
        found, work, imports_from = stub_rules.stubs_work_and_imports(joined, stem)
        stubs = sorted(found)
    return {"imports": imports, "literals": literals, "stubs": stubs, "has_work": work,
            "imports_from": imports_from}


def _from_plain(plain: Any) -> Facts:
    """Facts from a child's answer, each field of its type (else ValueError)."""
    from autograder.sandbox.literals import UNBOUND, literal_from_plain

    if not isinstance(plain, dict) or not isinstance(plain.get("imports"), list):
        raise ValueError("facts that are not")
    imports = frozenset(str(m) for m in plain["imports"] if m in WANTED)
    literals, modules = None, frozenset()
    found = plain.get("literals")
    if isinstance(found, dict) and isinstance(found.get("values"), list):
        try:
            literals = {str(name): literal_from_plain(value) for name, value in found["values"]}
        except (TypeError, ValueError):
            literals = None         # a file of such values runs in a child
        else:
            literals.update((str(name), UNBOUND) for name in found.get("modules", ()))
            modules = frozenset(str(m) for m in found.get("imported", ()))
    stubs, work, imported = plain.get("stubs"), plain.get("has_work"), plain.get("imports_from")
    if isinstance(imported, dict):
        imported = {str(module): tuple(str(n) for n in names) for module, names in imported.items()
                    if isinstance(names, list)}
    return Facts(imports, literals, modules, frozenset(str(s) for s in stubs) if isinstance(stubs, list) else None,
                 work if isinstance(work, bool) else None, imported if isinstance(imported, dict) else None)


_MEMO: OrderedDict[bytes, tuple[Facts, dict]] = OrderedDict()
_LOCK = threading.Lock()


def _key(texts: tuple[str, ...], stem: str | None) -> bytes:
    h = hashlib.blake2b(digest_size=16)
    h.update((stem or "").encode("utf-8", "surrogatepass") + b"\0")
    for text in texts:
        data = text.encode("utf-8", "surrogatepass")
        h.update(len(data).to_bytes(8, "little") + data)
    return h.digest()


def remember(texts: tuple[str, ...], stem: str | None, plain: Any) -> Facts:
    """Keeps the facts a child found (its answer's data) for `of`; one that is not facts is
    remembered as nothing known."""
    try:
        found = _from_plain(plain)
    except ValueError:
        found, plain = _from_plain(NOTHING_KNOWN), NOTHING_KNOWN
    with _LOCK:
        _MEMO[_key(texts, stem)] = (found, plain)
        if stem is not None:       # the same texts asked without a stem
            _MEMO[_key(texts, None)] = (found, plain)
        while len(_MEMO) > KEPT:
            _MEMO.popitem(last=False)
    return found


def known(texts: list[str], stem: str | None) -> list:
    """[texts, stem, facts as data] for an answer to carry (found now if not known here)."""
    of(tuple(texts), stem)
    with _LOCK:
        plain = _MEMO.get(_key(tuple(texts), stem), (None, NOTHING_KNOWN))[1]
    return [list(texts), stem, plain]


def remember_all(found: list) -> None:
    """Keeps the facts an answer carries (`known`'s)."""
    for texts, stem, plain in found:
        remember(tuple(str(t) for t in texts), stem if isinstance(stem, str) else None, plain)


def of(texts: tuple[str, ...], stem: str | None = None) -> Facts:
    """The facts of `texts`: remembered, or found now (in a bounded child charged to the
    submission being read; in a child, here)."""
    key = _key(texts, stem)
    with _LOCK:
        if key in _MEMO:
            _MEMO.move_to_end(key)
            return _MEMO[key][0]
    from autograder.sandbox import helper_process
    from autograder.intake import bounded

    if helper_process.in_child():
        plain = facts_here(list(texts), stem)
    else:
        try:
            plain = bounded.run("facts", [list(texts), stem])
        except (bounded.OverLimit, bounded.ParserUnavailable):
            plain = NOTHING_KNOWN
    return remember(texts, stem, plain)


def read(texts: tuple[str, ...]) -> Facts:
    """The Sandbox's reader (sandbox.literals.Read): what a student's source imports and binds."""
    return of(tuple(texts))


def stubs(source: str, stem: str) -> frozenset[str]:
    """stubs.stubs of a source, found in a child."""
    found = of((str(source),), stem)
    return found.stubs if found.stubs is not None else frozenset()


def imported_from(source: str, stem: str, sibling: str) -> list[str]:
    """forms.imported_from of a source read as `stem`'s, found in a child ([] when that cannot be
    said: nothing is said of the import)."""
    found = of((str(source),), stem).imports_from
    return list(found.get(sibling, ())) if found is not None else []


def has_work(source: str, stem: str) -> bool:
    """stubs.has_work of a source, found in a child (True when that cannot be said: it is graded)."""
    found = of((str(source),), stem)
    return found.has_work if found.has_work is not None else True
