"""Zygote side: the import path of the zygote and of its children (loaded by the zygote from its
file path: standard library only, nothing of the kit)."""

from __future__ import annotations

import os
import sys


def _owner(obj) -> str:
    parts = [getattr(obj, "__module__", None), getattr(type(obj), "__module__", None),
             getattr(obj, "__qualname__", None)]
    return " ".join(str(p) for p in parts if p)


def _inside(path: str, root: str) -> bool:
    try:
        path, root = os.path.realpath(path), os.path.realpath(root)
    except (OSError, ValueError):
        return False
    return path == root or path.startswith(root.rstrip(os.sep) + os.sep)


def take_grader_path(config: dict) -> None:
    """The grader's view of its interpreter (sandbox/interpreter.py), taken as `site` would have
    made it: its import path (.pth files read, a venv's or the user's site-packages included,
    without the current folder or $PYTHONPATH) and its prefixes (a venv's)."""
    global _GRADER_ROOTS
    grader_path = [e for e in config.get("import_path") or [] if isinstance(e, str) and e]
    if grader_path:
        sys.path[:] = list(dict.fromkeys(grader_path))
    if isinstance(config.get("prefix"), str) and isinstance(config.get("exec_prefix"), str):
        sys.prefix, sys.exec_prefix = config["prefix"], config["exec_prefix"]
    prefixes = [p for p in config.get("prefixes") or [] if isinstance(p, str) and p]
    _GRADER_ROOTS = {os.path.realpath(p) for p in [*prefixes, *(config.get("site_dirs") or [])]
                     if isinstance(p, str) and p}


_GRADER_ROOTS: set = set()


def _prefixes() -> set:
    """Where this interpreter's own files lie: its prefixes and the grader's site folders."""
    own = {os.path.realpath(p) for p in (sys.prefix, sys.base_prefix, sys.exec_prefix, sys.base_exec_prefix)}
    return own | _GRADER_ROOTS


def strip_kit_from_imports() -> None:
    """Removes editable-install finders and path entries of the kit (and anything editable)."""
    sys.meta_path[:] = [f for f in sys.meta_path if "__editable__" not in _owner(f)]
    sys.path_hooks[:] = [h for h in sys.path_hooks if "__editable__" not in _owner(h)]
    for name in list(sys.modules):
        if name.startswith("__editable__"):
            del sys.modules[name]
    sys.path_importer_cache.clear()


def child_sys_path(kit_root: str) -> list:
    """The zygote's import path for its children, minus the kit's checkout: an entry inside the
    kit's folder is kept only where it is also inside a prefix or site folder (a venv made in the
    checkout, or the kit installed into site-packages, where the import guard blocks it)."""
    roots = _prefixes()
    keep = []
    for entry in sys.path:
        if not entry or "__editable__" in entry:
            continue
        if _inside(entry, kit_root) and not any(_inside(entry, p) for p in roots):
            continue
        keep.append(entry)
    return keep
