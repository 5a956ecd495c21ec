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


def take_grader_path(grader_path: list) -> None:
    """Started without `site` (-S): the grader's import path, as its `site` made it (.pth files
    read), without what isolation (-I) leaves out -- the current folder, $PYTHONPATH and the user's
    site-packages: the entries under this interpreter's prefixes. `site`'s builtins (exit, quit,
    help, copyright) are set as `site` sets them, for the student code that calls them."""
    import site

    prefixes = _prefixes()
    sys.path[:] = [entry for entry in dict.fromkeys([*sys.path, *grader_path])
                   if isinstance(entry, str) and entry and any(_inside(entry, p) for p in prefixes)]
    site.setquit()
    site.setcopyright()
    site.sethelper()


def _prefixes() -> set:
    return {os.path.realpath(p) for p in (sys.prefix, sys.base_prefix, sys.exec_prefix, sys.base_exec_prefix)}


def strip_kit_from_imports() -> None:
    """Removes editable-install finders and path entries of the kit (and anything editable)."""
    sys.meta_path[:] = [f for f in sys.meta_path if "__editable__" not in _owner(f)]
    sys.path_hooks[:] = [h for h in sys.path_hooks if "__editable__" not in _owner(h)]
    for name in list(sys.modules):
        if name.startswith("__editable__"):
            del sys.modules[name]
    sys.path_importer_cache.clear()


def child_sys_path(kit_root: str) -> list:
    """Stdlib and site-packages entries of this interpreter: entries under its prefixes, minus
    the kit's folder (unless the kit lives in site-packages, where the import guard blocks it)."""
    prefixes = _prefixes()
    keep = []
    for entry in sys.path:
        if not entry or "__editable__" in entry:
            continue
        if not any(_inside(entry, p) for p in prefixes):
            continue
        if _inside(entry, kit_root) and not any(_inside(kit_root, p) for p in prefixes):
            continue
        keep.append(entry)
    return keep
