"""Zygotes started before the grader has imported itself.

A zygote's warm-up (numpy: ~0.3 s, matplotlib: ~0.8 s, torch: ~2.5 s) is the longest wait of a
cold `attnkit check`. Started as the command's first act -- before the grader imports pydantic,
rich, numpy and its checks -- it runs on the second core while those imports run on the first,
and the Sandbox made later adopts it instead of starting its own.

This module must stay cheap to import (no numpy, nothing of the kit but the zygote process):
it is imported before everything else.
"""

from __future__ import annotations

import atexit
import json
import os
import re
from pathlib import Path

from autograder.intake import SOURCE_SUFFIXES
from autograder.sandbox.outcome import Limits
from autograder.sandbox.zygote_process import _Zygote, next_private_uid

_MAX_SCAN_BYTES = 2_000_000       # a bigger file is the loader's problem, not the warm-up's

_waiting: list[_Zygote] = []     # started early, not yet adopted by a Sandbox


def needs_of(texts: list[str]) -> tuple[bool, bool]:
    """(torch, matplotlib): which zygote a source (a file, or a notebook's cells) needs."""
    from autograder.intake.syntax import imports_among

    imported = set().union(*(imports_among(text, ("torch", "matplotlib")) for text in texts))
    return "torch" in imported, "matplotlib" in imported


def zygotes_for(needs: set[tuple[bool, bool]]) -> list[tuple[bool, bool]]:
    """The zygotes to start for these needs: always the numpy-only one (most stems need it), and
    one torch zygote -- with matplotlib, if any file needs both, for it serves torch-only files too
    (Zygotes.serving): one torch start, not two. The longest warm-up first (torch, then
    matplotlib): it is the one a check of every exercise ends up waiting for."""
    wanted = set(needs) | {(False, False)}
    if (True, True) in wanted:
        wanted.discard((True, False))
    return sorted(wanted, reverse=True)


def private_uid_wanted(limits: Limits) -> bool:
    """As root (unless told not to drop privileges): zygotes and children run as a private uid."""
    return limits.drop_privileges and os.geteuid() == 0


def zygote_config(needs: tuple[bool, bool], uid: int | None, limits: Limits) -> dict:
    from autograder.speedups import on

    return {"torch": needs[0], "matplotlib": needs[1], "uid": uid,
            "jail": limits.drop_privileges or os.geteuid() != 0, "tmp_mb": limits.tmp_mb,
            **({} if on("clone") else {"fork_only": True})}


def start_for_folder(folder: Path, stems: tuple[str, ...] | None, limits: Limits, *, lean: bool = False) -> None:
    """Starts now the zygotes a submission folder's files need. The numpy-only one first, as soon as
    the folder holds a file to grade, before its files are parsed: it serves most stems, and its
    start is what a check of one exercise waits for. Then those the files' imports ask for (torch,
    matplotlib). A folder whose files are all literals needs none (and a file of literals defines no
    function: the numpy one is started early only for a file that does). `lean`: zygotes that fork
    one child per stem (a check, not a watcher): each leaves numpy.random, which only some students'
    code uses, to the child that does (inside/warm_up.py: 20 ms of its start)."""
    sources = _sources(folder, stems)
    uid = next_private_uid() if private_uid_wanted(limits) else None
    numpy_only = _leaned(zygote_config((False, False), uid, limits), lean)
    if any(_defines_code(texts) for texts in sources):
        start([numpy_only])
    needs = _needs(sources)
    if needs:
        start([_leaned(zygote_config(n, uid, limits), lean) for n in zygotes_for(needs)])
    else:
        _stop(numpy_only)


def _leaned(config: dict, lean: bool) -> dict:
    """A Sandbox adopts a lean zygote as any other (`adopt` compares the keys it asks for)."""
    return {**config, "lean": True} if lean else config


def start(configs: list[dict]) -> None:
    """Starts one zygote per config, now, without waiting for any."""
    for config in configs:
        if not any(z.config == config for z in _waiting):
            _waiting.append(_Zygote(config))


def adopt(config: dict, *, any_uid: bool) -> _Zygote | None:
    """The early zygote started with this config (with `any_uid`: whatever its private uid),
    handed over to the caller; None if there is none or it died."""
    for z in list(_waiting):
        same = all(z.config.get(k) == v for k, v in config.items() if not (any_uid and k == "uid"))
        if same:
            _waiting.remove(z)
            if z.alive():
                return z
            z.close()
    return None


def folder_needs(folder: Path, stems: tuple[str, ...] | None) -> set[tuple[bool, bool]]:
    """The zygotes a submission folder's files will need, read from their import lines (a
    notebook's code cells included). Unreadable files need nothing early: the loader reports them;
    nor does a file of literals (intake/literals.py): the grader reads it without a child."""
    return _needs(_sources(folder, stems))


def _sources(folder: Path, stems: tuple[str, ...] | None) -> list[list[str]]:
    """The texts of each file to grade in `folder` (a notebook's: its code cells), read, not parsed."""
    sources: list[list[str]] = []
    try:
        entries = list(os.scandir(folder))[:200]
    except OSError:
        return sources
    for entry in entries:
        stem, ext = os.path.splitext(entry.name)
        if ext not in SOURCE_SUFFIXES or (stems is not None and stem not in stems):
            continue
        try:
            if not entry.is_file(follow_symlinks=False) or entry.stat().st_size > _MAX_SCAN_BYTES:
                continue
            text = Path(entry.path).read_text(encoding="utf-8")
        except (OSError, UnicodeDecodeError):
            continue
        sources.append(_notebook_cells(text) if ext == ".ipynb" else [text])
    return sources


_DEFINITION = re.compile(r"^(?:async[ \t]+)?def[ \t]|^class[ \t]", re.MULTILINE)


def _defines_code(texts: list[str]) -> bool:
    """Whether a source has a def or class line at the margin (a `__main__` block's are indented):
    then it is no file of literals, and runs in a child (such a line inside a string only starts a
    zygote that the parse then stops)."""
    return any(_DEFINITION.search(text) for text in texts)


def _needs(sources: list[list[str]]) -> set[tuple[bool, bool]]:
    from autograder.intake.literals import inert_texts

    return {needs_of(texts) for texts in sources if inert_texts(tuple(texts)) is None}   # literals: read, not run


def _stop(config: dict) -> None:
    """Stops at once the early zygote of this config (still importing: it has no children)."""
    for z in [z for z in _waiting if z.config == config]:
        _waiting.remove(z)
        z.proc.kill()
        z.close()


def _notebook_cells(text: str) -> list[str]:
    """The code cells' sources, read loosely: load.notebook_cells is the real reader, but it
    imports the contract (and so numpy), which this module is imported before."""
    try:
        # numbers stay text: converting a long one costs time quadratic in its digits on some interpreters
        cells = json.loads(text, parse_int=str, parse_float=str).get("cells", [])
    except (ValueError, AttributeError, RecursionError):
        return []
    parts = []
    for cell in cells if isinstance(cells, list) else []:
        if isinstance(cell, dict) and cell.get("cell_type") == "code":
            source = cell.get("source", "")
            parts.append("".join(map(str, source)) if isinstance(source, list) else str(source))
    return parts


@atexit.register
def close_unadopted() -> None:
    """Stops the early zygotes no Sandbox took (the command ended before grading)."""
    while _waiting:
        _waiting.pop().close()
