"""Which file of an exercise counts: the grader's rule and check.py's, decided here once, from
names, sources and scores (the callers read the bytes; this module reads no file).

Names: `attention.py` and `attention.ipynb` are an exercise's forms; without the exact name, a
near miss (`attention (1).py`, `Attention-v2.py`) is graded as it and said; several near misses
of one form are each graded and the better counts (`named`, `candidates`, `the_better`). Hidden
files, zip and editor litter are nobody's work (`ignored`).

Forms: an untouched stub never wins over work. A graded function whose body does nothing (a
docstring, `pass`, `...`, `return` or `return None`, `raise NotImplementedError`) is a stub, and so
is a graded constant still None. With one form holding work, that form is graded; with both
holding work, the course's `both_forms` says which counts: both graded and the better kept
("best"), or always one form ("py", "ipynb") (`choose`, `unless_both`, `of_both`); with neither,
the .py. A file that cannot be read (it does not compile, is not a notebook, ...) is not the stub
either: beside an untouched stub it is graded, its error named; beside work it is passed over
with a note. Which file was saved last plays no part (Jupyter's autosave would decide it).

Kit-free (the standard library only): the grader's intake (autograder/intake/files.py, load.py,
candidates.py) and grading (grading/submission.py), and the handout's check.py, decide with it.
"""

from __future__ import annotations

import ast
import re
from dataclasses import dataclass
from pathlib import PurePath
from typing import Callable, Collection, Iterable, Sequence

from .syntax import parse as locked_parse, statements

_FUNCTIONS = (ast.FunctionDef, ast.AsyncFunctionDef)

SUFFIXES = (".py", ".ipynb")     # an exercise's forms, <stem>.py or <stem>.ipynb, the .py first
BOTH_FORMS = "both_forms"        # intake.Flag values: both forms hold work / the other form is a stub
STUB_SKIPPED = "stub_skipped"
CANDIDATES_GRADED = 4            # near misses graded at most, each: a folder of twenty copies costs no more


def has_work(source: str, graded: Collection[str], parse: Callable[[str], ast.Module] = locked_parse) -> bool:
    """Whether the code answers anything: a graded function or method that is not a stub, or a
    graded constant that is not None. Code that does not parse is somebody's work in progress."""
    try:
        tree = parse(source)
    except (SyntaxError, ValueError, RecursionError, MemoryError):
        return True
    graded = set(graded)
    for node in tree.body:
        if isinstance(node, (*_FUNCTIONS, ast.ClassDef)) and node.name in graded:
            if not is_stub(node):
                return True
        elif isinstance(node, (ast.Assign, ast.AnnAssign)):
            targets = node.targets if isinstance(node, ast.Assign) else [node.target]
            names = {t.id for t in targets if isinstance(t, ast.Name)}
            value = node.value
            if names & graded and value is not None and not _is_none(value):
                return True
    return False


def stub_names(source: str, graded: Collection[str], parse: Callable[[str], ast.Module] = locked_parse) -> frozenset[str]:
    """The graded functions and classes whose last top-level definition is a stub."""
    try:
        tree = parse(source)
    except (SyntaxError, ValueError, RecursionError, MemoryError):
        return frozenset()
    graded = set(graded)
    last = {node.name: node for node in tree.body if isinstance(node, (*_FUNCTIONS, ast.ClassDef))
            and node.name in graded}
    return frozenset(name for name, node in last.items() if is_stub(node))


def is_stub(node: ast.stmt) -> bool:
    """A function that does nothing; a class none of whose methods but `__init__` does anything."""
    if isinstance(node, ast.ClassDef):
        return not any(_answers(f.body) for f in node.body if isinstance(f, _FUNCTIONS) and f.name != "__init__")
    return not _answers(node.body)


def _answers(body: list[ast.stmt]) -> bool:
    for stmt in body:
        if isinstance(stmt, ast.Pass):
            continue
        if isinstance(stmt, ast.Expr) and isinstance(stmt.value, ast.Constant):
            continue        # a docstring or a bare `...`
        if isinstance(stmt, ast.Return) and (stmt.value is None or _is_none(stmt.value)):
            continue
        if isinstance(stmt, ast.Raise) and _is_not_implemented(stmt.exc):
            continue
        return True
    return False


def _is_none(value: ast.expr) -> bool:
    return isinstance(value, ast.Constant) and value.value is None


def _is_not_implemented(exc) -> bool:
    if isinstance(exc, ast.Call):
        exc = exc.func
    return isinstance(exc, ast.Name) and exc.id == "NotImplementedError"


# ---------------------------------------------------------------- which form

@dataclass(frozen=True)
class Form:
    """One file of an exercise as read: its name, why it cannot be read (None: it was), whether
    it holds work (has_work)."""
    filename: str
    problem: str | None = None
    work: bool = False


@dataclass(frozen=True)
class Choice:
    """The form graded, the other one graded too when both hold work (the better counts), why."""
    graded: Form
    alternative: Form | None = None
    note: str = ""
    flag: str = ""


def choose(forms: list[Form]) -> Choice:
    """Which of an exercise's forms (the .py first, then the notebook; one or two) counts."""
    if len(forms) == 1:
        return Choice(forms[0])
    good = [f for f in forms if f.problem is None]
    if not good:
        return Choice(forms[0])
    if len(good) == 1:
        read, other = good[0], next(f for f in forms if f is not good[0])
        if read.work:
            return Choice(read, note=f"{other.filename} could not be read ({other.problem}); graded {read.filename}")
        # the stub reads; the student's file, broken as it is, is their work, graded with its error named
        return Choice(other, note=f"{read.filename} is an untouched stub; graded {other.filename}", flag=STUB_SKIPPED)
    py, nb = good
    if py.work and nb.work:
        return Choice(py, nb, f"both {py.filename} and {nb.filename} hold work", BOTH_FORMS)
    if not py.work and not nb.work:
        return Choice(py, note=f"both {py.filename} and {nb.filename} are untouched stubs; graded {py.filename}")
    keep, stub = (nb, py) if nb.work else (py, nb)
    return Choice(keep, note=f"{stub.filename} is an untouched stub; graded {keep.filename}", flag=STUB_SKIPPED)


@dataclass(frozen=True)
class Graded:
    """One file of an exercise as graded: its points of its maximum, its note, and whether every
    check of it was unanswered (an untouched stub)."""
    filename: str
    score: float
    max_score: float
    note: str = ""
    untouched: bool = False


def unless_both(policy: str, first: Graded, other: str) -> str | None:
    """Where both forms hold work and the first (the .py) is graded: its note when the other form,
    `other`, is not graded too (the course grades the .py file, or, keeping the better, the first
    has full marks); None when it is."""
    if policy == "py":
        return f"{first.note}; the course grades the .py file"
    if policy == "best" and first.score >= first.max_score:
        return f"{first.note}; {first.filename} has full marks, so {other} was not graded"
    return None


def of_both(policy: str, first: Graded, second: Graded) -> tuple[int, str]:
    """Both forms graded: which counts (0 the .py, 1 the notebook) by the course's `both_forms`, and
    the note that says so."""
    if policy == "ipynb":
        return 1, f"{first.note}; the course grades the notebook"
    keep = 1 if second.score > first.score else 0
    return keep, (f"{first.note}: both were graded, {first.filename} {first.score:g}/{first.max_score:g} and "
                  f"{second.filename} {second.score:g}/{second.max_score:g}; the better, "
                  f"{(first, second)[keep].filename}, counts")


# ---------------------------------------------------------------- names

IGNORED_NAMES = {"__MACOSX", "__pycache__", "Thumbs.db", "desktop.ini", "Icon\r"}
BACKUP_SUFFIXES = (".bak", ".orig", ".swp", ".swo", ".tmp", ".pyc")


def ignored(name: str) -> bool:
    """Not part of anyone's work: hidden files, zip and OS litter, editor backups."""
    return (name.startswith(".") or name in IGNORED_NAMES or name.endswith("~")
            or (name.startswith("#") and name.endswith("#")) or name.lower().endswith(BACKUP_SUFFIXES))


_COPY = re.compile(r"\s*\(\d+\)$")                                    # "attention (1)"
_VERSION = re.compile(r"(?:[_\s]*(?:v|ver|version)?[_\s]*\d+|[_\s]+(?:final|copy|new|old))$")


def normal_stem(filename: str) -> str:
    """The stem a file name most likely meant: lower case, '-' and spaces as '_', no copy
    counter or trailing version. `Attention-v2 (1).py` -> `attention`."""
    suffix = PurePath(filename).suffix
    base = filename[: -len(suffix)] if suffix else filename
    base = _COPY.sub("", base.strip()).lower()
    base = re.sub(r"[-\s]+", "_", base).strip("_")
    for _ in range(3):          # "attention_v2_final"
        shorter = _VERSION.sub("", base).strip("_")
        if shorter == base or not shorter:
            break
        base = shorter
    return base


@dataclass(frozen=True)
class Named:
    """Which of a folder's names are an exercise's: per form found (the .py first) the name and
    its note; or why none is (`problem`), with `ambiguous` the near misses of one form when several
    could be meant (each is then graded, the better counting: `candidates`, `the_better`)."""
    files: tuple[tuple[str, str], ...] = ()
    problem: str = ""
    ambiguous: tuple[str, ...] = ()


def near_misses(stem: str, names: Iterable[str], suffix: str, folders: Collection[str] = ()) -> list[str]:
    """The names that could mean `stem` + `suffix`. A folder named like a file is not one."""
    return [n for n in names if n.lower().endswith(suffix) and normal_stem(n) == stem and n not in folders]


def named(stem: str, names: Sequence[str], folders: Collection[str] = (), where: str = "",
          listed_only: int | None = None, inside: str = "the submission") -> Named:
    """The files of `names` (a folder's, none `ignored`; `folders`: those that are folders) that are
    `stem`'s. `where`: the folder's path inside the submission ("" its top), which notes name;
    `listed_only`: the folder held more entries than this, and only the first were listed;
    `inside`: where a missing file is said to be missing from."""
    prefix = f"{where}/" if where else ""
    chosen: list[tuple[str, str]] = []
    for suffix in SUFFIXES:
        exact = f"{stem}{suffix}"
        near = near_misses(stem, names, suffix, folders)
        if exact in near and len(near) > 1 and candidates(stem, names, folders):
            # the exact name may be the untouched stub beside a browser's copy holding the work:
            # each is graded and the better counts (a tie keeps the exact name); past the number
            # graded, the exact name alone is
            listed = ", ".join(prefix + n for n in near)
            return Named(problem=f"several files could be {exact}: {listed}; keep one and name it {exact}",
                         ambiguous=tuple(sorted(near, key=lambda n: n != exact)))
        if exact in near:
            chosen.append((exact, ""))
        elif len(near) == 1:
            chosen.append((near[0], f"no {exact} was found, so {prefix}{near[0]} was graded as {exact}; "
                                    f"name it {exact} next time"))
        elif len(near) > 1:
            listed = ", ".join(prefix + n for n in near)
            return Named(problem=f"no {exact}, and several files could be meant: {listed}; keep one and name it "
                                 f"{exact}", ambiguous=tuple(near))
    if chosen:
        return Named(files=tuple(chosen))
    others = [prefix + n for n in names if normal_stem(n) == stem or normal_stem(n).startswith(stem)]
    why = f"no {stem}.py or {stem}.ipynb in {inside}"
    if others:
        why += f" (found {', '.join(others[:5])}: submit the .py or .ipynb file itself)"
    elif listed_only is not None:
        why += f" (the folder holds more than {listed_only} entries; only the first were looked at)"
    return Named(problem=why)


def candidates(stem: str, names: Sequence[str], folders: Collection[str] = ()) -> tuple[str, ...]:
    """Every name that could be `stem`'s, where `named` found several (each is graded, the better
    counts): () when more than CANDIDATES_GRADED (left ambiguous)."""
    near = [n for suffix in SUFFIXES for n in near_misses(stem, names, suffix, folders)]
    return () if len(near) > CANDIDATES_GRADED else tuple(near)


def the_better(stem: str, graded: Sequence[Graded]) -> tuple[int, str]:
    """Of the files that could each be `stem`'s, all graded: which counts (its index) and the note.
    On a tie, a file whose every check is unanswered (an untouched stub) never beats one that
    answered or broke (the student's work, its error named); then the exact name; then the first."""
    exact = {f"{stem}{suffix}" for suffix in SUFFIXES}
    best = max(range(len(graded)), key=lambda i: (graded[i].score, not graded[i].untouched,
                                                   graded[i].filename in exact, -i))
    scores = ", ".join(f"{g.filename} {g.score:g}/{g.max_score:g}" for g in graded)
    return best, (f"several files could be {stem}'s: all were graded ({scores}); the better, "
                  f"{graded[best].filename}, counts; keep one and name it {stem}.py or {stem}.ipynb")


# ---------------------------------------------------------------- another exercise an exercise imports
#
# `from attention import softmax` in causal_mask loads what Python loads, in the student's Jupyter
# kernel as anywhere: attention.py beside it, named exactly, whatever the grader counts as the
# attention exercise. check.py runs that file; the grader gives a correct attention. Where that
# file is the untouched stub (or absent) while the work is in another file, both say so, in one
# sentence with the fix.

def imported_from(source: str, sibling: str, parse: Callable[[str], ast.Module] = locked_parse) -> list[str]:
    """The names a file imports from `sibling` (`from attention import softmax`), anywhere in it;
    [sibling] for `import attention`; [] when it does not import it."""
    return imports_of(source, (sibling,), parse).get(sibling, [])


def imports_of(source: str, modules: Collection[str],
               parse: Callable[[str], ast.Module] = locked_parse) -> dict[str, list[str]]:
    """imported_from for each of `modules` the file imports, in one walk of its tree."""
    if source.isascii() and not any(module in source for module in modules):
        return {}        # no import names them (a non-ASCII name may be one, normalised: walked)
    try:
        tree = parse(source)
    except (SyntaxError, ValueError, RecursionError, MemoryError):
        return {}
    wanted = set(modules)
    names: dict[str, list[str]] = {}
    for node in statements(tree):
        if isinstance(node, ast.ImportFrom) and node.module in wanted and not node.level:
            names.setdefault(node.module, []).extend(alias.name for alias in node.names)
        elif isinstance(node, ast.Import):
            for alias in node.names:
                if alias.name in wanted:
                    names.setdefault(alias.name, []).append(alias.name)
    return {module: list(dict.fromkeys(found)) for module, found in names.items()}


def imported_stub(importer: str, sibling: str, imported: Sequence[str], py_state: str,
                  work_in: Sequence[str]) -> str | None:
    """The sentence for `importer` (a file name) importing `imported` from `sibling`.py, which is
    `py_state` ("work", "stub" or "missing"), while `work_in` (file names: the one that counts for
    the sibling, or each of several near misses that holds work) holds the sibling's work; None
    when the import loads the work."""
    work = [name for name in work_in if name != f"{sibling}.py"]
    if py_state == "work" or not work:
        return None
    what = " and ".join(imported) or sibling
    state = "which is still the stub" if py_state == "stub" else "and there is no such file"
    notebooks = [name for name in work if name.lower().endswith(".ipynb")]
    download = (f"download it as {sibling}.py (Jupyter: File > Download as > Python; JupyterLab: File > Save and "
                f"Export Notebook As > Executable Script) or run `jupyter nbconvert --to script {notebooks[0]}` "
                f"beside it") if notebooks else ""
    if len(work) == 1:
        fix = download or f"rename it {sibling}.py"
    elif not notebooks:
        fix = f"keep one and name it {sibling}.py"
    else:
        fix = f"keep one: a .py file named {sibling}.py, or a notebook downloaded as {sibling}.py"
    listed = ", ".join(work[:-1]) + " and " + work[-1] if len(work) > 1 else work[0]
    return f"{importer} imports {what} from {sibling}.py, {state}; your work is in {listed}: {fix}"
