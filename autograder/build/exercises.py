"""Generate the student exercises from the solutions: ``attnkit build [--check]``.

``solutions/<stem>.py`` is the single source of an exercise. It is a jupytext
percent-format file that is at once an importable module (the worked solution) and the
source of a teaching notebook. Solution code sits between nbgrader's markers, each alone
on its line and indented to the code::

    def softmax(x, axis=-1):
        \"\"\"...\"\"\"
        ### BEGIN SOLUTION
        ...
        ### END SOLUTION

From each solution file the build writes

* ``exercises/<stem>.py``: the student stub. Every solution region is replaced by a
  ``# TODO(<task id>): ...`` comment and ``raise NotImplementedError("<task id>: not
  implemented yet")`` at the region's indentation. A module-level region (the typed
  answers of the hand computation) becomes one ``NAME = None  # TODO(<task id>): ...`` line
  per assignment, so the rest of the file still imports.
* ``exercises/<stem>.ipynb``: the notebook of that stub (jupytext, then nbformat), with a
  python3 kernelspec, no outputs, and fixed cell ids: the same input always gives the same
  bytes.

Task ids are ``<stem>.<name>``. For a region inside a top-level ``def`` or ``class`` the
name is that def's or class's name (both regions of ``MultiHeadAttention.__init__`` and
``.forward`` belong to ``multihead.MultiHeadAttention``). A module-level region names its
task in a comment on the line above it: ``# Task: hand_computation.part_a``. The regions
are found and validated by autograder/build/regions.py; this module writes what is made from them.

``build(kit_root, check=True)`` writes nothing and returns the files that are out of
date; the tests use it to catch a solution edited without a rebuild.

The build never overwrites (or deletes) an exercise file someone edited by hand, unless told to
(``force=True``, ``attnkit build --force``). It knows a file was edited because it keeps the
sha256 of every file it writes in ``exercises/.attnkit-build.json``: a file whose bytes hash to
something else was changed since. (Comparing with what the previous solutions would give needs
those solutions; a hash of what was written needs nothing but the file.) A file the manifest does
not know and the build would change counts as edited too.
"""

from __future__ import annotations

import argparse
import ast
import hashlib
import io
import json
import sys
import tokenize
from pathlib import Path

# The solution files' regions (re-exported: the build's vocabulary for its callers).
from autograder.judge import syntax
from autograder.build.regions import (BEGIN, END, BuildError, Region, check_imports, parse_python,  # noqa: F401
                                parse_regions)

SOLUTIONS_DIR = "solutions"
EXERCISES_DIR = "exercises"

KERNELSPEC = {"display_name": "Python 3", "language": "python", "name": "python3"}

# The one line a stub adds: said to the student it is for. Where it was made from is the
# manifest's business (MANIFEST), never the student's file's.
_STUDENT_NOTE = "This file is yours: fill in every TODO."
MANIFEST = ".attnkit-build.json"     # in exercises/: the sha256 of each file the build last wrote

# Cell metadata jupytext adds to remember blank lines of the text form; meaningless in a notebook.
_JUPYTEXT_CELL_KEYS = ("lines_to_next_cell", "lines_to_end_of_cell_marker", "cell_marker")


# --------------------------------------------------------------------------- stubs


def module_level_stub(lines: list[str], region: Region, filename: str) -> list[str]:
    """``NAME = None  # TODO(task): hint`` for every assignment of a module-level region."""
    body = "\n".join(lines[region.begin: region.end - 1]) + "\n"
    offset = region.begin  # body line 1 is file line begin + 1
    try:
        tree = syntax.parse(body)
    except SyntaxError as err:
        raise BuildError(filename, (err.lineno or 1) + offset, f"syntax error: {err.msg}") from None
    comments: dict[int, str] = {}
    for tok in tokenize.generate_tokens(io.StringIO(body).readline):
        if tok.type == tokenize.COMMENT:
            comments[tok.start[0]] = tok.string.lstrip("#").strip()
    out: list[str] = []
    for node in tree.body:
        if not (isinstance(node, ast.Assign) and len(node.targets) == 1 and isinstance(node.targets[0], ast.Name)):
            raise BuildError(filename, node.lineno + offset,
                             "a module-level solution region may hold only 'NAME = value' assignments")
        hint = comments.get(node.lineno, "fill in your answer")
        out.append(f"{node.targets[0].id} = None  # TODO({region.task}): {hint}")
    if not out:
        raise BuildError(filename, region.begin, "a module-level solution region holds no assignment")
    return out


def _function_stub(region: Region, stem: str = "", module_file: bool = False) -> list[str]:
    name = region.task.split(".", 1)[1]
    what = "" if region.where == name else f"{region.where.split('.', 1)[-1]} - "
    # Another exercise's `from <stem> import ...` loads the .py file, in Jupyter too: its stub says
    # where work done in the notebook has to go to be imported.
    where = (f" in {stem}.py; work done in {stem}.ipynb is imported only once downloaded as {stem}.py"
             if module_file else "")
    return [
        f"{region.indent}# TODO({region.task}): {what}replace this comment and the raise below with your code.",
        f'{region.indent}raise NotImplementedError("{region.task}: not implemented yet{where}")',
    ]


def _after_header(lines: list[str]) -> int:
    """Index of the first line after the jupytext YAML header (0 when there is none)."""
    if lines and lines[0].strip() == "# ---":
        for index in range(1, len(lines)):
            if lines[index].strip() == "# ---":
                return index + 1
    return 0


def make_stub(text: str, filename: str, stem: str, module_file: bool = False) -> str:
    """The student stub of one solution file (``filename``: where errors say the solution is);
    `module_file`: the .py stub, whose not-implemented text says where a notebook's work must go."""
    regions = parse_regions(text, filename, stem)  # markers first: their errors are the most precise
    check_imports(parse_python(text, filename), filename)
    lines = text.splitlines()
    replaced: dict[int, list[str]] = {}  # first 0-based line index -> replacement; skipped lines map to []
    for region in regions:
        first = (region.task_line or region.begin) - 1
        stub = module_level_stub(lines, region, filename) if region.module_level else \
            _function_stub(region, stem, module_file)
        replaced[first] = stub
        for index in range(first + 1, region.end):
            replaced[index] = []
    out: list[str] = []
    header_end = _after_header(lines)
    for index, line in enumerate(lines):
        if index == header_end:
            out.append("# " + _STUDENT_NOTE)
            if line.strip():
                out.append("")
        if index in replaced:
            out.extend(replaced[index])
        else:
            out.append(line)
    stub = "\n".join(out).rstrip("\n") + "\n"
    parse_python(stub, f"{filename} (generated stub)")
    return stub


def make_solution(text: str, filename: str, stem: str) -> str:
    """The solution file without markers and ``# Task:`` lines: the completed exercise."""
    regions = parse_regions(text, filename, stem)
    drop = {r.begin - 1 for r in regions} | {r.end - 1 for r in regions} | \
        {r.task_line - 1 for r in regions if r.task_line}
    lines = [line for index, line in enumerate(text.splitlines()) if index not in drop]
    return "\n".join(lines).rstrip("\n") + "\n"


# --------------------------------------------------------------------------- notebooks


def to_notebook(py_text: str, stem: str) -> str:
    """The ipynb text of a percent-format file: python3 kernel, no outputs, fixed ids. A student
    gets it: nothing in it says how the kit made it."""
    import jupytext
    import nbformat

    notebook = jupytext.reads(py_text, fmt="py:percent")
    notebook.metadata = nbformat.from_dict({
        "kernelspec": dict(KERNELSPEC),
        "language_info": {"name": "python"},
    })
    for index, cell in enumerate(notebook.cells):
        cell["id"] = f"{stem}-{index:02d}"
        for key in _JUPYTEXT_CELL_KEYS:
            cell.metadata.pop(key, None)
        if cell.cell_type == "code":
            cell.outputs = []
            cell.execution_count = None
    nbformat.validate(notebook)
    text = nbformat.writes(notebook, version=4)
    return text if text.endswith("\n") else text + "\n"


# --------------------------------------------------------------------------- build


def solution_files(kit_root: Path) -> list[Path]:
    folder = Path(kit_root) / SOLUTIONS_DIR
    return sorted(p for p in folder.glob("*.py") if not p.name.startswith("_"))


def generate(kit_root: Path) -> dict[Path, str]:
    """Every generated file of the kit and its content (nothing is written)."""
    kit_root = Path(kit_root)
    outputs: dict[Path, str] = {}
    for path in solution_files(kit_root):
        source = f"{SOLUTIONS_DIR}/{path.name}"
        text = path.read_text(encoding="utf-8")
        outputs[kit_root / EXERCISES_DIR / f"{path.stem}.py"] = make_stub(text, source, path.stem, module_file=True)
        outputs[kit_root / EXERCISES_DIR / f"{path.stem}.ipynb"] = to_notebook(make_stub(text, source, path.stem),
                                                                             path.stem)
    return outputs


def _stale(kit_root: Path, outputs: dict[Path, str]) -> list[Path]:
    """Exercises the build wrote (its manifest names them) whose solution is gone."""
    folder = kit_root / EXERCISES_DIR
    made = {path.name for path in outputs}
    return sorted(folder / name for name in _written_hashes(kit_root)
                  if name not in made and (folder / name).is_file())


def build(kit_root: Path, check: bool = False, force: bool = False) -> list[Path]:
    """Regenerate ``exercises/`` from ``solutions/``; return the files changed.

    With ``check=True`` nothing is written and the returned files are those that would
    change (out of date, missing, or generated from a solution that no longer exists).
    A file edited since the build wrote it is a BuildError naming it, unless ``force``.
    """
    kit_root = Path(kit_root)
    outputs = generate(kit_root)
    changed = [path for path, content in outputs.items()
               if not (path.is_file() and path.read_bytes() == content.encode("utf-8"))]
    stale = _stale(kit_root, outputs)
    if check:
        return sorted(changed + stale)
    written = _written_hashes(kit_root)
    edited = [p for p in changed + stale if p.is_file() and _sha256(p.read_bytes()) != written.get(p.name)]
    if edited and not force:
        names = ", ".join(f"{EXERCISES_DIR}/{p.name}" for p in sorted(edited))
        raise BuildError(names, None, f"edited since `attnkit build` wrote {'them' if len(edited) > 1 else 'it'}; "
                         f"the build would overwrite the edits. Make them in {SOLUTIONS_DIR}/ (the single "
                         f"source), or run `attnkit build --force` to overwrite them")
    for path in changed:
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_bytes(outputs[path].encode("utf-8"))
    for path in stale:
        path.unlink()
    _write_manifest(kit_root, outputs)
    return sorted(changed + stale)


def _sha256(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


def _written_hashes(kit_root: Path) -> dict[str, str]:
    """File name -> sha256 of what the last build wrote ({} before the first build)."""
    try:
        recorded = json.loads((kit_root / EXERCISES_DIR / MANIFEST).read_text(encoding="utf-8"))["sha256"]
    except (OSError, ValueError, KeyError, TypeError):
        return {}
    return recorded if isinstance(recorded, dict) else {}


def _write_manifest(kit_root: Path, outputs: dict[Path, str]) -> None:
    hashes = {path.name: _sha256(content.encode("utf-8")) for path, content in sorted(outputs.items())}
    text = json.dumps({"written_by": "attnkit build (do not edit)", "sha256": hashes}, indent=1) + "\n"
    manifest = kit_root / EXERCISES_DIR / MANIFEST
    if not (manifest.is_file() and manifest.read_text(encoding="utf-8") == text):
        manifest.parent.mkdir(parents=True, exist_ok=True)
        manifest.write_text(text, encoding="utf-8")


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="attnkit build",
                                     description="Generate exercises/ (stubs and notebooks) from solutions/.")
    parser.add_argument("--check", action="store_true",
                        help="write nothing; exit 1 if exercises/ is out of date")
    parser.add_argument("--force", action="store_true",
                        help="also overwrite exercise files edited since the last build (their edits are lost)")
    parser.add_argument("--root", type=Path, default=Path(__file__).resolve().parents[2],
                        help="the kit's root folder (default: the one holding this package)")
    args = parser.parse_args(argv)
    try:
        changed = build(args.root, check=args.check, force=args.force)
    except BuildError as err:
        print(f"attnkit build: {err}", file=sys.stderr)
        return 2
    root = args.root.resolve()
    for path in changed:
        try:
            shown = path.resolve().relative_to(root)
        except ValueError:
            shown = path
        print(f"{'out of date' if args.check else 'wrote'}: {shown}")
    if args.check:
        if changed:
            print("exercises/ is out of date: run `attnkit build`", file=sys.stderr)
            return 1
        print("exercises/ is up to date")
    elif not changed:
        print("exercises/ was already up to date")
    return 0


if __name__ == "__main__":
    sys.exit(main())
