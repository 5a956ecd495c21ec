"""Child side: an exception raised by student code -> a plain `ErrorInfo` dict and a sentence.

The grader rebuilds `outcome.ErrorInfo` from the dict and checks every field again.
Loaded inside the zygote from the judge's folder, and in check.py's child: standard library only.
"""

from __future__ import annotations

import linecache
import re
from typing import Iterable

TEXT_MAX = 500


def type_name(x) -> str:
    try:
        name = type.__dict__["__qualname__"].__get__(type(x))
    except Exception:  # noqa: BLE001
        name = "an object"
    return str(name)[:80]


def text_of(err: BaseException) -> str:
    try:
        text = str(err)
    except BaseException:  # noqa: BLE001 - a hostile __str__
        text = "<the exception could not be printed>"
    return text if len(text) <= TEXT_MAX else text[:TEXT_MAX - 3] + "..."


def _safe_str(value) -> str:
    return value if type(value) is str else ""


def error_info(err: BaseException, files: dict, at_import: bool = False) -> dict:
    """`files`: the student's filenames (as compiled) -> notebook cell number or None."""
    text = text_of(err)
    if isinstance(err, SyntaxError) and type(err.msg) is str:
        text = err.msg[:TEXT_MAX]     # str() repeats the place, which the sentence adds itself
    if isinstance(err, SystemExit):
        what = "module" if at_import else "function"
        text = f"{text} (the {what} called sys.exit)" if text else f"(the {what} called sys.exit)"
    info = {"type": type_name(err), "text": text, "line": None, "function": None, "cell": None, "operation": ""}
    innermost = None
    tb = err.__traceback__
    steps = 0
    while tb is not None and steps < 10_000:
        code = tb.tb_frame.f_code
        filename = _safe_str(code.co_filename)
        if filename in files:
            info.update(line=tb.tb_lineno, function=_safe_str(code.co_name), cell=files[filename])
        innermost = (filename, tb.tb_lineno, code, tb.tb_frame.f_globals)
        tb = tb.tb_next
        steps += 1
    if isinstance(err, SyntaxError) and _safe_str(err.filename) in files and type(err.lineno) is int:
        info.update(line=err.lineno, function="<module>", cell=files[err.filename])
    if innermost is not None:
        filename, line, code, globs = innermost
        if filename in files:
            info["operation"] = linecache.getline(filename, line).strip()[:300]
        else:
            module = globs.get("__name__") if type(globs) is dict else None
            qual = _safe_str(getattr(code, "co_qualname", code.co_name))
            info["operation"] = (f"{module}.{qual}" if type(module) is str else qual)[:300]
    return info


def sentence(info: dict, display: str) -> str:
    """"ZeroDivisionError: division by zero (attention.py, line 12, in softmax)"."""
    message = f"{info['type']}: {info['text']}" if info["text"] else info["type"]
    if info["line"] is not None:
        at = f", in {info['function']}" if info["function"] not in (None, "<module>") else ""
        cell = f", cell {info['cell']}" if info["cell"] is not None else ""
        message += f" ({display}{cell}, line {info['line']}{at})"
    return message


def is_memory_error(err: BaseException) -> bool:
    if isinstance(err, MemoryError):
        return True
    if type(err).__name__ in ("RuntimeError", "OutOfMemoryError"):
        text = text_of(err).lower()
        return "can't allocate memory" in text or "not enough memory" in text or "out of memory" in text
    return False


def own_module(message: str, beside: Iterable[str], exercises: Iterable[str]) -> str:
    """Why `from helpers import scale` fails where only the exercise files are run: `message` (the
    error as said) names a module that is a file of the student's beside the exercise (`beside`:
    the names in that folder), not an exercise; "" when it names none. The grader and check.py
    add it alike (check.py refuses such an import as the grader's jail does)."""
    found = re.search(r"ModuleNotFoundError: No module named '([A-Za-z_][A-Za-z0-9_]*)'", message)
    name = found.group(1) if found else ""
    if not name or name in set(exercises) or not ({f"{name}.py", name} & set(beside)):
        return ""
    return (f"; {name}.py is a file of yours, not an exercise: only the exercise files are graded, so "
            f"{name}.py is not there when they run. Put the code you use from it into the exercise file.")
