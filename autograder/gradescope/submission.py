"""Where a Gradescope upload keeps its exercise files: at the top, or in one folder (a zip of
the `self_attention/` folder nbgrader released, a GitHub repository, `exercises/`).

An upload that is an archive (a zip inside the zip) is unpacked when graded (autograder.intake.lms).
Otherwise the folder holding the most of the contract's files (`attention.py`, `attention.ipynb`, ...)
is graded, the shallowest on a tie; links are never followed. What else was found is said in
a note: exercise files in another folder, and Python files or notebooks whose names the
grader does not know (a browser's `attention (1).ipynb`).
"""

from __future__ import annotations

import os
import stat
from dataclasses import dataclass
from pathlib import Path

from autograder.intake import SOURCE_SUFFIXES
from autograder.intake.archives import is_archive
from autograder.cluster.transport import contract_names

SKIPPED = {"__MACOSX", "__pycache__", ".ipynb_checkpoints", ".git", "node_modules"}
MAX_DEPTH = 3
MAX_FOLDERS = 200


@dataclass(frozen=True)
class Found:
    folder: Path
    notes: tuple[str, ...]


def find_submission(root: Path, stems: tuple[str, ...]) -> Found:
    root = Path(root)
    names = set(contract_names(stems))
    folders = list(_folders(root))
    counts = {folder: sum(1 for n in _entries(folder) if n in names) for folder in folders}
    # Most exercise files; on a tie the shallowest, then the first in name order (breadth first).
    best = max(folders, key=lambda f: (counts[f], -folders.index(f)))
    notes: list[str] = []
    if counts[best] == 0 and any(is_archive(n) for n in _entries(root)):
        best = root         # an uploaded archive: unpacked and graded (autograder.intake.staging), which says so
    elif counts[best] == 0:
        wanted = ", ".join(f"{s}.py" for s in stems)
        notes.append(f"no exercise files were found in the upload (expected {wanted}, or the same names "
                     f"as .ipynb notebooks)")
    elif best != root:
        notes.append(f"graded the files in the folder {best.relative_to(root)}/")
    others = [f for f in folders if f != best and counts[f]]
    if others:
        where = ", ".join(f"{f.relative_to(root) if f != root else 'the top'}" for f in others[:5])
        notes.append(f"exercise files elsewhere in the upload were not graded ({where})")
    unknown = sorted({n for f in folders for n in _entries(f)
                      if n.endswith(SOURCE_SUFFIXES) and n not in names and not n.startswith(".")})
    if unknown:
        shown = ", ".join(unknown[:8]) + (" ..." if len(unknown) > 8 else "")
        notes.append(f"files with names the grader does not know were ignored: {shown} "
                     f"(name each file after its exercise, e.g. attention.ipynb)")
    return Found(best, tuple(notes))


def _entries(folder: Path) -> list[str]:
    try:
        return sorted(os.listdir(folder))
    except OSError:
        return []


def _folders(root: Path):
    """The root and its folders down to MAX_DEPTH, breadth first; links and hidden folders skipped."""
    queue, seen = [root], 0
    while queue and seen < MAX_FOLDERS:
        folder = queue.pop(0)
        seen += 1
        yield folder
        if len(folder.relative_to(root).parts) >= MAX_DEPTH:
            continue
        for name in _entries(folder):
            path = folder / name
            if name.startswith(".") or name in SKIPPED:
                continue
            try:
                if stat.S_ISDIR(os.lstat(path).st_mode):
                    queue.append(path)
            except OSError:
                continue
