"""check.py's child: what an import in your file finds besides your other exercises
(unjailed_siblings.py): a module of your own beside it, and a stand-in for a package that is not
installed (torch), whose names can be used in definitions but not called.
"""

from __future__ import annotations

import importlib.util
import sys
import types
from pathlib import Path

if __package__:               # in the kit
    from . import unjailed
else:                         # beside check.py (or run as the child: its folder is on the path)
    import unjailed


KIT_FILES = "attnkit_"     # what the kit ships beside a notebook (attnkit_variant.py, attnkit_tests.py)


class OwnModules:
    """A module of your own beside your file (`from helpers import scale`, helpers.py) is not
    imported: the grader runs the exercise files only, where it is not there (judge/errors.py
    own_module says so, in both)."""

    def __init__(self, folder: Path):
        self.folder = folder

    def find_spec(self, name, path=None, target=None):
        if path is not None or name in unjailed.exercise_stems() or name.startswith(KIT_FILES):
            return None
        if (self.folder / f"{name}.py").is_file() or (self.folder / name).is_dir():
            raise ModuleNotFoundError(f"No module named {name!r}", name=name)
        return None


class _AbsentMeta(type):
    """A name of a package that is not installed: it can be named, subclassed and annotated with
    (`class MultiHeadSelfAttention(nn.Module)` still defines the class), never used."""

    def __getattr__(cls, name):
        if name.startswith("__"):
            raise AttributeError(name)
        return _absent(cls.package, f"{cls.__name__}.{name}")

    def __call__(cls, *args, **kwargs):
        raise ModuleNotFoundError(f"No module named {cls.package!r}", name=cls.package)


def _absent(package: str, name: str) -> type:
    return _AbsentMeta(name, (), {"package": package})


class _AbsentModule(types.ModuleType):
    def __getattr__(self, name):
        if name.startswith("__"):
            raise AttributeError(name)
        return _absent(self.__name__.split(".")[0], f"{self.__name__}.{name}")


class _AbsentFinder:
    """Imports of a package that is not installed give stand-ins, so the checks that do not use it
    still run (multihead's numpy functions beside its torch module); a check that uses it is told
    `missing_package`'s sentence."""

    def __init__(self, package: str):
        self.package = package

    def find_spec(self, fullname, path=None, target=None):
        if fullname != self.package and not fullname.startswith(self.package + "."):
            return None
        return importlib.machinery.ModuleSpec(fullname, self, is_package=True)

    def create_module(self, spec):
        module = _AbsentModule(spec.name)
        module.__path__ = []
        return module

    def exec_module(self, module) -> None:
        pass


def stand_in_for_absent(packages=("torch",)) -> None:
    """Stand-ins for those of `packages` that are not installed (check.py only: the grader has them)."""
    for package in packages:
        if importlib.util.find_spec(package) is None:
            sys.meta_path.append(_AbsentFinder(package))
