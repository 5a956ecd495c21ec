"""Child side: what a submission may import.

- The kit's own packages (`autograder`, `reference`, `solutions`, ...) are refused.
- A sibling stem the caller provides (`from attention import softmax` in causal_mask.py)
  is a *proxy* module: each function in it sends a request over the session socket and
  the grader answers with its own correct implementation. No source or bytecode of the
  kit's implementation ever exists in the child: there is nothing to read through a
  loader, `__code__`, `inspect`, `gc` or a file.
- Any other sibling stem is refused: each exercise is graded on its own.

Loaded inside the zygote from its file path: standard library only.
"""

from __future__ import annotations

import importlib.abc
import importlib.machinery
import importlib.util
import sys
import types

KIT_PACKAGES = frozenset({"autograder", "reference", "solutions", "exercises", "attnkit"})
KIT_MESSAGE = "the kit's own code is not available to submissions"
PRIVATE_PREFIX = "_attnkit_sandbox"


class ProvidedFunction:
    """One function of a kit-provided module: a call goes to the grader and back."""

    def __init__(self, stem: str, name: str, call):
        self.__name__ = self.__qualname__ = name
        self.__module__ = stem
        self.__doc__ = f"The kit's {stem}.{name}, computed by the grader."
        self._call = call

    def __call__(self, *args, **kwargs):
        return self._call(self.__module__, self.__name__, args, kwargs)

    def __repr__(self) -> str:
        return f"<kit-provided function {self.__module__}.{self.__name__}>"


def provided_module(stem: str, names: dict, call) -> types.ModuleType:
    """`names`: name -> None for a function answered by the grader, or a plain value (a constant)."""
    module = types.ModuleType(stem, f"The kit's correct {stem} (answered by the grader).")
    for name, value in names.items():
        setattr(module, name, ProvidedFunction(stem, name, call) if value is None else value)
    module.__all__ = sorted(names)
    return module


class _Loader(importlib.abc.Loader):
    def __init__(self, module: types.ModuleType):
        self._module = module

    def create_module(self, spec):
        return self._module

    def exec_module(self, module) -> None:
        pass


class ImportGuard(importlib.abc.MetaPathFinder):
    def __init__(self, stem: str, filename: str, provided: dict, stems, blocked, call):
        self.stem, self.filename = stem, filename
        self.provided = {s: provided_module(s, names, call) for s, names in provided.items()}
        self.stems = frozenset(stems)
        self.blocked = KIT_PACKAGES | frozenset(blocked)

    def find_spec(self, fullname, path=None, target=None):
        top = fullname.partition(".")[0]
        if top in self.blocked or top.startswith("__editable__") or top.startswith(PRIVATE_PREFIX):
            raise ImportError(KIT_MESSAGE, name=fullname)
        if top in self.stems and top != self.stem:
            if top not in self.provided:
                raise ImportError(f"{self.filename} cannot import {top} here; each exercise is graded on its own",
                                  name=fullname)
            if fullname == top:
                return importlib.util.spec_from_loader(fullname, _Loader(self.provided[top]), origin="kit-provided")
            raise ImportError(f"{fullname} is not available here", name=fullname)
        return None


def install(guard: ImportGuard) -> None:
    sys.meta_path.insert(0, guard)
    for name in list(sys.modules):
        if name.startswith(PRIVATE_PREFIX):
            del sys.modules[name]
