"""Grader side: what the sandbox's interpreter must see of this one, worked out here, where `site`
ran. A zygote starts isolated (-I); in a virtual environment, a
`--user` install or a distribution's layout, only the grader's own `site` knows where the
packages are, so the grader hands its answer over instead of the zygote guessing it.
"""

from __future__ import annotations

import os
import site
import sys

from autograder.sandbox.outcome import SandboxError


def _real(path: str) -> str:
    try:
        return os.path.realpath(path)
    except (OSError, ValueError):
        return ""


def prefixes() -> list[str]:
    """This interpreter's prefixes as `site` set them (a venv's own, then the base's)."""
    return list(dict.fromkeys(_real(p) for p in (sys.prefix, sys.exec_prefix, sys.base_prefix,
                                                 sys.base_exec_prefix) if p))


def site_dirs() -> list[str]:
    """The site-packages folders `site` added, the user's included where it is enabled."""
    dirs = list(getattr(site, "getsitepackages", lambda: [])())
    if site.ENABLE_USER_SITE:
        dirs.append(site.getusersitepackages())
    return list(dict.fromkeys(r for r in map(_real, dirs) if r and os.path.isdir(r)))


def _not_for_the_sandbox() -> set[str]:
    """Entries on this path only because of how the grader was started: the current folder (it
    may be a class of submissions), the script's own folder, and $PYTHONPATH."""
    dropped = {"", _real(os.getcwd())}
    if sys.path and sys.path[0]:
        dropped.add(_real(sys.path[0]))
    dropped.update(_real(p) for p in os.environ.get("PYTHONPATH", "").split(os.pathsep) if p)
    return dropped


def import_path() -> list[str]:
    """The grader's sys.path as the sandbox should have it: what `site` and the .pth files made,
    without the entries that came from the current folder, the script or $PYTHONPATH (unless
    such an entry is also a prefix's or a site folder)."""
    keep_anyway = set(site_dirs())
    roots = prefixes()
    dropped = _not_for_the_sandbox()
    path = []
    for entry in sys.path:
        if not isinstance(entry, str) or not entry:
            continue
        real = _real(entry)
        if not real or not os.path.exists(real):
            continue
        inside_root = any(real == r or real.startswith(r.rstrip(os.sep) + os.sep) for r in roots)
        if real in dropped and real not in keep_anyway and not inside_root:
            continue
        path.append(entry)
    return list(dict.fromkeys(path))


def for_zygote() -> dict:
    """The zygote's config keys that carry this interpreter's view (inside/import_path.py)."""
    return {"import_path": import_path(), "prefix": sys.prefix, "exec_prefix": sys.exec_prefix,
            "prefixes": prefixes(), "site_dirs": site_dirs()}


TORCH_CPU_INDEX = "https://download.pytorch.org/whl/cpu"


def install_command(module: str) -> str:
    """The one line that installs `module` for this interpreter (torch's CPU build for torch:
    the default index's wheel is the CUDA build on most systems, gigabytes more)."""
    python = sys.executable or "python"
    quoted = f'"{python}"' if " " in python else python
    if module == "torch":
        return f"{quoted} -m pip install torch --index-url {TORCH_CPU_INDEX}"
    return f"{quoted} -m pip install {module}"


class MissingModule(SandboxError):
    """The sandbox's interpreter cannot import a module the exercises need."""

    def __init__(self, module: str, error: str):
        self.module, self.error = module, error
        super().__init__(missing_sentence(module, error))


def missing_sentence(module: str, error: str) -> str:
    """One sentence: what is missing, where, and the fix."""
    import importlib.util

    try:
        here = importlib.util.find_spec(module)
    except (ImportError, ValueError):
        here = None
    where = sys.executable or "this Python"
    if here is not None and here.origin:
        return (f"the sandbox cannot import {module} although {where} finds it at {here.origin} ({error}); "
                f"run `attnkit doctor` and report what it prints")
    return f"{module} is not installed for {where} ({error}); install it with: {install_command(module)}"
