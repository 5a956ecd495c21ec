"""Standard virtual environments for the tests, made as users make them (`python -m venv`, no
system site-packages) and filled without a network install: the running interpreter's packages
are hard-linked into the new venv's own site-packages (copied where a link cannot be made), so
every module the sandbox imports lives inside that venv, at that venv's path.

The kit is either on the venv's path as a checkout (`kit="checkout"`, what `pip install -e`
does) or installed into its site-packages from a wheel (`kit="installed"`, what `pip install .`
does), or absent (`kit=None`).
"""

from __future__ import annotations

import os
import shutil
import site
import subprocess
import sys
from pathlib import Path

KIT = Path(__file__).resolve().parents[1]
# What the running environment holds of the kit itself: never carried into a test's venv.
KIT_ENTRIES = ("__editable__", "attnkit", "_attnkit", "autograder", "reference")


def site_folders() -> list[Path]:
    """Where the running interpreter's packages are (its venv's, the system's, the user's)."""
    folders = [Path(p) for p in site.getsitepackages()]
    if site.ENABLE_USER_SITE and os.path.isdir(site.getusersitepackages()):
        folders.append(Path(site.getusersitepackages()))
    return [f for f in dict.fromkeys(folders) if f.is_dir()]


def _link_or_copy(src: str, dst: str) -> None:
    try:
        os.link(src, dst)
    except OSError:
        shutil.copy2(src, dst)


def _belongs_to(name: str, modules: tuple[str, ...]) -> bool:
    base = name.split("-", 1)[0].split(".", 1)[0].lower()
    return base in modules


def standard_venv(where: Path, *, without: tuple[str, ...] = (), kit: str | None = "checkout",
                  wheel: Path | None = None, interpreter: str = sys.executable) -> Path:
    """A `python -m venv` at `where` (no system site-packages) holding this environment's
    packages but `without` (top-level module names, with their dist-info); returns its python.
    `interpreter`: another Python of the same minor version (the packages' binaries are its too)."""
    subprocess.run([interpreter, "-m", "venv", "--without-pip", str(where)], check=True, capture_output=True)
    python = where / "bin" / "python"
    target = Path(subprocess.run([str(python), "-c", "import sysconfig; print(sysconfig.get_paths()['purelib'])"],
                                 check=True, capture_output=True, text=True).stdout.strip())
    skip = tuple(m.lower() for m in without) + ("torchgen", "functorch") * ("torch" in without)
    for folder in site_folders():
        for entry in folder.iterdir():
            name = entry.name
            if name == "__pycache__" or name.startswith(KIT_ENTRIES) or _belongs_to(name, skip) \
                    or (target / name).exists():
                continue
            if entry.is_dir() and not entry.is_symlink():
                shutil.copytree(entry, target / name, symlinks=True, copy_function=_link_or_copy)
            else:
                _link_or_copy(str(entry), str(target / name))
    if kit == "checkout":
        (target / "attnkit_checkout.pth").write_text(str(KIT) + "\n")
    elif kit == "installed":
        assert wheel is not None, "kit='installed' needs the kit's wheel"
        subprocess.run([sys.executable, "-m", "pip", "--python", str(python), "install", "-q", "--no-deps",
                        "--no-index", str(wheel)], check=True, capture_output=True)
    return python


def build_wheel(out: Path) -> Path:
    """The kit's wheel, as `pip install .` would build it."""
    subprocess.run([sys.executable, "-m", "pip", "wheel", "-q", "--no-deps", "-w", str(out), str(KIT)],
                   check=True, capture_output=True, timeout=600)
    return next(out.glob("attnkit-*.whl"))


def where_imported(python: Path, modules: tuple[str, ...]) -> dict[str, str]:
    code = "import importlib, sys\nfor m in sys.argv[1:]:\n    print(m, importlib.import_module(m).__file__)"
    out = subprocess.run([str(python), "-c", code, *modules], check=True, capture_output=True, text=True,
                         cwd=str(python.parent)).stdout
    return dict(line.split(" ", 1) for line in out.splitlines())
